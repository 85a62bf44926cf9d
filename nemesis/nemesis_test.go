package nemesis

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestMalformedSchedules reads every file under testdata/malformed: each must
// be rejected with an error that names the file and line, and (within a
// fault) the fault's index and field, exactly as testdata/malformed.golden
// says (go test ./nemesis -run TestMalformedSchedules -update rewrites it).
func TestMalformedSchedules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "malformed", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 50)
	var got strings.Builder
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, err := ReadFile(file)
			require.Error(t, err, "a malformed schedule was accepted")
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Regexp(t, `^`+regexp.QuoteMeta(file)+`:[1-9][0-9]*: `, err.Error(), "names the file and line")
			if se.Fault >= 0 {
				assert.Contains(t, err.Error(), fmt.Sprintf("faults[%d]", se.Fault))
			}
			fmt.Fprintf(&got, "%s\n", err)
		})
	}
	golden := filepath.Join("testdata", "malformed.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got.String())
}

func TestScheduleRoundTrip(t *testing.T) {
	s := Schedule{Faults: []Fault{
		{Kind: Pause, Targets: []string{"c1"}, Duration: Duration(12 * time.Second), After: &Trigger{Node: "c1", F: "acquire"}},
		{Kind: Partition, At: Duration(time.Second), Groups: [][]string{{"a"}, {"b", "c"}}, Duration: Duration(time.Second)},
		{Kind: ClockJump, Targets: []string{"redis"}, Amount: Duration(-30 * time.Second)},
	}}
	back, err := Parse(s.JSON(), "x")
	require.NoError(t, err)
	assert.Equal(t, s.Faults, back.Faults)
	assert.Equal(t, "x", back.File())
	assert.Contains(t, string(s.JSON()), `"duration": "12s"`)
}

// TestValidateNamesTheFieldOfAScheduleBuiltInCode: a schedule built in code
// (a scenario) has no file; its errors say "schedule".
func TestValidateNamesTheFieldOfAScheduleBuiltInCode(t *testing.T) {
	s := Schedule{Faults: []Fault{
		{Kind: Pause, Targets: []string{"c1"}, Duration: 1},
		{Kind: Pause, Targets: []string{"c1"}, Duration: 1, After: &Trigger{Node: "c1", F: "acquire", Type: "OK"}},
	}}
	assert.EqualError(t, s.Validate(), `schedule: faults[1] (pause): field "after.type": unknown event type "OK" (want one of invoke, ok, fail, info; default ok)`)
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
	if name == "nobody" {
		return nil, nil // a role that names no node at the moment
	}
	if n := r.w.Node(name); n != nil {
		return []*sim.Node{n}, nil
	}
	return nil, fmt.Errorf("unknown node %q", name)
}

func (r *rig) install(t *testing.T, faults ...Fault) {
	t.Helper()
	_, err := Install(r.w, r.log, Schedule{Faults: faults}, Env{Resolve: r.resolve})
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

// TestInstallRejectsUnknownNames: names that only the system knows (nodes,
// clients, message types) are checked when the schedule is installed, and the
// error names the file, the line, the fault and the field, with the choices.
func TestInstallRejectsUnknownNames(t *testing.T) {
	env := func(r *rig) Env {
		return Env{Resolve: r.resolve, Clients: []string{"a", "b"}, Messages: []string{"storage.ReadReq", "storage.WriteReq"}}
	}
	tests := []struct{ name, fault, want string }{
		{"unknown target", `{"kind": "pause", "duration": "1s",
   "targets": ["zz"]}`, `s.json:3: faults[1] (pause): field "targets": unknown node "zz"`},
		{"unknown node in a group", `{"kind": "partition",
   "groups": [["a"], ["zz"]]}`, `s.json:3: faults[1] (partition): field "groups": unknown node "zz"`},
		{"unknown end of a cut", `{"kind": "partition", "from": ["a"],
   "to": ["zz"]}`, `s.json:3: faults[1] (partition): field "to": unknown node "zz"`},
		{"trigger on a node that is not a client", `{"kind": "pause", "targets": ["a"], "duration": "1s",
   "after": {"node": "c",
             "f": "acquire"}}`, `s.json:3: faults[1] (pause): field "after.node": "c" is not a client: a trigger follows the operations of a client (a, b)`},
		{"match of no message type", `{"kind": "delay", "from": ["a"], "to": ["b"], "amount": "1s",
   "match": "storage.WriteRequest"}`, `s.json:3: faults[1] (delay): field "match": "storage.WriteRequest" is not a message type of this system (want one of storage.ReadReq, storage.WriteReq)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig()
			s, err := Parse([]byte("{\"faults\": [{\"kind\": \"pause\", \"targets\": [\"a\"], \"duration\": \"1s\"},\n  "+tc.fault+"]}"), "s.json")
			require.NoError(t, err)
			_, err = Install(r.w, r.log, s, env(r))
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.ErrorContains(t, err, tc.want)
		})
	}
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

// TestALossyPartitionDropsWhateverTheWorldsCuts (issue 28, item 8): a
// partition with "lossy" drops what it catches even in a world whose cuts
// hold (connection semantics); without it, the world's mode decides.
func TestALossyPartitionDropsWhateverTheWorldsCuts(t *testing.T) {
	tests := []struct {
		name          string
		cuts          sim.CutMode
		lossy         bool
		held, dropped uint64
		detail        string
	}{
		{"holding world, plain cut: held", sim.CutHolds, false, 1, 0, "one-way cut [a] -> [b]"},
		{"holding world, lossy cut: dropped", sim.CutHolds, true, 0, 1, "one-way cut [a] -> [b], lossy"},
		{"dropping world, lossy cut: dropped", sim.CutDrops, true, 0, 1, "one-way cut [a] -> [b], lossy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{Cuts: tc.cuts})
			r := &rig{w: w, log: history.NewLog()}
			r.a, r.b, r.c = w.AddNode("a", sim.NodeOptions{}), w.AddNode("b", sim.NodeOptions{}), w.AddNode("c", sim.NodeOptions{})
			r.install(t, Fault{Kind: Partition, At: Duration(time.Second), Duration: Duration(time.Second),
				From: []string{"a"}, To: []string{"b"}, Lossy: tc.lossy})
			w.At(1500*time.Millisecond, func() { r.a.Send(r.b.ID(), "x") })
			w.Run(5 * time.Second)
			st := w.Network().Stats()
			assert.Equal(t, tc.held, st.Held, "held")
			assert.Equal(t, tc.dropped, st.Dropped, "dropped")
			assert.Equal(t, uint64(1-tc.dropped), st.Delivered, "delivered")
			var details []string
			for _, e := range r.log.Events() {
				if e.Process == history.NemesisProcess && e.Type == history.Start {
					details = append(details, e.Detail)
				}
			}
			assert.Equal(t, []string{tc.detail}, details)
		})
	}
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
	assert.EqualError(t, err, `unknown fault kind "meteor" (want a comma-separated list of [pause crash partition clock-jump clock-drift delay], clock or all)`)
	_, err = ParseKinds("pauses")
	assert.EqualError(t, err, `unknown fault kind "pauses" — did you mean "pause"?`, "a near miss is named")
	_, err = ParseKinds("clok")
	assert.EqualError(t, err, `unknown fault kind "clok" — did you mean "clock"?`)
	assert.True(t, strings.Contains(fmt.Sprint(Kinds), "delay"))
}
