package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHoldingCuts: under connection semantics (CutHolds) a cut holds what is
// sent on it or in flight on it and delivers it, in send order, one latency
// after the heal; a cut that outlasts the connection timeout resets the
// connection and loses it; a lossy cut drops as a datagram network does.
// Latency is 10 ms, the connection timeout 5 s.
func TestHoldingCuts(t *testing.T) {
	send := func(from, to *Node, body string) func() { return func() { from.Send(to.ID(), body) } }
	tests := []struct {
		name string
		// steps are (true time, action) on nodes a and b (both log what
		// they receive) and the network.
		steps      func(w *World, net *Network, a, b *Node) []step
		want       []string
		held       uint64
		resets     uint64
		dropped    uint64
		delivered  uint64
		wantPaused bool
	}{
		{
			name: "sent on a cut link: held, delivered one latency after the heal",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {0, send(a, b, "x")}, {100 * time.Millisecond, send(a, b, "y")},
					{time.Second, func() { net.Unblock(a, b) }}}
			},
			want: []string{"b got x@1.01s", "b got y@1.01s"}, held: 2, delivered: 2,
		},
		{
			name: "in flight when the link is cut: held, not dropped",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, send(a, b, "x")}, {5 * time.Millisecond, func() { net.Partition([]*Node{a}, []*Node{b}) }},
					{time.Second, net.Heal}}
			},
			want: []string{"b got x@1.01s"}, held: 1, delivered: 1,
		},
		{
			name: "one-way cut: the other direction flows, the cut one holds",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {0, send(a, b, "x")}, {0, send(b, a, "y")},
					{2 * time.Second, func() { net.Unblock(a, b) }}}
			},
			want: []string{"a got y@10ms", "b got x@2.01s"}, held: 1, delivered: 2,
		},
		{
			name: "FIFO at the heal: caught in flight, sent during the cut, in flight past the heal, sent after it",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{
					{0, send(a, b, "1 caught in flight")},
					// delayed by a rule past the heal: in flight across the whole cut
					{time.Millisecond, func() {
						net.AddRule(Rule{From: a, Delay: 2 * time.Second, Count: 1})
						a.Send(b.ID(), "2 in flight past the heal")
					}},
					{5 * time.Millisecond, func() { net.Block(a, b) }},
					{100 * time.Millisecond, send(a, b, "3 sent during the cut")},
					{time.Second, func() { net.Unblock(a, b) }},
					{1500 * time.Millisecond, send(a, b, "4 sent after the heal")},
				}
			},
			want: []string{"b got 1 caught in flight@2.011s", "b got 2 in flight past the heal@2.011s",
				"b got 3 sent during the cut@2.011s", "b got 4 sent after the heal@2.011s"},
			held: 3, delivered: 4,
		},
		{
			name: "cut longer than the connection timeout: reset, what it held is lost, later sends wait on a new connection",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {0, send(a, b, "lost")}, {6 * time.Second, send(a, b, "new")},
					{8 * time.Second, func() { net.Unblock(a, b) }}}
			},
			want: []string{"b got new@8.01s"}, held: 2, resets: 1, dropped: 1, delivered: 1,
		},
		{
			name: "a long cut of an idle connection does not reset it: what is sent late in the cut arrives",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {9 * time.Second, send(a, b, "late")},
					{10 * time.Second, func() { net.Unblock(a, b) }}}
			},
			want: []string{"b got late@10.01s"}, held: 1, delivered: 1,
		},
		{
			name: "in flight on a connection that resets: lost",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{
					{0, func() {
						net.AddRule(Rule{From: a, Delay: 7 * time.Second, Count: 1})
						a.Send(b.ID(), "lost")
					}},
					{time.Millisecond, func() { net.Block(a, b) }},
					{6 * time.Second, func() { net.Unblock(a, b) }},
					{6500 * time.Millisecond, send(a, b, "after the heal: not behind the lost one")},
				}
			},
			want: []string{"b got after the heal: not behind the lost one@6.51s"}, resets: 1, dropped: 1, delivered: 1,
		},
		{
			name: "cut again before the drain: held until the next heal",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {0, send(a, b, "x")}, {time.Second, func() { net.Unblock(a, b) }},
					{time.Second + 5*time.Millisecond, func() { net.Block(a, b) }}, {2 * time.Second, func() { net.Unblock(a, b) }}}
			},
			want: []string{"b got x@2.01s"}, held: 1, delivered: 1,
		},
		{
			name: "cut again before the drain, and what was in flight never comes: the next heal plans no drain",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{
					{0, func() {
						net.AddRule(Rule{From: a, Delay: 500 * time.Millisecond, Count: 1})
						a.Send(b.ID(), "lost with b's crash")
					}},
					{time.Millisecond, func() { net.Block(a, b) }},
					{100 * time.Millisecond, func() { net.Unblock(a, b) }},
					{200 * time.Millisecond, func() { net.Block(a, b) }},
					{300 * time.Millisecond, b.Crash}, {400 * time.Millisecond, b.Restart},
					{time.Second, func() { net.Unblock(a, b) }},
					{2 * time.Second, send(a, b, "y")},
				}
			},
			want: []string{"b got y@2.01s"}, delivered: 1,
		},
		{
			name: "receiver crashed and restarted during the cut: its connection died, what it held is lost",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {0, send(a, b, "x")}, {time.Second, b.Crash}, {2 * time.Second, b.Restart},
					{3 * time.Second, func() { net.Unblock(a, b) }}, {4 * time.Second, send(a, b, "y")}}
			},
			want: []string{"b got y@4.01s"}, held: 1, dropped: 1, delivered: 1,
		},
		{
			name: "receiver paused at the heal: delivered when it resumes",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.Block(a, b) }}, {0, send(a, b, "x")}, {500 * time.Millisecond, b.Pause},
					{time.Second, func() { net.Unblock(a, b) }}, {3 * time.Second, b.Resume}}
			},
			want: []string{"b got x@3s"}, held: 1, delivered: 1,
		},
		{
			name: "a lossy cut drops, whatever the mode",
			steps: func(w *World, net *Network, a, b *Node) []step {
				return []step{{0, func() { net.BlockLossy(a, b) }}, {0, send(a, b, "x")}, {time.Second, func() { net.Unblock(a, b) }},
					{2 * time.Second, send(a, b, "y")}}
			},
			want: []string{"b got y@2.01s"}, dropped: 1, delivered: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWorld(Config{Link: Link{LatencyMin: 10 * time.Millisecond, LatencyMax: 10 * time.Millisecond},
				Cuts: CutHolds, ConnTimeout: 5 * time.Second})
			var log []string
			a := w.AddNode("a", NodeOptions{Handler: &namedRecorder{log: &log}})
			b := w.AddNode("b", NodeOptions{Handler: &namedRecorder{log: &log}})
			net := w.Network()
			for _, s := range tc.steps(w, net, a, b) {
				w.At(s.at, s.do)
			}
			w.Run(20 * time.Second)
			assert.Equal(t, tc.want, log)
			st := net.Stats()
			assert.Equal(t, tc.held, st.Held, "held")
			assert.Equal(t, tc.resets, st.Resets, "resets")
			assert.Equal(t, tc.dropped, st.Dropped, "dropped")
			assert.Equal(t, tc.delivered, st.Delivered, "delivered")
			assert.Zero(t, net.draining, "no drain left planned")
		})
	}
}

// TestDroppingCutsAreTheDefault: the zero Config drops what a cut catches
// (datagram semantics), and SetCuts changes only the cuts made afterwards.
func TestDroppingCutsAreTheDefault(t *testing.T) {
	w := NewWorld(Config{Link: Link{LatencyMin: 10 * time.Millisecond, LatencyMax: 10 * time.Millisecond}})
	net := w.Network()
	mode, timeout := net.Cuts()
	require.Equal(t, CutDrops, mode)
	require.Equal(t, DefaultConnTimeout, timeout)
	var log []string
	a := w.AddNode("a", NodeOptions{})
	b := w.AddNode("b", NodeOptions{Handler: &namedRecorder{log: &log}})
	net.Block(a, b)
	a.Send(b.ID(), "dropped")
	net.SetCuts(CutHolds, -1)
	a.Send(b.ID(), "dropped too: the cut was made dropping")
	w.Run(time.Second)
	net.Unblock(a, b)
	net.Block(a, b)
	a.Send(b.ID(), "held")
	w.Run(time.Minute) // no timeout: never reset
	net.Unblock(a, b)
	w.Run(time.Second)
	assert.Equal(t, []string{"b got held@1m1.01s"}, log)
	assert.Equal(t, NetStats{Sent: 3, Delivered: 1, Dropped: 2, Held: 1}, net.Stats())
}

// TestHoldingCutsAreDeterministic: the trace world run with holding cuts
// replays exactly, and differs from its run with dropping cuts.
func TestHoldingCutsAreDeterministic(t *testing.T) {
	for _, timeout := range []time.Duration{time.Second, 150 * time.Millisecond} { // the 200 ms cut delivers, resets
		t.Run(timeout.String(), func(t *testing.T) {
			hold := func(seed uint64) string {
				return traceRun(seed, func(w *World) { w.Network().SetCuts(CutHolds, timeout); w.Run(2 * time.Second) })
			}
			a, b := hold(42), hold(42)
			require.Greater(t, strings.Count(a, "\n"), 50)
			require.NotContains(t, a, "Held:0 ")
			assert.Equal(t, a, b, "same seed must replay exactly")
			assert.NotEqual(t, trace(42), a, "holding the messages of the cut changes the run")
			assert.NotEqual(t, hold(43), a, "another seed must differ")
		})
	}
}

type step struct {
	at time.Duration
	do func()
}

// namedRecorder logs what its node receives as "<node> got <body>@<time>".
type namedRecorder struct{ log *[]string }

func (r *namedRecorder) Start(n *Node) {}
func (r *namedRecorder) Receive(n *Node, m Message) {
	*r.log = append(*r.log, fmt.Sprintf("%s got %v@%v", n.Name(), m.Body, n.World().Now()))
}
