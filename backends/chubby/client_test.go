package chubby

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends"
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
			assert.ErrorIs(t, relErr, backends.ErrUnknown)
			assert.NotErrorIs(t, relErr, backends.ErrNotHeld)
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
		{"no reply to any attempt: unknown", true, backends.ErrUnknown},
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
				c.OnRenew(func(_ backends.Lease, done bool, err error) {
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
			assert.NotErrorIs(t, renewals[0], backends.ErrNotHeld)
		})
	}
}
