package raftkvlive

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/lockapi"
)

// testEnv is a plain live Env: the Net's clocks, real sleep.
type testEnv struct {
	net  *faultnet.Net
	name string
	rnd  *rand.Rand
}

func (e *testEnv) Name() string        { return e.name }
func (e *testEnv) Mono() time.Duration { return e.net.Now() }
func (e *testEnv) Wall() time.Duration { return e.net.Wall(e.name) }
func (e *testEnv) Rand() *rand.Rand    { return e.rnd }
func (e *testEnv) Sleep(d time.Duration) {
	if e.net.Sleep(d) != nil {
		runtime.Goexit()
	}
}

func newEnv(net *faultnet.Net, name string, seed uint64) *testEnv {
	return &testEnv{net: net, name: name, rnd: rand.New(rand.NewPCG(seed, 1))}
}

// startCluster starts a fast cluster; the cleanup closes it and checks that
// no goroutine of it survives.
func startCluster(t *testing.T, mutate func(*Options)) (*faultnet.Net, *Cluster) {
	t.Helper()
	opts := DefaultOptions().Fast()
	opts.Lease = 2 * time.Second
	if mutate != nil {
		mutate(&opts)
	}
	net := faultnet.New()
	c, err := NewCluster(net, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		net.Close()
		c.Close()
		goleak.VerifyNone(t, goleak.IgnoreCurrent())
	})
	_, err = c.WaitLeader(5 * time.Second)
	require.NoError(t, err)
	return net, c
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestClusterGrantsWithTokensAndRedirects(t *testing.T) {
	for _, nodes := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d nodes", nodes), func(t *testing.T) { grantsWithTokens(t, nodes) })
	}
}

func grantsWithTokens(t *testing.T, nodes int) {
	net, c := startCluster(t, func(o *Options) { o.Nodes = nodes })
	require.Len(t, c.Names(), nodes)
	a := c.NewClient(newEnv(net, "c1", 1), func() lockapi.Env { return newEnv(net, "c1", 2) })
	b := c.NewClient(newEnv(net, "c2", 3), func() lockapi.Env { return newEnv(net, "c2", 4) })
	la, err := a.Acquire("k", 0)
	require.NoError(t, err)
	_, err = b.Acquire("k", 0)
	assert.ErrorIs(t, err, lockapi.ErrNotAcquired, "held by c1")
	require.NoError(t, a.Release(la))
	lb, err := b.Acquire("k", time.Second)
	require.NoError(t, err)
	assert.Greater(t, lb.Token, la.Token, "fencing tokens increase")
	require.NoError(t, b.Release(lb))
}

func TestLeaderIsolationElectsAnotherLeader(t *testing.T) {
	net, c := startCluster(t, nil)
	old := c.Leader()
	for _, n := range c.Names() {
		if n != old {
			net.Block(old, n)
			net.Block(n, old)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	var fresh string
	for time.Now().Before(deadline) {
		for _, n := range c.Nodes() {
			if n.Name() != old && n.Raft().State() == raft.Leader {
				fresh = n.Name()
			}
		}
		if fresh != "" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.NotEmpty(t, fresh, "a majority side elects a leader")
	assert.NotEqual(t, old, fresh)
}

func TestCrashRestartKeepsTheLockState(t *testing.T) {
	net, c := startCluster(t, func(o *Options) { o.SnapshotThreshold = 2; o.TrailingLogs = 1 })
	a := c.NewClient(newEnv(net, "c1", 1), func() lockapi.Env { return newEnv(net, "c1", 2) })
	for range 5 {
		l, err := a.Acquire("k", time.Second)
		require.NoError(t, err)
		require.NoError(t, a.Release(l))
	}
	l, err := a.Acquire("k", time.Second)
	require.NoError(t, err)
	for _, n := range c.Nodes() {
		if err := n.Raft().Snapshot().Error(); !errors.Is(err, raft.ErrNothingNewToSnapshot) {
			require.NoError(t, err, "snapshot of %s", n.Name())
		}
	}
	for _, n := range c.Names() {
		require.NoError(t, c.Crash(n))
	}
	for _, n := range c.Names() {
		require.NoError(t, c.Restart(n))
	}
	_, err = c.WaitLeader(5 * time.Second)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		f := c.Node(c.Leader()).FSM()
		o, held := f.Lookup("k")
		return held && o.Token == l.Token
	}, 5*time.Second, 5*time.Millisecond, "the restarted group restores the holder from snapshot and log")
}

// TestRestartWithLostStoresRejoinsEmpty: restart=lose brings a follower back
// with no log, no vote and no snapshot; the leader replicates the lock state
// to it again.
func TestRestartWithLostStoresRejoinsEmpty(t *testing.T) {
	net, c := startCluster(t, func(o *Options) { o.Restart = RestartLose })
	a := c.NewClient(newEnv(net, "c1", 1), func() lockapi.Env { return newEnv(net, "c1", 2) })
	l, err := a.Acquire("k", time.Second)
	require.NoError(t, err)
	var follower string
	for _, n := range c.Names() {
		if n != c.Leader() {
			follower = n
		}
	}
	require.NoError(t, c.Crash(follower))
	assert.Nil(t, c.Node(follower).Raft(), "crashed")
	require.NoError(t, c.Restart(follower))
	idx, err := c.Node(follower).logs.LastIndex()
	require.NoError(t, err)
	assert.Zero(t, idx, "restart=lose starts from empty stores")
	require.Eventually(t, func() bool {
		o, held := c.Node(follower).FSM().Lookup("k")
		return held && o.Token == l.Token
	}, 5*time.Second, 5*time.Millisecond, "the leader replicates the holder to the empty node")
}

func TestPausedLeaderAppliesNothingUntilResumed(t *testing.T) {
	net, c := startCluster(t, func(o *Options) { o.InitialLeader = "n1" })
	_, err := c.WaitLeader(5 * time.Second)
	require.NoError(t, err)
	net.Pause("n1")
	cmd := lockfsm.Command{Op: lockfsm.OpTryLock, Key: "k", Acquirer: "x", Lease: time.Minute, Stamp: 1}
	_, err = faultnet.Call(net, "c1", "n1", raftkv.Request{Cmd: cmd}, 50*time.Millisecond,
		func() Response { return c.Serve("n1", raftkv.Request{Cmd: cmd}) })
	require.ErrorIs(t, err, faultnet.ErrTimeout, "a paused node answers nothing")
	_, held := c.Node("n1").FSM().Lookup("k")
	assert.False(t, held, "nothing was applied while paused")
	net.Resume("n1")
	_, err = faultnet.Call(net, "c1", "n1", raftkv.Request{Cmd: cmd}, time.Second,
		func() Response { return c.Serve("n1", raftkv.Request{Cmd: cmd}) })
	require.NoError(t, err, "resumed, n1 answers again (as leader or with a redirect)")
}

func TestSimOnlyOptionsAreRefused(t *testing.T) {
	_, err := ParseOptions(map[string]string{"tick": "10ms"})
	require.ErrorContains(t, err, "not available live")
	_, err = ParseOptions(map[string]string{"leader-lease-timeout": "2s"})
	require.ErrorContains(t, err, "must not exceed heartbeat-timeout")
}
