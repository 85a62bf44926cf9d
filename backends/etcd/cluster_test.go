package etcd

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// world is a 3-member cluster with etcd1 leading from the start.
func world(t *testing.T, opts ...string) (*sim.World, *Cluster) {
	t.Helper()
	o := DefaultOptions()
	o.InitialLeader = "etcd1"
	for i := 0; i+1 < len(opts); i += 2 {
		require.NoError(t, o.Set(opts[i], opts[i+1]))
	}
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: 2 * time.Millisecond}})
	c, err := NewCluster(w, o)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w, c
}

func TestPutGetAndWatchThroughTheLog(t *testing.T) {
	w, c := world(t)
	var got []string
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		kv := c.NewKV(p)
		_, err := kv.Txn(p, Txn{Then: []Op{put("k", "v", 0)}})
		require.NoError(t, err)
		r, err := kv.Get(p, Op{Key: "k"})
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("%s=%s@%d", r.Results[0].Kvs[0].Key, r.Results[0].Kvs[0].Value, r.Results[0].Kvs[0].CreateRev))
		got = append(got, fmt.Sprint("deleted:", kv.WaitDelete(p, "k", r.Revision, p.Mono()+5*time.Second)))
		got = append(got, fmt.Sprint("timed out:", !kv.WaitDelete(p, "never", r.Revision, p.Mono()+3*time.Second)))
	})})
	w.AddNode("c2", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(2 * time.Second)
		_, err := c.NewKV(p).Txn(p, Txn{Then: []Op{{Type: OpDelete, Key: "k"}}})
		require.NoError(t, err)
	})})
	w.Run(20 * time.Second)
	assert.Equal(t, []string{"k=v@2", "deleted:true", "timed out:true"}, got)
}

// leaseLife grants a lease with a key on it, keeps it alive once at 1 s,
// then lets it lapse; crashLeaderAt (0: never) crashes the leader for 5 s.
// It returns when the key was deleted and the cluster's events.
func leaseLife(t *testing.T, crashLeaderAt time.Duration, opts ...string) (time.Duration, []SystemEvent) {
	w, c := world(t, opts...)
	var gone time.Duration
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		kv := c.NewKV(p)
		p.Sleep(500 * time.Millisecond)
		g, err := kv.Grant(p, 10*time.Second)
		require.NoError(t, err)
		r, err := kv.Txn(p, Txn{Then: []Op{put("held", "", g.Lease)}})
		require.NoError(t, err)
		p.Sleep(time.Second - p.World().Now())
		ttl, err := kv.KeepAliveOnce(p, g.Lease)
		require.NoError(t, err)
		require.Equal(t, 10*time.Second, ttl)
		if kv.WaitDelete(p, "held", r.Revision, p.Mono()+time.Minute) {
			gone = p.World().Now()
		}
	})})
	if crashLeaderAt > 0 {
		w.At(crashLeaderAt, func() {
			l := c.Leader()
			l.Crash()
			w.After(5*time.Second, l.Restart)
		})
	}
	w.Run(time.Minute)
	return gone, c.Events()
}

func TestTheLeaderExpiresLeasesAndANewLeaderRestartsThem(t *testing.T) {
	tests := []struct {
		name         string
		crashLeader  time.Duration
		opts         []string
		goneFrom     time.Duration
		goneTo       time.Duration
		wantExtended bool
	}{
		{"no leader change: TTL after the keep-alive", 0, nil, 11 * time.Second, 11600 * time.Millisecond, false},
		{"leader change at 5s: restarted for election timeout + TTL", 5 * time.Second, nil, 17 * time.Second, 19 * time.Second, true},
		{"leader change, checkpointed keep-alives: no extension", 5 * time.Second,
			[]string{"leader-change-extends", "false"}, 11 * time.Second, 11600 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gone, events := leaseLife(t, tc.crashLeader, tc.opts...)
			assert.GreaterOrEqual(t, gone, tc.goneFrom)
			assert.LessOrEqual(t, gone, tc.goneTo)
			kinds := map[system.EventKind]int{}
			for _, e := range events {
				kinds[e.Kind]++
			}
			assert.Equal(t, 1, kinds[system.EventLeaseExpired])
			assert.Equal(t, tc.wantExtended, kinds[system.EventLeaseExtended] > 0)
		})
	}
}

func TestMinimumTTL(t *testing.T) {
	o := DefaultOptions()
	o.TTL = time.Second
	assert.Equal(t, 2*time.Second, o.EffectiveTTL(), "1.5 election timeouts of 1s, rounded up to seconds")
}

// lockRun runs clients that each take the lock once (holding it hold) and
// reports their grants in order.
func lockRun(t *testing.T, clients int, hold time.Duration, opts ...string) []string {
	w, c := world(t, opts...)
	var got []string
	for i := range clients {
		name := fmt.Sprintf("c%d", i+1)
		w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
			p.Sleep(time.Duration(i) * 100 * time.Millisecond)
			l := c.NewLock(p)
			lease, err := l.Acquire("k", 30*time.Second)
			if err != nil {
				got = append(got, name+" "+err.Error())
				return
			}
			got = append(got, fmt.Sprintf("%s token %d", name, lease.Token))
			p.Sleep(hold)
			require.NoError(t, l.Release(lease))
		})})
	}
	w.Run(time.Minute)
	return got
}

func TestBothLocksGrantInQueueOrderWithIncreasingTokens(t *testing.T) {
	for _, kind := range []string{"mutex", "txn"} {
		t.Run(kind, func(t *testing.T) {
			got := lockRun(t, 3, time.Second, "lock", kind)
			require.Len(t, got, 3)
			var prev uint64
			for i, g := range got {
				var name string
				var tok uint64
				_, err := fmt.Sscanf(g, "%s token %d", &name, &tok)
				require.NoError(t, err, g)
				assert.Greater(t, tok, prev, "grant %d", i)
				prev = tok
			}
			if kind == "mutex" {
				assert.Equal(t, []string{"c1", "c2", "c3"}, []string{got[0][:2], got[1][:2], got[2][:2]}, "a queue: first come, first served")
			}
		})
	}
}

func TestTryLockFailsAtOnceAndLeavesNoKey(t *testing.T) {
	w, c := world(t)
	var errs []error
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		l := c.NewLock(p)
		_, err := l.Acquire("k", time.Second)
		require.NoError(t, err)
		p.Sleep(10 * time.Second)
	})})
	w.AddNode("c2", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(2 * time.Second)
		_, err := c.NewLock(p).Acquire("k", 0)
		errs = append(errs, err)
	})})
	w.Run(5 * time.Second)
	require.Len(t, errs, 1)
	assert.True(t, errors.Is(errs[0], lockapi.ErrNotAcquired), "%v", errs[0])
	keys := c.Servers()[0].Store().Apply(0, txn(Op{Type: OpGet, Key: "k/", Prefix: true})).Results[0].Kvs
	assert.Len(t, keys, 1, "the failed try-lock deleted its own key")
}

func TestGuardedWriteFailsOnceTheLockKeyIsGone(t *testing.T) {
	w, c := world(t)
	var errs []string
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		l := c.NewLock(p)
		store := NewGuardedStore(l)
		lease, err := l.Acquire("k", time.Second)
		require.NoError(t, err)
		errs = append(errs, fmt.Sprint(store.Write("x", 1, lease.Token)))
		// Another client deletes the lock key (as a lease expiry would).
		_, err = c.NewKV(p).Txn(p, Txn{Then: []Op{{Type: OpDelete, Key: lease.Owner}}})
		require.NoError(t, err)
		err = store.Write("x", 2, lease.Token)
		errs = append(errs, fmt.Sprint(errors.Is(err, lockapi.ErrRejected)))
		v, err := store.Read("x", 0)
		require.NoError(t, err)
		errs = append(errs, fmt.Sprint(v))
	})})
	w.Run(10 * time.Second)
	assert.Equal(t, []string{"<nil>", "true", "1"}, errs)
}

// TestAnIsolatedLeaderStepsDown: etcd runs raft with CheckQuorum, so a leader
// that hears from no quorum for an election timeout steps down (within two)
// and stops answering keep-alives; a leader that still hears from a quorum
// stays. c1 is on the leader's side of the partition; the keep-alive is sent
// 3 s (three election timeouts) after the cut.
func TestAnIsolatedLeaderStepsDown(t *testing.T) {
	tests := []struct {
		name       string
		leaderSide []string // members with etcd1 and c1; the others are cut off
		wantLeader bool
		wantTTL    bool
	}{
		{"alone: steps down, no keep-alive answered", nil, false, false},
		{"with a follower: a quorum, stays and renews", []string{"etcd2"}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, c := world(t)
			var ttl time.Duration
			var kaErr error
			c1 := w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				kv := c.NewKV(p)
				p.Sleep(500 * time.Millisecond)
				g, err := kv.Grant(p, 10*time.Second)
				require.NoError(t, err)
				p.Sleep(5*time.Second - p.World().Now())
				ttl, kaErr = kv.KeepAliveOnce(p, g.Lease)
			})})
			var leading bool
			w.At(2*time.Second, func() {
				side := []*sim.Node{w.Node("etcd1"), c1}
				var other []*sim.Node
				for _, n := range c.Nodes()[1:] {
					if slices.Contains(tc.leaderSide, n.Name()) {
						side = append(side, n)
					} else {
						other = append(other, n)
					}
				}
				w.Network().Partition(side, other)
			})
			w.At(4*time.Second, func() {
				st, _, _ := c.Servers()[0].State()
				leading = st == raft.StateLeader
			})
			w.Run(10 * time.Second)
			assert.Equal(t, tc.wantLeader, leading, "etcd1 leads 2 s (two election timeouts) after the cut")
			if tc.wantTTL {
				require.NoError(t, kaErr)
				assert.Equal(t, 10*time.Second, ttl)
			} else {
				assert.Zero(t, ttl, "no member renewed the lease")
				assert.True(t, lockapi.Unknown(kaErr), "%v", kaErr)
			}
		})
	}
}

// TestAFollowerCutFromTheLeaderAloneDoesNotDeposeIt: with CheckQuorum a
// member that heard from its leader within the election timeout ignores
// (pre-)votes, so etcd3, cut from etcd1 but not from etcd2, campaigns in
// vain and etcd1 keeps leading in its term.
func TestAFollowerCutFromTheLeaderAloneDoesNotDeposeIt(t *testing.T) {
	w, c := world(t)
	var term uint64
	w.At(2*time.Second, func() {
		_, _, term = c.Servers()[0].State()
		w.Network().Block(w.Node("etcd1"), w.Node("etcd3"))
		w.Network().Block(w.Node("etcd3"), w.Node("etcd1"))
	})
	w.Run(10 * time.Second)
	st, _, now := c.Servers()[0].State()
	assert.Equal(t, raft.StateLeader, st)
	assert.Equal(t, term, now, "no election since the cut")
}

// TestARetryRefusedForAGoneLeaseAfterATimeoutIsUnknown: a put under a lease
// whose first attempt timed out (its reply lost) and whose retry is refused
// because the lease is gone by then may have taken effect (the key lived
// until the revocation): the outcome is unknown, never a certain refusal.
func TestARetryRefusedForAGoneLeaseAfterATimeoutIsUnknown(t *testing.T) {
	tests := []struct {
		name        string
		revoke      bool
		wantErr     bool
		wantUnknown bool
	}{
		{"lease revoked while the reply was lost: unknown", true, true, true},
		{"lease alive: the retry answers", false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, c := world(t)
			var lease int64
			var err error
			var applied bool
			c1 := w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				kv := c.NewKV(p)
				p.Sleep(500 * time.Millisecond)
				g, gerr := kv.Grant(p, 10*time.Second)
				require.NoError(t, gerr)
				lease = g.Lease
				p.Sleep(2*time.Second - p.World().Now())
				_, err = kv.Txn(p, Txn{Then: []Op{put("k", "", g.Lease)}})
			})})
			w.At(2*time.Second-time.Millisecond, func() { w.Network().Block(w.Node("etcd1"), c1) })
			w.At(2100*time.Millisecond, func() {
				applied = c.Servers()[0].Store().Revision() == 2 // the put's revision
			})
			w.AddNode("c2", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				p.Sleep(2100 * time.Millisecond)
				if tc.revoke {
					_, rerr := c.NewKV(p).Do(p, Command{Type: CmdLeaseRevoke, Lease: lease}, false)
					require.NoError(t, rerr)
				}
			})})
			w.At(2300*time.Millisecond, func() { w.Network().Unblock(w.Node("etcd1"), c1) })
			w.Run(10 * time.Second)
			require.True(t, applied, "the first attempt applied; only its reply was lost")
			assert.Equal(t, tc.wantErr, err != nil, "%v", err)
			assert.Equal(t, tc.wantUnknown, lockapi.Unknown(err), "%v", err)
		})
	}
}
