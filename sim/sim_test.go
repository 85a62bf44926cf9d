package sim

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echo is a server model that answers every request with "echo:<body>".
type echo struct{ started int }

func (e *echo) Start(n *Node)              { e.started++ }
func (e *echo) Receive(n *Node, m Message) { n.Reply(m, fmt.Sprintf("echo:%v", m.Body)) }

func TestEventsRunInTimeThenSchedulingOrder(t *testing.T) {
	w := NewWorld(Config{Seed: 1})
	var got []string
	w.At(2*time.Second, func() { got = append(got, "b") })
	w.At(1*time.Second, func() { got = append(got, "a") })
	w.At(2*time.Second, func() { got = append(got, "c") })
	w.At(2*time.Second, func() {
		got = append(got, "d")
		w.After(0, func() { got = append(got, "e") })
	})
	w.Run(10 * time.Second)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, got)
	assert.Equal(t, 10*time.Second, w.Now())
}

func TestRandStreamsAreIndependentAndReplayable(t *testing.T) {
	a1, a2, b := NewRand(7, "a"), NewRand(7, "a"), NewRand(7, "b")
	for range 10 {
		x := a1.Uint64()
		assert.Equal(t, x, a2.Uint64())
		assert.NotEqual(t, x, b.Uint64())
	}
	assert.NotEqual(t, NewRand(7, "a").Uint64(), NewRand(8, "a").Uint64())
}

func TestClocks(t *testing.T) {
	tests := []struct {
		name       string
		drift      float64
		jump       time.Duration
		run        time.Duration
		wantMono   time.Duration
		wantOffset time.Duration
	}{
		{"true clock", 0, 0, 10 * time.Second, 10 * time.Second, 0},
		{"fast by 1%", 0.01, 0, 10 * time.Second, 10100 * time.Millisecond, 100 * time.Millisecond},
		{"slow by 10%", -0.1, 0, 10 * time.Second, 9 * time.Second, -time.Second},
		{"jump forward moves wall only", 0, time.Minute, 10 * time.Second, 10 * time.Second, time.Minute},
		{"jump back moves wall only", 0, -time.Minute, 10 * time.Second, 10 * time.Second, -time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWorld(Config{})
			n := w.AddNode("n", NodeOptions{Drift: tc.drift})
			n.JumpClock(tc.jump)
			w.Run(tc.run)
			assert.Equal(t, tc.wantMono, n.Mono())
			assert.Equal(t, DefaultWallEpoch+tc.run+tc.wantOffset, n.Wall())
		})
	}
}

func TestTimersUseLocalMonotonicTime(t *testing.T) {
	w := NewWorld(Config{})
	fast := w.AddNode("fast", NodeOptions{Drift: 1}) // twice as fast
	slow := w.AddNode("slow", NodeOptions{})
	var firedFast, firedSlow, firedJumped time.Duration
	fast.SetTimer(10*time.Second, func() { firedFast = w.Now() })
	slow.SetTimer(10*time.Second, func() { firedSlow = w.Now() })
	slow.JumpClock(time.Hour) // wall jumps do not move monotonic timers
	slow.SetTimer(3*time.Second, func() { firedJumped = w.Now() })
	w.Run(time.Minute)
	assert.Equal(t, 5*time.Second, firedFast)
	assert.Equal(t, 10*time.Second, firedSlow)
	assert.Equal(t, 3*time.Second, firedJumped)
}

func TestDriftChangeReplansPendingTimers(t *testing.T) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	var fired time.Duration
	n.SetTimer(10*time.Second, func() { fired = w.Now() })
	w.At(4*time.Second, func() { n.SetDrift(1) }) // 6 s of local time left, at double speed
	w.Run(time.Minute)
	assert.Equal(t, 7*time.Second, fired)
}

// TestResetReArmsATimer: a reset timer runs once more after its new delay,
// whether it fired, was stopped or is pending (its earlier deadline is
// dropped), follows drift changes like any timer, and is cancelled by a crash.
func TestResetReArmsATimer(t *testing.T) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	var fired []time.Duration
	var periodic *Timer
	periodic = n.SetTimer(time.Second, func() {
		fired = append(fired, w.Now())
		if len(fired) < 3 {
			periodic.Reset(time.Second)
		}
	})
	w.Run(10 * time.Second)
	assert.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 3 * time.Second}, fired, "reset after firing")

	fired = nil
	pending := n.SetTimer(5*time.Second, func() { fired = append(fired, w.Now()) })
	w.At(12*time.Second, func() { pending.Reset(time.Second) })
	w.At(20*time.Second, func() { pending.Stop(); pending.Reset(5 * time.Second) })
	w.At(23*time.Second, func() { pending.Reset(4 * time.Second) })
	w.At(24*time.Second, func() { n.SetDrift(1) }) // 3 s of local time left, at double speed
	w.Run(20 * time.Second)
	assert.Equal(t, []time.Duration{13 * time.Second, 25500 * time.Millisecond}, fired,
		"pending at 12 s: moved; stopped then reset at 20 s, reset again at 23 s before it fired: once, drift-replanned")

	fired = nil
	w.At(31*time.Second, func() { pending.Reset(time.Second) })
	w.At(31500*time.Millisecond, func() { n.Crash() })
	w.Run(10 * time.Second)
	assert.Empty(t, fired, "a crash cancels a reset timer")
}

func TestTrueTimeAtMono(t *testing.T) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{Drift: -0.5})
	w.Run(2 * time.Second)
	require.Equal(t, time.Second, n.Mono())
	assert.Equal(t, 10*time.Second, n.TrueTimeAtMono(5*time.Second))
	assert.Equal(t, w.Now(), n.TrueTimeAtMono(0))
}

func TestPauseDefersTimersAndMessagesInOrder(t *testing.T) {
	w := NewWorld(Config{Link: Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	var log []string
	rec := &recorder{log: &log}
	a := w.AddNode("a", NodeOptions{})
	b := w.AddNode("b", NodeOptions{Handler: rec})
	b.SetTimer(2*time.Second, func() { log = append(log, fmt.Sprintf("timer@%v", w.Now())) })
	w.At(time.Second, b.Pause)
	w.At(3*time.Second, func() { a.Send(b.ID(), "m1") })
	w.At(3*time.Second, func() { a.Send(b.ID(), "m2") })
	w.At(5*time.Second, b.Resume)
	w.Run(10 * time.Second)
	assert.Equal(t, []string{"timer@5s", "m1@5s", "m2@5s"}, log)
	assert.Equal(t, 1, b.PauseCount())
}

type recorder struct{ log *[]string }

func (r *recorder) Start(n *Node) {}
func (r *recorder) Receive(n *Node, m Message) {
	*r.log = append(*r.log, fmt.Sprintf("%v@%v", m.Body, n.World().Now()))
}

func TestCrashDropsEverythingAndRestartStartsAgain(t *testing.T) {
	w := NewWorld(Config{})
	e := &echo{}
	n := w.AddNode("n", NodeOptions{Handler: e})
	fired := false
	n.SetTimer(2*time.Second, func() { fired = true })
	w.At(time.Second, n.Crash)
	w.At(3*time.Second, n.Restart)
	w.Run(10 * time.Second)
	assert.False(t, fired, "a timer set before the crash must not fire after the restart")
	assert.Equal(t, 2, e.started)
	assert.Equal(t, 1, n.CrashCount())
}

func TestCallReplyTimeoutAndLateReply(t *testing.T) {
	w := NewWorld(Config{Link: Link{LatencyMin: 10 * time.Millisecond, LatencyMax: 10 * time.Millisecond}})
	srv := w.AddNode("srv", NodeOptions{Handler: &echo{}})
	cl := w.AddNode("cl", NodeOptions{})
	var got []string
	cl.Spawn("client", func(p *Proc) {
		r, err := p.Call(srv.ID(), "hi", time.Second)
		got = append(got, fmt.Sprintf("%v %v @%v", r, err, w.Now()))
		_, err = p.Call(srv.ID(), "slow", 15*time.Millisecond) // 20 ms round trip
		got = append(got, fmt.Sprintf("timeout=%v @%v", err != nil && strings.Contains(err.Error(), "timed out"), w.Now()))
		p.Sleep(100 * time.Millisecond) // the late reply arrives meanwhile and is discarded
		r, err = p.Call(srv.ID(), "again", time.Second)
		got = append(got, fmt.Sprintf("%v %v", r, err))
	})
	w.Run(time.Minute)
	assert.Equal(t, []string{"echo:hi <nil> @20ms", "timeout=true @35ms", "echo:again <nil>"}, got)
}

func TestPartitionsAreDirectedAndDropInFlight(t *testing.T) {
	w := NewWorld(Config{Link: Link{LatencyMin: 10 * time.Millisecond, LatencyMax: 10 * time.Millisecond}})
	var log []string
	a := w.AddNode("a", NodeOptions{Handler: &recorder{log: &log}})
	b := w.AddNode("b", NodeOptions{Handler: &recorder{log: &log}})
	net := w.Network()
	net.Block(a, b)
	a.Send(b.ID(), "a->b cut")
	b.Send(a.ID(), "b->a open")
	w.Run(time.Second)
	net.Unblock(a, b)
	a.Send(b.ID(), "in flight")
	w.Run(5 * time.Millisecond)
	net.Partition([]*Node{a}, []*Node{b})
	w.Run(time.Second)
	net.Heal()
	a.Send(b.ID(), "healed")
	w.Run(time.Second)
	assert.Equal(t, []string{"b->a open@10ms", "healed@2.015s"}, log)
}

// TestBlockedLinksAreCounted: blocking a link twice and unblocking it once
// leaves it open, and Heal opens every link, however it was cut.
func TestBlockedLinksAreCounted(t *testing.T) {
	w := NewWorld(Config{})
	a, b, c := w.AddNode("a", NodeOptions{}), w.AddNode("b", NodeOptions{}), w.AddNode("c", NodeOptions{})
	net := w.Network()
	steps := []struct {
		name     string
		do       func()
		ab, ba   bool
		ac, open bool
	}{
		{"block a->b twice", func() { net.Block(a, b); net.Block(a, b) }, true, false, false, false},
		{"unblock a->b once", func() { net.Unblock(a, b) }, false, false, false, true},
		{"unblock an open link", func() { net.Unblock(b, a) }, false, false, false, true},
		{"partition", func() { net.Partition([]*Node{a}, []*Node{b, c}) }, true, true, true, false},
		{"heal", net.Heal, false, false, false, true},
	}
	for _, st := range steps {
		st.do()
		assert.Equal(t, st.ab, net.Blocked(a, b), st.name)
		assert.Equal(t, st.ba, net.Blocked(b, a), st.name)
		assert.Equal(t, st.ac, net.Blocked(a, c), st.name)
		assert.Equal(t, st.open, net.blocked == 0, st.name)
	}
}

func TestRulesDelayAndDropChosenMessages(t *testing.T) {
	w := NewWorld(Config{Link: Link{LatencyMin: 10 * time.Millisecond, LatencyMax: 10 * time.Millisecond}})
	var log []string
	a := w.AddNode("a", NodeOptions{})
	b := w.AddNode("b", NodeOptions{Handler: &recorder{log: &log}})
	net := w.Network()
	net.AddRule(Rule{From: a, Match: func(m Message) bool { return m.Body == "slow" }, Delay: time.Second, Count: 1})
	net.AddRule(Rule{To: b, Match: func(m Message) bool { return m.Body == "lost" }, Drop: true})
	for _, body := range []string{"slow", "lost", "slow"} {
		a.Send(b.ID(), body)
	}
	w.Run(5 * time.Second)
	// FIFO: the second "slow" waits behind the delayed first.
	assert.Equal(t, []string{"slow@1.01s", "slow@1.01s"}, log)
}

func TestLossDuplicationAndReordering(t *testing.T) {
	w := NewWorld(Config{Seed: 3, Link: Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond,
		Loss: 0.2, Duplicate: 0.2, Reorder: 0.3, ReorderDelay: 50 * time.Millisecond}})
	var log []string
	a := w.AddNode("a", NodeOptions{})
	b := w.AddNode("b", NodeOptions{Handler: &recorder{log: &log}})
	for i := range 200 {
		a.Send(b.ID(), i)
	}
	w.Run(time.Second)
	st := w.Network().Stats()
	assert.Equal(t, uint64(200), st.Sent)
	assert.InDelta(t, 40, st.Dropped, 20)
	assert.InDelta(t, 32, st.Duplicated, 20)
	assert.Equal(t, int(st.Delivered), len(log))
	inversions := 0
	for i := 1; i < len(log); i++ {
		var x, y int
		fmt.Sscanf(log[i-1], "%d@", &x)
		fmt.Sscanf(log[i], "%d@", &y)
		if y < x {
			inversions++
		}
	}
	assert.Positive(t, inversions, "reordering must overtake the FIFO order sometimes")
}

func TestPausedProcessStopsBeforeItsNextSend(t *testing.T) {
	w := NewWorld(Config{Link: Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	var log []string
	srv := w.AddNode("srv", NodeOptions{Handler: &recorder{log: &log}})
	cl := w.AddNode("cl", NodeOptions{})
	cl.Spawn("client", func(p *Proc) {
		p.Send(srv.ID(), "before")
		cl.Pause() // as a nemesis hook would, while the process runs
		w.After(5*time.Second, cl.Resume)
		p.Send(srv.ID(), "after")
	})
	w.Run(time.Minute)
	assert.Equal(t, []string{"before@1ms", "after@5.001s"}, log)
}

func TestCrashKillsProcessesAndRunsTheirDefers(t *testing.T) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	steps, deferred := 0, false
	p := n.Spawn("loop", func(p *Proc) {
		defer func() { deferred = true }()
		for {
			steps++
			p.Sleep(time.Second)
		}
	})
	w.At(3500*time.Millisecond, n.Crash)
	w.Run(time.Minute)
	assert.Equal(t, 4, steps)
	assert.True(t, deferred)
	assert.True(t, p.Finished())
}

func TestProcessPanicSurfacesWithItsName(t *testing.T) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	n.Spawn("buggy", func(p *Proc) { panic("boom") })
	defer func() {
		r := recover()
		require.NotNil(t, r)
		assert.Contains(t, fmt.Sprint(r), "process buggy on node n panicked: boom")
	}()
	w.Run(time.Second)
}

func TestCloseUnwindsEveryProcess(t *testing.T) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	var procs []*Proc
	for i := range 10 {
		procs = append(procs, n.Spawn(fmt.Sprint(i), func(p *Proc) {
			for {
				p.Sleep(time.Millisecond)
			}
		}))
	}
	w.Run(time.Second)
	w.Close()
	for _, p := range procs {
		assert.True(t, p.Finished())
	}
}

// trace runs a small world that exercises every primitive and returns a log of
// everything that happened, for the determinism test.
func trace(seed uint64) string {
	return traceRun(seed, func(w *World) { w.Run(2 * time.Second) })
}

// traceRun is trace with run running the world for its two seconds.
func traceRun(seed uint64, run func(w *World)) string {
	w := NewWorld(Config{Seed: seed, Link: Link{LatencyMin: time.Millisecond, LatencyMax: 20 * time.Millisecond,
		Loss: 0.05, Duplicate: 0.05, Reorder: 0.1, ReorderDelay: 30 * time.Millisecond}})
	var b strings.Builder
	srv := w.AddNode("srv", NodeOptions{Handler: &echo{}})
	for i := range 3 {
		c := w.AddNode(fmt.Sprintf("c%d", i), NodeOptions{Drift: float64(i) * 0.01})
		c.Spawn("main", func(p *Proc) {
			for j := 0; ; j++ {
				r, err := p.Call(srv.ID(), j, 15*time.Millisecond)
				fmt.Fprintf(&b, "%v %s %v %v\n", w.Now(), p.Node().Name(), r, err != nil)
				p.Sleep(time.Duration(p.Rand().IntN(50)) * time.Millisecond)
			}
		})
	}
	c0, c1 := w.Node("c0"), w.Node("c1")
	w.At(200*time.Millisecond, func() { w.Network().Partition([]*Node{srv}, []*Node{c0}) })
	w.At(400*time.Millisecond, w.Network().Heal)
	w.At(300*time.Millisecond, c1.Pause)
	w.At(700*time.Millisecond, c1.Resume)
	w.At(500*time.Millisecond, srv.Crash)
	w.At(600*time.Millisecond, srv.Restart)
	w.At(650*time.Millisecond, func() { c0.JumpClock(time.Second); c0.SetDrift(0.5) })
	run(w)
	w.Close()
	fmt.Fprintf(&b, "events=%d net=%+v\n", w.Processed(), w.Network().Stats())
	return b.String()
}

func TestDeterminism(t *testing.T) {
	a, b, c := trace(42), trace(42), trace(43)
	require.Greater(t, strings.Count(a, "\n"), 50)
	assert.Equal(t, a, b, "same seed must replay exactly")
	assert.NotEqual(t, a, c, "another seed must differ")
}

// TestStreamKeysAreFNV64a: a stream's key is the FNV-64a of its name, as
// hash/fnv computes it (the streams of recorded histories depend on it).
func TestStreamKeysAreFNV64a(t *testing.T) {
	for _, name := range []string{"", "network", "node/redis", "nemesis", "node/c1/ü"} {
		h := fnv.New64a()
		h.Write([]byte(name))
		assert.Equal(t, h.Sum64(), fnv64a(name), name)
	}
}
