package raftkv

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// world is a raft group and client nodes on a quiet 1 ms network.
type world struct {
	w *sim.World
	c *Cluster
}

func newWorld(t *testing.T, seed uint64, o Options) *world {
	t.Helper()
	w := sim.NewWorld(sim.Config{Seed: seed, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	c, err := NewCluster(w, o)
	require.NoError(t, err)
	return &world{w: w, c: c}
}

// client runs body on a new client node.
func (w *world) client(name string, body func(p *sim.Proc, c *Client)) *sim.Node {
	n := w.w.AddNode(name, sim.NodeOptions{})
	n.Spawn(name, func(p *sim.Proc) { body(p, w.c.NewClient(p)) })
	return n
}

func (w *world) leaderName() string {
	if l := w.c.Leader(); l != nil {
		return l.Name()
	}
	return ""
}

func TestElectsOneLeaderAndReplaysExactly(t *testing.T) {
	timeline := func(seed uint64) []Election {
		w := newWorld(t, seed, DefaultOptions())
		w.w.Run(10 * time.Second)
		defer w.w.Close()
		assert.Empty(t, w.c.Violations())
		return w.c.Audit().Elections()
	}
	a, b := timeline(3), timeline(3)
	require.Len(t, a, 1, "a quiet cluster elects one leader and keeps it")
	assert.Equal(t, a, b, "the same seed elects the same leader at the same time")
	assert.Less(t, a[0].At, 3*time.Second)
	var differ bool
	for seed := uint64(4); seed < 10 && !differ; seed++ {
		differ = timeline(seed)[0] != a[0]
	}
	assert.True(t, differ, "other seeds elect differently")
}

func TestInitialLeaderCampaignsFirst(t *testing.T) {
	o := DefaultOptions()
	o.InitialLeader = "n2"
	w := newWorld(t, 1, o)
	w.w.Run(time.Second)
	assert.Equal(t, "n2", w.leaderName())
	el := w.c.Audit().Elections()
	require.Len(t, el, 1)
	assert.Less(t, el[0].At, 50*time.Millisecond)
}

func TestLockGrantsRefusesAndReenters(t *testing.T) {
	w := newWorld(t, 1, DefaultOptions())
	var log []string
	w.client("c1", func(p *sim.Proc, c *Client) {
		l, err := c.Acquire("k", 5*time.Second)
		require.NoError(t, err)
		assert.True(t, l.HasToken)
		inner, err := c.Acquire("k", 0)
		require.NoError(t, err)
		assert.Equal(t, l.Token, inner.Token, "a reentrant acquire keeps the token")
		assert.Equal(t, l.Owner, inner.Owner)
		p.Sleep(3 * time.Second)
		require.NoError(t, c.Release(inner))
		owner, held, err := c.Holder("k")
		require.NoError(t, err)
		log = append(log, "after the nested release: held="+map[bool]string{true: "yes", false: "no"}[held]+" by "+owner.Acquirer)
		p.Sleep(time.Second)
		require.NoError(t, c.Release(l))
		log = append(log, "released")
	})
	w.client("c2", func(p *sim.Proc, c *Client) {
		p.Sleep(3 * time.Second)
		_, err := c.Acquire("k", 0)
		assert.ErrorIs(t, err, lockapi.ErrNotAcquired)
		assert.ErrorContains(t, err, `context "c1"`)
		l, err := c.Acquire("k", 10*time.Second)
		require.NoError(t, err)
		log = append(log, "c2 acquired")
		assert.Greater(t, l.Token, uint64(1), "a new grant gets a new token")
	})
	w.w.Run(20 * time.Second)
	require.Len(t, log, 3)
	assert.Contains(t, log[0], "held=yes by c1-")
	assert.Equal(t, []string{"released", "c2 acquired"}, log[1:])
	assert.Empty(t, w.c.Violations())
}

func TestWatchdogKeepsTheLeaseUntilReleased(t *testing.T) {
	o := DefaultOptions()
	o.Lease = 3 * time.Second
	w := newWorld(t, 2, o)
	renewals := 0
	var c2Err error
	w.client("c1", func(p *sim.Proc, c *Client) {
		c.OnRenew(func(l lockapi.Lease, done bool, err error) {
			if done && err == nil {
				renewals++
			}
		})
		l, err := c.Acquire("k", 5*time.Second)
		require.NoError(t, err)
		p.Sleep(10 * time.Second)
		require.NoError(t, c.Release(l))
	})
	w.client("c2", func(p *sim.Proc, c *Client) {
		p.Sleep(8 * time.Second)
		_, c2Err = c.Acquire("k", 0)
	})
	w.w.Run(20 * time.Second)
	assert.ErrorIs(t, c2Err, lockapi.ErrNotAcquired)
	assert.GreaterOrEqual(t, renewals, 4)
}

func TestClientFollowsTheLeaderAcrossAPartition(t *testing.T) {
	o := DefaultOptions()
	o.InitialLeader = "n1"
	w := newWorld(t, 5, o)
	var results []error
	w.client("c1", func(p *sim.Proc, c *Client) {
		for range 20 {
			l, err := c.Acquire("k", 5*time.Second)
			results = append(results, err)
			if err == nil {
				_ = c.Release(l)
			}
			p.Sleep(500 * time.Millisecond)
		}
	})
	w.w.At(3*time.Second, func() {
		n1 := w.w.Node("n1")
		for _, x := range w.w.Nodes() {
			if x != n1 {
				w.w.Network().Block(n1, x)
				w.w.Network().Block(x, n1)
			}
		}
	})
	w.w.Run(30 * time.Second)
	ok := 0
	for _, err := range results {
		if err == nil {
			ok++
		}
	}
	assert.GreaterOrEqual(t, ok, 15, "acquires keep succeeding once a new leader is elected: %v", results)
	assert.NotEqual(t, "n1", w.leaderName())
	st, _, _ := w.c.Servers()[0].State()
	assert.Equal(t, raft.StateLeader, st, "the cut-off leader still believes it leads (no CheckQuorum)")
	assert.Empty(t, w.c.Violations())
	assert.GreaterOrEqual(t, len(w.c.Audit().Elections()), 2)
}

func TestCrashRestartReplaysTheLog(t *testing.T) {
	o := DefaultOptions()
	o.InitialLeader = "n1"
	w := newWorld(t, 6, o)
	var tokens []uint64
	w.client("c1", func(p *sim.Proc, c *Client) {
		for range 30 {
			if l, err := c.Acquire("k", 5*time.Second); err == nil {
				tokens = append(tokens, l.Token)
				_ = c.Release(l)
			}
			p.Sleep(200 * time.Millisecond)
		}
	})
	w.w.At(2*time.Second, func() {
		for _, n := range w.c.Nodes() {
			n.Crash()
		}
	})
	w.w.At(2500*time.Millisecond, func() {
		for _, n := range w.c.Nodes() {
			n.Restart()
		}
	})
	w.w.Run(30 * time.Second)
	require.NotEmpty(t, tokens)
	for i := 1; i < len(tokens); i++ {
		assert.Greater(t, tokens[i], tokens[i-1], "tokens survive a crash of every node (replayed from the disk)")
	}
	assert.Empty(t, w.c.Violations())
	for _, s := range w.c.Servers() {
		assert.Equal(t, w.c.Servers()[0].Machine().Fence(), s.Machine().Fence(), "every replica applied the same grants")
	}
}

func TestRequestLostInAPartitionIsUnknown(t *testing.T) {
	o := DefaultOptions()
	o.InitialLeader = "n1"
	w := newWorld(t, 7, o)
	var err error
	c1 := w.client("c1", func(p *sim.Proc, c *Client) {
		p.Sleep(2 * time.Second)
		_, err = c.Acquire("k", 0)
	})
	w.w.At(time.Second, func() {
		// c1 can reach only n1, which still believes it leads but cannot commit.
		w.w.Network().Partition([]*sim.Node{w.w.Node("n1"), c1}, []*sim.Node{w.w.Node("n2"), w.w.Node("n3")})
	})
	w.w.Run(10 * time.Second)
	assert.ErrorIs(t, err, lockapi.ErrUnknown, "the proposal may still commit: the outcome is unknown")
	assert.ErrorContains(t, err, "timed out")
}

func TestRetriedRequestTakesEffectOnce(t *testing.T) {
	o := DefaultOptions()
	o.InitialLeader = "n1"
	w := newWorld(t, 8, o)
	var lease lockapi.Lease
	var err error
	c1 := w.client("c1", func(p *sim.Proc, c *Client) {
		p.Sleep(time.Second)
		lease, err = c.Acquire("k", 0)
	})
	// The leader's first answer to c1 is lost: c1 retries the same request.
	w.w.Network().AddRule(sim.Rule{From: w.w.Node("n1"), To: c1, Drop: true, Count: 1,
		Match: func(m sim.Message) bool { _, ok := m.Body.(Response); return ok }})
	w.w.Run(5 * time.Second)
	require.NoError(t, err)
	owner, held := w.c.Servers()[0].Machine().Lookup("k")
	require.True(t, held)
	assert.Equal(t, 1, owner.Acquires, "the retry was answered from the session table, not applied again")
	assert.Equal(t, lease.Token, owner.Token)
}

func TestOptions(t *testing.T) {
	o := DefaultOptions()
	for _, kv := range [][2]string{{"nodes", "5"}, {"lease", "3s"}, {"stamp", "client"}, {"unlock", "delete"},
		{"initial-leader", "n4"}, {"fsync", "interval"}, {"prevote", "false"}} {
		require.NoError(t, o.Set(kv[0], kv[1]), kv[0])
	}
	assert.Equal(t, 5, o.Nodes)
	assert.Equal(t, StampClient, o.Stamp)
	assert.NoError(t, o.Validate())
	tests := []struct{ key, value, want string }{
		{"nodes", "4", `raftkv option nodes="4": want 3 or 5`},
		{"lease", "-1s", "must be positive"},
		{"stamp", "server", "want one of leader, client"},
		{"unlock", "never", "want one of count, delete"},
		{"colour", "red", `raftkv has no option "colour"`},
	}
	for _, tc := range tests {
		assert.ErrorContains(t, o.Set(tc.key, tc.value), tc.want)
	}
	o = DefaultOptions()
	o.InitialLeader = "n4"
	assert.ErrorContains(t, o.Validate(), "want a node name n1..n3")
	o = DefaultOptions()
	o.ElectionTimeout = 50 * time.Millisecond
	assert.ErrorContains(t, o.Validate(), "must exceed the heartbeat interval")
}

func TestResolveFollowsTheLeader(t *testing.T) {
	o := DefaultOptions()
	o.InitialLeader = "n3"
	w := newWorld(t, 1, o)
	ns, ok := w.c.Resolve("leader")
	assert.True(t, ok)
	assert.Empty(t, ns, "no leader before the first election")
	w.w.Run(time.Second)
	ns, _ = w.c.Resolve("leader")
	require.Len(t, ns, 1)
	assert.Equal(t, "n3", ns[0].Name())
	fs, _ := w.c.Resolve("followers")
	assert.Len(t, fs, 2)
	_, ok = w.c.Resolve("primary")
	assert.False(t, ok)
}

// TestAReleasedClustersStorageIsReusedAndChangesNothing: the next cluster
// starts its logs and tables in the storage of a released one (emptied), and
// runs exactly as a cluster in fresh storage does.
func TestAReleasedClustersStorageIsReusedAndChangesNothing(t *testing.T) {
	type outcome struct {
		elections []Election
		acks      int
		logs      [][]uint64 // each disk's (term, index) pairs
	}
	// runOnce also says how many of the new cluster's disk logs started in
	// a released cluster's array.
	runOnce := func() (outcome, *Cluster, int) {
		w := newWorld(t, 7, DefaultOptions())
		reused := 0
		for _, s := range w.c.Servers() {
			if cap(s.Disk().cache.entries) > 0 {
				reused++
			}
		}
		for i := range 3 {
			w.client(fmt.Sprintf("c%d", i), func(p *sim.Proc, c *Client) {
				for range 20 {
					if l, err := c.Acquire("k", time.Second); err == nil {
						p.Sleep(10 * time.Millisecond)
						_ = c.Release(l)
					}
				}
			})
		}
		w.w.Run(20 * time.Second)
		w.w.Close()
		require.Empty(t, w.c.Violations())
		o := outcome{elections: w.c.Audit().Elections(), acks: w.c.Audit().Acks()}
		for _, s := range w.c.Servers() {
			_, ents := s.Disk().Durable()
			var l []uint64
			for _, e := range ents {
				l = append(l, e.Term, e.Index)
			}
			o.logs = append(o.logs, l)
		}
		return o, w.c, reused
	}
	fresh, c, _ := runOnce()
	require.Positive(t, fresh.acks)
	c.Release()
	assert.Zero(t, c.Audit().Acks(), "a released cluster's audit is emptied")
	again, c2, reused := runOnce()
	assert.Equal(t, 3, reused, "every disk log starts in the released cluster's array")
	assert.Equal(t, fresh, again)
	c2.Release()
}
