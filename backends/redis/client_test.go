package redis

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// world is a Redis server and client nodes on a quiet 1 ms network.
type world struct {
	w   *sim.World
	srv *sim.Node
	rs  *Server
}

func newWorld(p Persistence) *world {
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	rs := NewServer(p)
	return &world{w: w, srv: w.AddNode("redis", sim.NodeOptions{Handler: rs}), rs: rs}
}

// client runs body on a new client node with a lock client using o.
func (w *world) client(name string, o Options, body func(p *sim.Proc, c *Client)) *sim.Node {
	n := w.w.AddNode(name, sim.NodeOptions{})
	n.Spawn(name, func(p *sim.Proc) { body(p, NewClient(p, w.srv.ID(), o)) })
	return n
}

func TestAcquireWaitsWithinItsBudget(t *testing.T) {
	w := newWorld(PersistNone)
	o := DefaultOptions()
	var log []string
	w.client("c1", o, func(p *sim.Proc, c *Client) {
		l, err := c.Acquire("k", 0)
		require.NoError(t, err)
		p.Sleep(2 * time.Second)
		require.NoError(t, c.Release(l))
	})
	w.client("c2", o, func(p *sim.Proc, c *Client) {
		p.Sleep(10 * time.Millisecond)
		_, err := c.Acquire("k", 500*time.Millisecond)
		log = append(log, fmt.Sprintf("short budget: not acquired=%v at %v", errors.Is(err, lockapi.ErrNotAcquired), p.World().Now().Round(100*time.Millisecond)))
		l, err := c.Acquire("k", 5*time.Second)
		log = append(log, fmt.Sprintf("long budget: err=%v after %v", err, p.World().Now().Round(time.Second)))
		assert.Equal(t, "k", l.Key)
	})
	w.w.Run(time.Minute)
	assert.Equal(t, []string{"short budget: not acquired=true at 500ms", "long budget: err=<nil> after 2s"}, log)
}

func TestLeaseExpiresOnTheServersWallClock(t *testing.T) {
	w := newWorld(PersistNone)
	o := DefaultOptions()
	o.TTL = 10 * time.Second
	var got error
	w.client("c1", o, func(p *sim.Proc, c *Client) {
		_, err := c.Acquire("k", 0)
		require.NoError(t, err)
	})
	w.client("c2", o, func(p *sim.Proc, c *Client) {
		p.Sleep(time.Second)
		w.srv.JumpClock(time.Minute) // the server's clock jumps: the lease is gone after 1 s
		_, got = c.Acquire("k", 0)
	})
	w.w.Run(time.Minute)
	assert.NoError(t, got)
}

func TestReleaseVariants(t *testing.T) {
	// c1's lease expires while it works; c2 takes the lock; c1 then releases.
	tests := []struct {
		release      Release
		c2StillHolds bool
	}{
		{ReleaseLua, true},
		{ReleaseDel, false},
		{ReleaseCheckThenDel, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.release), func(t *testing.T) {
			w := newWorld(PersistNone)
			o := DefaultOptions()
			o.TTL, o.Release = time.Second, tc.release
			var c1Err error
			w.client("c1", o, func(p *sim.Proc, c *Client) {
				l, err := c.Acquire("k", 0)
				require.NoError(t, err)
				p.Sleep(2500 * time.Millisecond)
				c1Err = c.Release(l)
			})
			w.client("c2", o, func(p *sim.Proc, c *Client) {
				p.Sleep(2 * time.Second)
				_, err := c.Acquire("k", 0)
				require.NoError(t, err)
			})
			w.w.Run(2600 * time.Millisecond)
			_, held := w.rs.Keyspace().lookup("k", w.srv.Wall())
			assert.Equal(t, tc.c2StillHolds, held)
			if tc.c2StillHolds {
				assert.ErrorIs(t, c1Err, lockapi.ErrNotHeld)
			} else {
				assert.NoError(t, c1Err, "plain DEL cannot tell it deleted someone else's lock")
			}
		})
	}
}

func TestWatchdogRenewsWhileHeldAndStopsAfterRelease(t *testing.T) {
	w := newWorld(PersistNone)
	o := DefaultOptions()
	o.TTL, o.Watchdog = 3*time.Second, true
	var renewals []string
	var c2Err error
	w.client("c1", o, func(p *sim.Proc, c *Client) {
		c.OnRenew(func(l lockapi.Lease, done bool, err error) {
			if done {
				renewals = append(renewals, fmt.Sprintf("%v ok=%v", p.World().Now().Round(time.Second), err == nil))
			}
		})
		l, err := c.Acquire("k", 0)
		require.NoError(t, err)
		p.Sleep(10 * time.Second) // far longer than the TTL: the watchdog keeps it
		require.NoError(t, c.Release(l))
	})
	w.client("c2", o, func(p *sim.Proc, c *Client) {
		p.Sleep(5 * time.Second)
		_, c2Err = c.Acquire("k", 0)
	})
	w.w.Run(20 * time.Second)
	assert.ErrorIs(t, c2Err, lockapi.ErrNotAcquired)
	assert.Equal(t, []string{"1s ok=true", "2s ok=true", "3s ok=true", "4s ok=true", "5s ok=true", "6s ok=true", "7s ok=true", "8s ok=true", "9s ok=true"}, renewals)
}

func TestWatchdogCannotSaveAPausedHolder(t *testing.T) {
	w := newWorld(PersistNone)
	o := DefaultOptions()
	o.TTL, o.Watchdog = 3*time.Second, true
	var c2Err error
	c1 := w.client("c1", o, func(p *sim.Proc, c *Client) {
		_, err := c.Acquire("k", 0)
		require.NoError(t, err)
		p.Sleep(time.Minute)
	})
	w.w.At(500*time.Millisecond, c1.Pause)
	w.w.At(10*time.Second, c1.Resume)
	w.client("c2", o, func(p *sim.Proc, c *Client) {
		p.Sleep(5 * time.Second)
		_, c2Err = c.Acquire("k", 0)
	})
	w.w.Run(20 * time.Second)
	assert.NoError(t, c2Err)
}

func TestFencingTokensAndReentrancy(t *testing.T) {
	tests := []struct {
		reentrancy Reentrancy
		nestedOK   bool
	}{
		{ReentrancyNone, false},
		{ReentrancyClient, true},
		{ReentrancyServer, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.reentrancy), func(t *testing.T) {
			w := newWorld(PersistNone)
			o := DefaultOptions()
			o.Fencing, o.Reentrancy = true, tc.reentrancy
			var tokens []uint64
			var nestedErr, otherErr error
			w.client("c1", o, func(p *sim.Proc, c *Client) {
				l, err := c.Acquire("k", 0)
				require.NoError(t, err)
				tokens = append(tokens, l.Token)
				inner, err := c.Acquire("k", 0)
				nestedErr = err
				if err == nil {
					assert.Equal(t, l.Token, inner.Token, "a nested acquire keeps the token")
					require.NoError(t, c.Release(inner))
				}
				p.Sleep(time.Second) // still held after the inner release
				require.NoError(t, c.Release(l))
				l, err = c.Acquire("k", 0)
				require.NoError(t, err)
				tokens = append(tokens, l.Token)
				require.NoError(t, c.Release(l))
			})
			w.client("c2", o, func(p *sim.Proc, c *Client) {
				p.Sleep(500 * time.Millisecond)
				_, otherErr = c.Acquire("k", 0)
			})
			w.w.Run(time.Minute)
			assert.Equal(t, []uint64{1, 2}, tokens)
			assert.Equal(t, tc.nestedOK, nestedErr == nil, "nested acquire: %v", nestedErr)
			assert.ErrorIs(t, otherErr, lockapi.ErrNotAcquired, "the lock is held throughout the nested section")
		})
	}
}

func TestPersistenceDecidesWhatSurvivesACrash(t *testing.T) {
	tests := []struct {
		p        Persistence
		survives bool
	}{
		{PersistNone, false},
		{PersistEverySec, true}, // the crash comes 2 s after the write
		{PersistAlways, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.p), func(t *testing.T) {
			w := newWorld(tc.p)
			o := DefaultOptions()
			o.TTL = time.Minute
			var err2 error
			w.client("c1", o, func(p *sim.Proc, c *Client) {
				_, err := c.Acquire("k", 0)
				require.NoError(t, err)
			})
			w.w.At(2*time.Second, w.srv.Crash)
			w.w.At(3*time.Second, w.srv.Restart)
			w.client("c2", o, func(p *sim.Proc, c *Client) {
				p.Sleep(4 * time.Second)
				_, err2 = c.Acquire("k", 0)
			})
			w.w.Run(10 * time.Second)
			assert.Equal(t, tc.survives, errors.Is(err2, lockapi.ErrNotAcquired), "err=%v", err2)
		})
	}
}

func TestEverySecLosesTheLastSecond(t *testing.T) {
	w := newWorld(PersistEverySec)
	o := DefaultOptions()
	o.TTL = time.Minute
	var err2 error
	w.client("c1", o, func(p *sim.Proc, c *Client) {
		p.Sleep(2100 * time.Millisecond)
		_, err := c.Acquire("k", 0)
		require.NoError(t, err)
	})
	w.w.At(2500*time.Millisecond, w.srv.Crash) // before the next fsync at 3 s
	w.w.At(2600*time.Millisecond, w.srv.Restart)
	w.client("c2", o, func(p *sim.Proc, c *Client) {
		p.Sleep(4 * time.Second)
		_, err2 = c.Acquire("k", 0)
	})
	w.w.Run(10 * time.Second)
	assert.NoError(t, err2, "the grant was lost in the crash")
}

func TestUnreachableServerGivesUnknown(t *testing.T) {
	w := newWorld(PersistNone)
	o := DefaultOptions()
	var err error
	c := w.client("c1", o, func(p *sim.Proc, c *Client) { _, err = c.Acquire("k", time.Second) })
	w.w.Network().Block(c, w.srv)
	w.w.Run(10 * time.Second)
	assert.ErrorIs(t, err, lockapi.ErrUnknown)
}

func TestWallClockBudgetIsFooledByAJumpBack(t *testing.T) {
	for _, clk := range []Clock{ClockMono, ClockWall} {
		t.Run(string(clk), func(t *testing.T) {
			w := newWorld(PersistNone)
			o := DefaultOptions()
			o.BudgetClock = clk
			w.client("holder", o, func(p *sim.Proc, c *Client) {
				_, err := c.Acquire("k", 0)
				require.NoError(t, err)
			})
			var gaveUp time.Duration
			waiter := w.client("waiter", o, func(p *sim.Proc, c *Client) {
				p.Sleep(10 * time.Millisecond)
				_, _ = c.Acquire("k", 2*time.Second)
				gaveUp = p.World().Now()
			})
			w.w.At(time.Second, func() { waiter.JumpClock(-5 * time.Second) })
			w.w.Run(time.Minute)
			if clk == ClockMono {
				assert.InDelta(t, 2.0, gaveUp.Seconds(), 0.2)
			} else {
				assert.Greater(t, gaveUp.Seconds(), 6.0, "a wall-clock budget waits out the jump")
			}
		})
	}
}

func TestOptionsSet(t *testing.T) {
	o := DefaultOptions()
	require.NoError(t, o.Set("ttl", "3s"))
	require.NoError(t, o.Set("release", "del"))
	require.NoError(t, o.Set("watchdog", "true"))
	assert.Equal(t, 3*time.Second, o.TTL)
	assert.Equal(t, ReleaseDel, o.Release)
	assert.True(t, o.Watchdog)
	assert.ErrorContains(t, o.Set("ttl", "-1s"), "ttl")
	assert.ErrorContains(t, o.Set("release", "unlink"), "want one of")
	assert.ErrorContains(t, o.Set("colour", "red"), `no option "colour"`)
}

// TestOwnerIDIsTheSprintfText: the owner id built without fmt reads exactly
// as fmt.Sprintf("%s-%d-%08x") does, and the unknown-outcome error reads and
// unwraps as the fmt.Errorf it replaces.
func TestOwnerIDIsTheSprintfText(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int
		r    uint32
	}{{"c1", 1, 0}, {"c12", 42, 0xabc}, {"client-7", 123456, 0xffffffff}, {"", 0, 0x1}} {
		assert.Equal(t, fmt.Sprintf("%s-%d-%08x", tc.name, tc.seq, tc.r), ownerID(tc.name, tc.seq, tc.r))
	}
	cause := fmt.Errorf("call to redis: %w after 1s", sim.ErrTimeout)
	want := fmt.Errorf("redis %s: %w: %w", "redis", lockapi.ErrUnknown, cause)
	got := &unknownError{node: "redis", errs: [2]error{lockapi.ErrUnknown, cause}}
	assert.Equal(t, want.Error(), got.Error())
	assert.ErrorIs(t, got, lockapi.ErrUnknown)
	assert.ErrorIs(t, got, sim.ErrTimeout)
}

// TestAGiveBackWithNoReplyIsUnknown: an acquire whose SET was not replicated
// as WAIT asked gives the key back; when that give-back gets no reply the key
// may still be ours, so the acquire is unknown, not refused (issue 28).
func TestAGiveBackWithNoReplyIsUnknown(t *testing.T) {
	tests := []struct {
		name    string
		lost    bool
		unknown bool
	}{
		{"the give-back answered: refused", false, false},
		{"the give-back's reply was lost: unknown", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(PersistNone)
			o := DefaultOptions()
			o.Wait, o.WaitTimeout = 1, 100*time.Millisecond // no replica: WAIT always falls short
			var got error
			n := w.client("c1", o, func(p *sim.Proc, c *Client) { _, got = c.Acquire("k", 0) })
			if tc.lost {
				asked := map[uint64]bool{}
				w.w.Network().AddRule(sim.Rule{From: n, Match: func(m sim.Message) bool {
					if _, ok := m.Body.(DelIfValue); ok {
						asked[m.ID] = true
					}
					return false
				}})
				w.w.Network().AddRule(sim.Rule{To: n, Drop: true, Match: func(m sim.Message) bool { return asked[m.ReplyTo] }})
			}
			w.w.Run(10 * time.Second)
			require.Error(t, got)
			if tc.unknown {
				assert.ErrorIs(t, got, lockapi.ErrUnknown)
				assert.NotErrorIs(t, got, lockapi.ErrNotAcquired)
				return
			}
			assert.ErrorIs(t, got, lockapi.ErrNotAcquired)
		})
	}
}
