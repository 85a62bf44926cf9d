package nemesis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

func TestParseNamesTheBadField(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"unknown kind", `{"faults":[{"kind":"meteor","targets":["a"]}]}`, `faults[0] (meteor): field "kind": unknown fault kind "meteor"`},
		{"pause without duration", `{"faults":[{"kind":"pause","targets":["a"]}]}`, `faults[0] (pause): field "duration"`},
		{"pause without targets", `{"faults":[{"kind":"pause","duration":"1s"}]}`, `field "targets"`},
		{"bad duration", `{"faults":[{"kind":"pause","duration":"soon"}]}`, `bad duration "soon"`},
		{"unknown field", `{"faults":[{"kind":"pause","targets":["a"],"duration":"1s","colour":"red"}]}`, `unknown field "colour"`},
		{"wrong type", "{\"faults\":[\n{\"kind\":\"pause\",\"targets\":\"a\"}]}", `s.json:2: field "faults.targets"`},
		{"syntax", "{\"faults\":[\n{\"kind\":}]}", "s.json:2:"},
		{"partition with two shapes", `{"faults":[{"kind":"partition","targets":["a"],"from":["a"],"to":["b"]}]}`, "exactly one of"},
		{"one-way cut without to", `{"faults":[{"kind":"partition","from":["a"]}]}`, `"from"/"to"`},
		{"clock jump of zero", `{"faults":[{"kind":"clock-jump","targets":["a"]}]}`, `field "amount"`},
		{"trigger without f", `{"faults":[{"kind":"pause","targets":["a"],"duration":"1s","after":{"node":"a"}}]}`, `field "after"`},
		{"second fault is the bad one", `{"faults":[{"kind":"pause","targets":["a"],"duration":"1s"},{"kind":"crash"}]}`, `faults[1] (crash)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json), "s.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	s := Schedule{Faults: []Fault{
		{Kind: Pause, Targets: []string{"c1"}, Duration: Duration(12 * time.Second), After: &Trigger{Node: "c1", F: "acquire"}},
		{Kind: Partition, At: Duration(time.Second), Groups: [][]string{{"a"}, {"b", "c"}}, Duration: Duration(time.Second)},
		{Kind: ClockJump, Targets: []string{"redis"}, Amount: Duration(-30 * time.Second)},
	}}
	back, err := Parse(s.JSON(), "x")
	require.NoError(t, err)
	assert.Equal(t, s, back)
	assert.Contains(t, string(s.JSON()), `"duration": "12s"`)
}

// rig is a world with three plain nodes, a history log and a resolver.
type rig struct {
	w       *sim.World
	log     *history.Log
	a, b, c *sim.Node
}

func newRig() *rig {
	w := sim.NewWorld(sim.Config{})
	r := &rig{w: w, log: history.NewLog()}
	r.a, r.b, r.c = w.AddNode("a", sim.NodeOptions{}), w.AddNode("b", sim.NodeOptions{}), w.AddNode("c", sim.NodeOptions{})
	return r
}

func (r *rig) resolve(name string) ([]*sim.Node, error) {
	if n := r.w.Node(name); n != nil {
		return []*sim.Node{n}, nil
	}
	return nil, fmt.Errorf("unknown node %q", name)
}

func (r *rig) install(t *testing.T, faults ...Fault) {
	t.Helper()
	_, err := Install(r.w, r.log, Schedule{Faults: faults}, r.resolve)
	require.NoError(t, err)
}

func (r *rig) nemesisLog() []string {
	var out []string
	for _, e := range r.log.Events() {
		if e.Process == history.NemesisProcess {
			out = append(out, fmt.Sprintf("%v %s %s %v", time.Duration(e.Time), e.Type, e.F, e.Targets))
		}
	}
	return out
}

func TestInstallRejectsUnknownTargets(t *testing.T) {
	r := newRig()
	_, err := Install(r.w, r.log, Schedule{Faults: []Fault{{Kind: Pause, Targets: []string{"zz"}, Duration: 1}}}, r.resolve)
	assert.ErrorContains(t, err, `faults[0] (pause): unknown node "zz"`)
}

func TestOverlappingPausesResumeWhenTheLastEnds(t *testing.T) {
	r := newRig()
	r.install(t,
		Fault{Kind: Pause, At: Duration(time.Second), Duration: Duration(5 * time.Second), Targets: []string{"a"}},
		Fault{Kind: Pause, At: Duration(2 * time.Second), Duration: Duration(time.Second), Targets: []string{"a"}},
	)
	var paused []bool
	for _, at := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond, 3500 * time.Millisecond, 6500 * time.Millisecond} {
		r.w.At(at, func() { paused = append(paused, r.a.Paused()) })
	}
	r.w.Run(10 * time.Second)
	assert.Equal(t, []bool{false, true, true, false}, paused)
	assert.Len(t, r.nemesisLog(), 4)
}

func TestEveryKindStartsAndStops(t *testing.T) {
	r := newRig()
	s := time.Second
	r.install(t,
		Fault{Kind: Crash, At: Duration(s), Duration: Duration(s), Targets: []string{"a"}},
		Fault{Kind: Partition, At: Duration(s), Duration: Duration(s), Groups: [][]string{{"a"}, {"b", "c"}}},
		Fault{Kind: Partition, At: Duration(s), Duration: Duration(2 * s), From: []string{"b"}, To: []string{"c"}},
		Fault{Kind: ClockJump, At: Duration(s), Duration: Duration(s), Targets: []string{"b"}, Amount: Duration(time.Minute)},
		Fault{Kind: ClockDrift, At: Duration(s), Duration: Duration(s), Targets: []string{"c"}, Drift: 1},
		Fault{Kind: Delay, At: Duration(s), Duration: Duration(s), From: []string{"a"}, To: []string{"b"}, Amount: Duration(s)},
	)
	type snap struct {
		down, cutAB, cutBC, cutCB bool
		wallOffset                time.Duration
		drift                     float64
	}
	take := func() snap {
		net := r.w.Network()
		return snap{r.a.Down(), net.Blocked(r.a, r.b), net.Blocked(r.b, r.c), net.Blocked(r.c, r.b),
			(r.b.Wall() - sim.DefaultWallEpoch - r.b.Mono()).Round(time.Second), r.c.Drift()}
	}
	var snaps []snap
	for _, at := range []time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond, 3500 * time.Millisecond} {
		r.w.At(at, func() { snaps = append(snaps, take()) })
	}
	r.w.Run(5 * time.Second)
	assert.Equal(t, snap{true, true, true, false, time.Minute, 1}, snaps[0])
	assert.Equal(t, snap{false, false, true, false, 0, 0}, snaps[1], "a one-way cut outlives the split")
	assert.Equal(t, snap{}, snaps[2])
	assert.Len(t, r.nemesisLog(), 12)
}

func TestTriggerFiresRightAfterTheEvent(t *testing.T) {
	r := newRig()
	r.install(t, Fault{Kind: Pause, Targets: []string{"a"}, Duration: Duration(10 * time.Second),
		At: Duration(time.Second), After: &Trigger{Node: "a", F: "acquire", Nth: 2}})
	rec := r.log.NewRecorder("a", clockOf{r.a})
	var sent []time.Duration
	r.a.Spawn("a", func(p *sim.Proc) {
		for range 4 {
			rec.Invoke(history.Event{F: "acquire"}).Complete(history.OK, history.Event{})
			sent = append(sent, p.World().Now())
			p.Sleep(time.Second)
		}
	})
	r.w.Run(time.Minute)
	// Acquires at 0 (before At), 1 s (1st), 2 s (2nd: paused at once, before its
	// next sleep starts, for 10 s), then 12 s + the 1 s sleep.
	assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second, 13 * time.Second}, sent)
	assert.Equal(t, []string{"2s start pause [a]", "12s stop pause [a]"}, r.nemesisLog())
}

type clockOf struct{ n *sim.Node }

func (c clockOf) Now() time.Duration                       { return c.n.World().Now() }
func (c clockOf) Local() time.Duration                     { return c.n.Mono() }
func (c clockOf) TrueAt(local time.Duration) time.Duration { return c.n.TrueTimeAtMono(local) }

func TestRandomIsDeterministicAndRespectsItsConfig(t *testing.T) {
	targets := Targets{Clients: []string{"c1", "c2"}, Servers: []string{"redis"}, Storage: "storage"}
	cfg := RandomConfig{Kinds: []Kind{Pause, Crash}}
	a := Random(sim.NewRand(1, "nemesis"), cfg, targets, time.Minute)
	b := Random(sim.NewRand(1, "nemesis"), cfg, targets, time.Minute)
	c := Random(sim.NewRand(2, "nemesis"), cfg, targets, time.Minute)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
	require.NotEmpty(t, a.Faults)
	require.NoError(t, a.Validate())
	for _, f := range a.Faults {
		assert.Contains(t, []Kind{Pause, Crash}, f.Kind)
		if f.Kind == Crash {
			assert.Equal(t, []string{"redis"}, f.Targets, "only servers crash")
		}
		end := time.Duration(f.At + f.Duration)
		assert.LessOrEqual(t, end, 59*time.Second, "faults end before the quiet tail")
	}
}

func TestRandomDrawsEveryKindAndShape(t *testing.T) {
	targets := Targets{Clients: []string{"c1", "c2", "c3"}, Servers: []string{"s1", "s2"}, Storage: "storage"}
	seen := map[string]bool{}
	for seed := range uint64(20) {
		s := Random(sim.NewRand(seed, "nemesis"), RandomConfig{}, targets, 2*time.Minute)
		require.NoError(t, s.Validate())
		for _, f := range s.Faults {
			shape := string(f.Kind)
			switch {
			case len(f.Groups) > 0:
				shape += "/groups"
			case len(f.From) > 0:
				shape += "/one-way"
			}
			seen[shape] = true
		}
	}
	for _, want := range []string{"pause", "crash", "partition", "partition/groups", "partition/one-way", "clock-jump", "clock-drift", "delay/one-way"} {
		assert.True(t, seen[want], "never drew %s (drew %v)", want, seen)
	}
}

func TestParseKinds(t *testing.T) {
	ks, err := ParseKinds("pause, clock")
	require.NoError(t, err)
	assert.Equal(t, []Kind{ClockDrift, ClockJump, Pause}, ks)
	_, err = ParseKinds("pause,meteor")
	assert.ErrorContains(t, err, `unknown fault kind "meteor"`)
	assert.True(t, strings.Contains(fmt.Sprint(Kinds), "delay"))
}
