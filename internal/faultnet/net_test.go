package faultnet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type ping struct{}

func serveOK() string { return "ok" }

func TestCall(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(n *Net)
		want  error
	}{
		{"a healthy link answers", func(n *Net) {}, nil},
		{"a cut request link times out", func(n *Net) { n.Block("c1", "s") }, ErrTimeout},
		{"a cut reply link times out (the request was served)", func(n *Net) { n.Block("s", "c1") }, ErrTimeout},
		{"a paused server holds the request past the timeout", func(n *Net) { n.Pause("s") }, ErrTimeout},
		{"a delay beyond the timeout times out", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Match: "faultnet.ping", Delay: time.Second})
		}, ErrTimeout},
		{"a delay of another message type does nothing", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Match: "storage.WriteReq", Delay: time.Second})
		}, nil},
		{"a drop rule drops", func(n *Net) { n.AddRule(Rule{From: "c1", To: "s", Drop: true}) }, ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			n := New()
			tc.setup(n)
			v, err := Call(n, "c1", "s", ping{}, 50*time.Millisecond, serveOK)
			n.Close()
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "ok", v)
		})
	}
}

func TestCallDeliveredSaysWhetherTheCallerHadGivenUp(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, tc := range []struct {
		name  string
		setup func(n *Net)
		// want is the caller's error; served whether the request reached
		// the receiver, abandoned whether its caller had given up by then,
		// and least the least time it took to arrive.
		want      error
		served    bool
		abandoned bool
		least     time.Duration
	}{
		{"a request answered in time was not abandoned", func(n *Net) {}, nil, true, false, 0},
		{"a request delayed less than the timeout was not abandoned", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Delay: 10 * time.Millisecond})
		}, nil, true, false, 10 * time.Millisecond},
		{"a request delayed past the timeout lands after its delay, abandoned", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Match: "faultnet.ping", Delay: 300 * time.Millisecond})
		}, ErrTimeout, true, true, 300 * time.Millisecond},
		{"a rule that ends later still delays the message it matched to the end", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Delay: 300 * time.Millisecond, Count: 1, Until: time.Now().Add(time.Millisecond * 50)})
		}, ErrTimeout, true, true, 300 * time.Millisecond},
		{"a request a paused receiver held past the timeout lands at the resume, abandoned", func(n *Net) {
			n.Pause("s")
			time.AfterFunc(300*time.Millisecond, func() { n.Resume("s") })
		}, ErrTimeout, true, true, 300 * time.Millisecond},
		{"a dropped request never arrives", func(n *Net) { n.AddRule(Rule{From: "c1", To: "s", Drop: true}) }, ErrTimeout, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			n := New()
			defer n.Close()
			tc.setup(n)
			delivered := make(chan Delivery, 1)
			_, err := CallDelivered(n, "c1", "s", ping{}, timeout, func(d Delivery) string {
				delivered <- d
				return "ok"
			})
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			} else {
				require.NoError(t, err)
			}
			select {
			case d := <-delivered:
				require.True(t, tc.served, "the request arrived: %+v", d)
				assert.Equal(t, tc.abandoned, d.Abandoned, "abandoned")
				assert.GreaterOrEqual(t, d.Arrived-d.Sent, tc.least, "time to arrive")
			case <-time.After(time.Second):
				require.False(t, tc.served, "the request never arrived")
			}
		})
	}
}

type write struct{ value int }

type read struct{}

func TestLinksAreFIFO(t *testing.T) {
	const held = 300 * time.Millisecond
	for _, tc := range []struct {
		name  string
		setup func(n *Net)
		// sends are the messages c1 sends, in order, 20 ms apart, each to
		// its receiver; want is when each must have arrived at the least
		// and, at most (0: no bound).
		sends       []string
		least, most []time.Duration
	}{
		{"a message sent after a delayed one waits behind it", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Match: "faultnet.write", Count: 1, Delay: held})
		}, []string{"s", "s"}, []time.Duration{held, held}, []time.Duration{0, 0}},
		{"a message on another link is not held", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Match: "faultnet.write", Count: 1, Delay: held})
		}, []string{"s", "t"}, []time.Duration{held, 0}, []time.Duration{0, held / 2}},
		{"a message sent after a dropped one is not held", func(n *Net) {
			n.AddRule(Rule{From: "c1", To: "s", Match: "faultnet.write", Count: 1, Drop: true})
		}, []string{"s", "s"}, []time.Duration{-1, 0}, []time.Duration{0, held / 2}},
		{"a paused receiver takes the messages it held in order, at its resume", func(n *Net) {
			n.Pause("s")
			time.AfterFunc(held, func() { n.Resume("s") })
		}, []string{"s", "s"}, []time.Duration{held, held}, []time.Duration{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			n := New()
			defer n.Close()
			tc.setup(n)
			arrived := make([]time.Duration, len(tc.sends))
			errs := make([]error, len(tc.sends))
			done := make(chan int, len(tc.sends))
			for i, to := range tc.sends {
				var msg any = read{}
				if i == 0 {
					msg = write{1}
				}
				go func() {
					errs[i] = n.Send("c1", to, msg)
					arrived[i] = n.Now()
					done <- i
				}()
				time.Sleep(20 * time.Millisecond)
			}
			for range tc.sends {
				<-done
			}
			for i := range tc.sends {
				if tc.least[i] < 0 {
					assert.ErrorIs(t, errs[i], ErrDropped, "message %d", i)
					continue
				}
				require.NoError(t, errs[i], "message %d", i)
				assert.GreaterOrEqual(t, arrived[i], tc.least[i], "message %d arrived too early", i)
				if tc.most[i] > 0 {
					assert.Less(t, arrived[i], tc.most[i], "message %d was held", i)
				}
			}
		})
	}
}

func TestCallDeliveredServesALinksRequestsInTheOrderSent(t *testing.T) {
	defer goleak.VerifyNone(t)
	n := New()
	defer n.Close()
	n.AddRule(Rule{From: "c1", To: "s", Match: "faultnet.write", Count: 1, Delay: 300 * time.Millisecond})
	var value int
	serve := func(req any) func(Delivery) int {
		return func(Delivery) int {
			if w, ok := req.(write); ok {
				value = w.value
			}
			return value
		}
	}
	_, err := CallDelivered(n, "c1", "s", write{1}, 50*time.Millisecond, serve(write{1}))
	require.ErrorIs(t, err, ErrTimeout, "the write is held past its timeout")
	v, err := CallDelivered(n, "c1", "s", read{}, time.Second, serve(read{}))
	require.NoError(t, err, "the read waits behind the write, within its timeout")
	assert.Equal(t, 1, v, "the read is served after the write it was sent after")
}

func TestCloseReleasesEveryWait(t *testing.T) {
	defer goleak.VerifyNone(t)
	n := New()
	n.Pause("x")
	done := make(chan error)
	go func() { done <- n.Gate("x") }()
	go func() { _, err := Call(n, "c1", "x", ping{}, time.Hour, serveOK); done <- err }()
	n.Close()
	for range 2 {
		select {
		case err := <-done:
			assert.ErrorIs(t, err, ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("a wait survived Close")
		}
	}
}

func TestPausesNestAndClocksJump(t *testing.T) {
	n := New()
	defer n.Close()
	n.Pause("x")
	n.Pause("x")
	n.Resume("x")
	assert.True(t, n.Paused("x"), "one pause still holds")
	n.Resume("x")
	assert.False(t, n.Paused("x"))
	before := n.Wall("x")
	n.JumpClock("x", time.Hour)
	assert.GreaterOrEqual(t, n.Wall("x")-before, time.Hour)
	assert.Less(t, n.Wall("y")-before, time.Hour, "other nodes keep their clocks")
}

// TestHoldCutsDeliversAtTheHeal: with HoldCuts a cut holds a request until
// the heal and it lands then (its caller gave up on it), unless it waited
// longer than the hold (the connection reset); without, the cut drops it.
func TestHoldCutsDeliversAtTheHeal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hold   time.Duration
		heal   time.Duration
		served bool
		held   int
	}{
		{"a cut that holds delivers at the heal", time.Second, 150 * time.Millisecond, true, 1},
		{"a cut that outlasts the hold resets the connection", 60 * time.Millisecond, 300 * time.Millisecond, false, 1},
		{"a cut without HoldCuts drops", 0, 150 * time.Millisecond, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			n := New()
			if tc.hold > 0 {
				n.HoldCuts("s", tc.hold)
			}
			n.Block("c1", "s")
			got := make(chan Delivery, 1)
			start := time.Now()
			_, err := CallDelivered(n, "c1", "s", ping{}, 30*time.Millisecond, func(d Delivery) string { got <- d; return "ok" })
			require.ErrorIs(t, err, ErrTimeout)
			time.AfterFunc(tc.heal, func() { n.Unblock("c1", "s") })
			select {
			case d := <-got:
				require.True(t, tc.served, "served although it should have been lost")
				assert.True(t, d.Abandoned, "its caller had given up")
				assert.GreaterOrEqual(t, time.Since(start), tc.heal, "not before the heal")
			case <-time.After(tc.heal + 200*time.Millisecond):
				require.False(t, tc.served, "never served")
			}
			assert.Equal(t, tc.held, n.Stats().Held)
			n.Close()
		})
	}
}
