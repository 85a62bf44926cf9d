package chubby

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// newTestCell is a default cell of three replicas on a quiet network, with
// a master elected.
func newTestCell(t *testing.T, o Options) (*sim.World, *Cell) {
	t.Helper()
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	c, err := NewCell(w, o)
	require.NoError(t, err)
	w.Run(5 * time.Second)
	require.NotNil(t, c.Master(), "no master after 5 s")
	return w, c
}

// dropReplies drops the replies to the first n requests matching op from
// node n.
func dropReplies(w *sim.World, from *sim.Node, op Op, n int) {
	if n == 0 {
		return // a rule's Count of 0 is no limit
	}
	asked := map[uint64]bool{}
	w.Network().AddRule(sim.Rule{From: from, Match: func(m sim.Message) bool {
		if r, ok := m.Body.(Request); ok && r.Op == op {
			asked[m.ID] = true
		}
		return false
	}})
	w.Network().AddRule(sim.Rule{To: from, Drop: true, Count: n, Match: func(m sim.Message) bool {
		return asked[m.ReplyTo]
	}})
}

// TestReleaseAfterALostReplyIsUnknown: a release whose first attempt was
// applied but whose reply was lost is retried; the retry finds the lock no
// longer ours ("busy"). That must not be reported as a release that did not
// happen (issue 28: the next grant then looked like a broken lease).
func TestReleaseAfterALostReplyIsUnknown(t *testing.T) {
	tests := []struct {
		name    string
		lost    int
		unknown bool
	}{
		{"every reply arrives: released", 0, false},
		{"the applied attempt's reply is lost: unknown, not failed", 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, cell := newTestCell(t, DefaultOptions())
			n := w.AddNode("c1", sim.NodeOptions{})
			dropReplies(w, n, OpRelease, tc.lost)
			var relErr error
			released := false
			n.Spawn("c1", func(p *sim.Proc) {
				c := cell.NewClient(p)
				l, err := c.Acquire("k", time.Second)
				require.NoError(t, err)
				relErr = c.Release(l)
				released = true
			})
			w.Run(30 * time.Second)
			require.True(t, released)
			m := cell.servers[cell.Master().ID()-cell.nodes[0].ID()]
			assert.Zero(t, m.state.locks["k"].holder, "the release took effect on the master")
			if !tc.unknown {
				assert.NoError(t, relErr)
				return
			}
			assert.ErrorContains(t, relErr, "busy", "the retry found the lock already released")
			assert.ErrorIs(t, relErr, lockapi.ErrUnknown)
			assert.NotErrorIs(t, relErr, lockapi.ErrNotHeld)
		})
	}
}

// TestAKeepAliveWithNoReplyIsUnknown: a KeepAlive that no master answered
// may have extended the session or not; its renewal is unknown, not "not
// held". One the master answered "expired" is certain.
func TestAKeepAliveWithNoReplyIsUnknown(t *testing.T) {
	tests := []struct {
		name    string
		drop    bool
		wantErr error
	}{
		{"answered: renewed", false, nil},
		{"no reply to any attempt: unknown", true, lockapi.ErrUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, cell := newTestCell(t, DefaultOptions())
			n := w.AddNode("c1", sim.NodeOptions{})
			if tc.drop {
				dropReplies(w, n, OpKeepAlive, 1<<20)
			}
			var renewals []error
			n.Spawn("c1", func(p *sim.Proc) {
				c := cell.NewClient(p)
				c.OnRenew(func(_ lockapi.Lease, done bool, err error) {
					if done {
						renewals = append(renewals, err)
					}
				})
				_, err := c.Acquire("k", time.Second)
				require.NoError(t, err)
			})
			w.Run(20 * time.Second) // a KeepAlive's attempts span 2×5 request timeouts
			require.NotEmpty(t, renewals)
			if tc.wantErr == nil {
				assert.NoError(t, renewals[0])
				return
			}
			assert.ErrorIs(t, renewals[0], tc.wantErr)
			assert.NotErrorIs(t, renewals[0], lockapi.ErrNotHeld)
		})
	}
}

// TestLockDelaySurvivesAMasterChange: c1's session expires while it holds k
// (it is cut off), so the master starts k's lock-delay; that master then
// crashes. The new master knows from the log that k was freed by an expiry,
// not when the old master's lock-delay started, and so keeps k delayed for a
// whole lock-delay from its election (issue 28: it used to forget it and
// grant k to c2 at once).
func TestLockDelaySurvivesAMasterChange(t *testing.T) {
	tests := []struct {
		name    string
		crashAt time.Duration // 0: the master stays
		askAt   time.Duration
		granted bool
	}{
		{"the same master: k is delayed", 0, 40 * time.Second, false},
		{"a new master: k is still delayed", 30 * time.Second, 40 * time.Second, false},
		{"a new master: k is granted after its whole lock-delay", 30 * time.Second, 100 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			w, cell := newTestCell(t, o)
			c1 := w.AddNode("c1", sim.NodeOptions{})
			c1.Spawn("c1", func(p *sim.Proc) {
				_, err := cell.NewClient(p).Acquire("k", time.Second)
				require.NoError(t, err)
				for _, n := range cell.Nodes() {
					w.Network().Block(c1, n)
					w.Network().Block(n, c1)
				}
			})
			if tc.crashAt > 0 {
				w.At(tc.crashAt, func() { cell.Master().Crash() })
			}
			var got error
			asked := false
			c2 := w.AddNode("c2", sim.NodeOptions{})
			c2.Spawn("c2", func(p *sim.Proc) {
				p.Sleep(tc.askAt - p.World().Now())
				_, got = cell.NewClient(p).Acquire("k", 0)
				asked = true
			})
			w.Run(tc.askAt + 30*time.Second - w.Now())
			require.True(t, asked)
			require.Equal(t, 1, cell.Expired, "c1's session expired")
			if tc.crashAt > 0 {
				require.GreaterOrEqual(t, cell.Elections, 2, "a new master was elected")
			}
			if tc.granted {
				assert.NoError(t, got)
				return
			}
			assert.ErrorIs(t, got, lockapi.ErrNotAcquired)
		})
	}
}

// TestLockDelayWindowsAreReported: the cell tells of every lock-delay window
// (issue 28: the history needs them, for the liveness check to count a lock
// held back by design as not free): a master's window opens at the expiry
// and closes when the lock-delay runs out on its clock, or when it stops
// being master; a new master opens its own from its election. Without a
// lock-delay there is none.
func TestLockDelayWindowsAreReported(t *testing.T) {
	tests := []struct {
		name      string
		lockDelay time.Duration
		crashAt   time.Duration // 0: the master stays
		windows   int
	}{
		{"the same master: one window of a whole lock-delay", time.Minute, 0, 1},
		{"a new master: the old window closes at the crash, a new one opens at the election", time.Minute, 30 * time.Second, 2},
		{"no lock-delay: no window", 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.LockDelay = tc.lockDelay
			w, cell := newTestCell(t, o)
			var expiredAt, crashedAt time.Duration
			type window struct {
				master, detail string
				start, stop    time.Duration
			}
			var ws []window
			cell.OnEvent = func(ev Event) {
				switch ev.F {
				case "session-expired":
					expiredAt = ev.At
				case "master-elected":
					if crashedAt > 0 {
						require.NotEmpty(t, ws, "the new master's window opens with its election")
					}
				case "lock-delay":
					require.Equal(t, "k", ev.Lock)
					if !ev.Over {
						ws = append(ws, window{master: ev.Targets[0], detail: ev.Detail, start: ev.At, stop: -1})
						return
					}
					require.NotEmpty(t, ws)
					last := &ws[len(ws)-1]
					if last.stop >= 0 || last.master != ev.Targets[0] {
						last = &ws[len(ws)-2]
					}
					assert.Equal(t, last.detail, ev.Detail, "a window's end carries its start's detail")
					last.stop = ev.At
				}
			}
			c1 := w.AddNode("c1", sim.NodeOptions{})
			c1.Spawn("c1", func(p *sim.Proc) {
				_, err := cell.NewClient(p).Acquire("k", time.Second)
				require.NoError(t, err)
				for _, n := range cell.Nodes() {
					w.Network().Block(c1, n)
					w.Network().Block(n, c1)
				}
			})
			if tc.crashAt > 0 {
				w.At(tc.crashAt, func() { crashedAt = w.Now(); cell.Master().Crash() })
			}
			w.Run(200*time.Second - w.Now())
			require.Equal(t, 1, cell.Expired, "c1's session expired")
			require.Len(t, ws, tc.windows)
			if tc.windows == 0 {
				return
			}
			assert.Equal(t, expiredAt, ws[0].start, "the first window opens at the expiry")
			assert.Contains(t, ws[0].detail, "c1's session")
			if tc.crashAt == 0 {
				assert.Equal(t, expiredAt+tc.lockDelay, ws[0].stop, "and closes a lock-delay later")
				return
			}
			assert.Equal(t, crashedAt, ws[0].stop, "the crashed master's window closes at its crash")
			assert.NotEqual(t, ws[0].master, ws[1].master)
			assert.Greater(t, ws[1].start, crashedAt)
			assert.Contains(t, ws[1].detail, "elected")
			assert.Equal(t, ws[1].start+tc.lockDelay, ws[1].stop, "the new master's closes a whole lock-delay after its election")
		})
	}
}

// TestTheRecordOfGrants: the cell's record of grants, in true time. A clean
// release ends a grant; a grant whose session expires holds until its lease
// promise and then through the lock-delay, and the next grant comes after.
func TestTheRecordOfGrants(t *testing.T) {
	tests := []struct {
		name      string
		lockDelay time.Duration
	}{
		{"with lock-delay", time.Minute},
		{"without lock-delay", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.LockDelay = tc.lockDelay
			w, cell := newTestCell(t, o)
			log := lockapi.NewGrantLog(1)
			cell.RecordGrants(log)
			c1 := w.AddNode("c1", sim.NodeOptions{})
			var expiredBy time.Duration
			c1.Spawn("c1", func(p *sim.Proc) {
				c := cell.NewClient(p)
				l, err := c.Acquire("k", time.Second)
				require.NoError(t, err)
				require.NoError(t, c.Release(l))
				_, err = c.Acquire("k", time.Second)
				require.NoError(t, err)
				for _, n := range cell.Nodes() {
					w.Network().Block(c1, n)
					w.Network().Block(n, c1)
				}
				expiredBy = p.World().Now()
			})
			c2 := w.AddNode("c2", sim.NodeOptions{})
			c2.Spawn("c2", func(p *sim.Proc) {
				p.Sleep(10 * time.Second)
				_, err := cell.NewClient(p).Acquire("k", 2*time.Minute)
				require.NoError(t, err)
			})
			w.Run(3 * time.Minute)
			gs := log.Grants()
			require.Len(t, gs, 3)
			assert.Equal(t, []string{"c1", "c1", "c2"}, []string{gs[0].Client, gs[1].Client, gs[2].Client})
			assert.Positive(t, gs[0].Released, "a clean release ends the first grant")
			assert.Zero(t, gs[1].Released, "the second ends with its session")
			assert.GreaterOrEqual(t, gs[1].Until, expiredBy+o.Lease+tc.lockDelay, "its lease, then its lock-delay")
			assert.GreaterOrEqual(t, gs[2].At, gs[1].Until, "the next grant comes after both")
			assert.Empty(t, log.Breaches())
		})
	}
}
