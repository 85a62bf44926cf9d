package redislive

import (
	"context"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/internal/proc/proctest"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// needRedis skips a test under -short or when redis-server or
// redis-sentinel is not installed (the message names the Debian package).
func needRedis(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test starts real redis servers")
	}
	if _, err := redisBinary(); err != nil {
		t.Skip(err)
	}
	if _, err := proc.Binary("redis-sentinel", "redis-sentinel", "/usr/bin/redis-sentinel"); err != nil {
		t.Skip(err)
	}
}

// noLeakRedis is noLeak, allowing internal/proc's process starter (a goroutine
// that lives as long as the harness, started by the first server).
func noLeakRedis(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/locklab/locklab/internal/proc.startLocked.func1.1")}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// TestAReplicationLinkCutLosesAnAcknowledgedWrite: with two replicas
// lagging 3 s behind a third (far longer than the test needs between the
// write and the cut, even on a machine loaded by the other packages' tests:
// 300 ms was not, once), WAIT 1 is satisfied by the prompt one; a cut
// of a lagging replica's link right after the acknowledgement keeps the
// write from it (the held bytes never arrive while the link is cut).
func TestAReplicationLinkCutLosesAnAcknowledgedWrite(t *testing.T) {
	needRedis(t)
	noLeakRedis(t)
	bin, err := redisBinary()
	require.NoError(t, err)
	o := redis.DefaultOptions()
	o.Replicas = 3
	sys, c, err := deploySentinel(liveform.Deployment{Ctx: context.Background(), Test: scenario.Test{System: "redis", Clients: 1,
		SystemOptions: map[string]string{"replicas": "3"}}.WithDefaults(), Setup: 10 * time.Second, Dir: t.TempDir()}, o, bin)
	require.NoError(t, err)
	defer sys.Close()
	for _, r := range []string{"replica2", "replica3"} {
		ok, err := sys.Delay("redis", r, 3*time.Second, time.Time{})
		require.NoError(t, err)
		require.True(t, ok, "the replication link to %s is carried by locklab", r)
	}
	ctx := context.Background()
	primary := goredis.NewClient(&goredis.Options{Addr: c.proxies[[2]string{"c1", "redis"}].Addr(), Protocol: 2})
	defer primary.Close()
	lagging := goredis.NewClient(&goredis.Options{Addr: c.servers["replica3"].addr(), Protocol: 2})
	defer lagging.Close()
	conn := primary.Conn()
	defer conn.Close()
	require.NoError(t, conn.Do(ctx, "SET", "k", "v", "NX", "PX", 10000).Err())
	acked, err := conn.Do(ctx, "WAIT", 1, 1000).Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(1), acked, "only the prompt replica acknowledged")
	mine, err := sys.Cut("replica3", "redis")
	require.NoError(t, err)
	require.True(t, mine)
	time.Sleep(100 * time.Millisecond)
	_, err = lagging.Get(ctx, "k").Result()
	assert.ErrorIs(t, err, goredis.Nil, "the lagging replica never got the acknowledged write")
	require.NoError(t, sys.Heal("replica3", "redis"))
	assert.Eventually(t, func() bool { return lagging.Get(ctx, "k").Err() == nil }, 15*time.Second, 10*time.Millisecond,
		"after the heal the held bytes arrive")
}

// TestAClockJumpExpiresAKeyEarly: redis-server under libfaketime (the
// malloc-debug preload) expires a key when its wall clock jumps past the
// TTL, and libfaketime's shared-memory files go with the process.
func TestAClockJumpExpiresAKeyEarly(t *testing.T) {
	needRedis(t)
	noLeakRedis(t)
	jump := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.ClockJump, Targets: []string{"redis"}, Amount: nemesis.Duration(time.Minute)}}}
	bin, err := redisBinary()
	require.NoError(t, err)
	sys, c, err := deploySingle(liveform.Deployment{Ctx: context.Background(), Test: scenario.Test{System: "redis", Clients: 1, Schedule: &jump}.WithDefaults(),
		Setup: 10 * time.Second, Dir: t.TempDir()}, redis.DefaultOptions(), bin)
	require.NoError(t, err)
	var pids []int
	defer func() {
		sys.Close()
		for _, pid := range pids {
			assert.NoFileExists(t, fmt.Sprintf("/dev/shm/faketime_shm_%d", pid))
		}
	}()
	pids = append(pids, c.servers["redis"].process().Pid())
	ctx := context.Background()
	r := goredis.NewClient(&goredis.Options{Addr: c.servers["redis"].addr(), Protocol: 2})
	defer r.Close()
	require.NoError(t, r.Set(ctx, "k", "v", 30*time.Second).Err())
	require.NoError(t, sys.JumpClock("redis", 29*time.Second))
	assert.NoError(t, r.Get(ctx, "k").Err(), "29 s of a 30 s TTL: still there")
	require.NoError(t, sys.JumpClock("redis", 2*time.Second))
	assert.ErrorIs(t, r.Get(ctx, "k").Err(), goredis.Nil, "31 s: expired by the jump")
	now, err := r.Time(ctx).Result()
	require.NoError(t, err)
	assert.InDelta(t, 31, now.Sub(time.Now()).Seconds(), 2, "the server's TIME moved with its clock")
}

// TestARedisServerWhosePortWasTakenIsNotReady: a port reserved for a server
// and taken meanwhile by another redis-server (another run's) answers PING
// too; the start must see that the answer is not its server's (INFO's
// process_id) and fail as a server that exited before it was ready, which
// liveform.RetryDeploy tries again — not run against the other process.
func TestARedisServerWhosePortWasTakenIsNotReady(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts a real redis-server")
	}
	bin, err := redisBinary()
	if err != nil {
		t.Skip(err)
	}
	noLeakRedis(t)
	dir, g, ports := proctest.Group(t, 1)
	mk := func(name string) *redisServer {
		d, err := dataDir(dir, name)
		require.NoError(t, err)
		return &redisServer{name: name, bin: bin, port: ports[0], dir: d}
	}
	other := mk("other")
	require.NoError(t, other.start(context.Background(), g, 10*time.Second), "the process that takes the port")
	ours := mk("ours")
	err = ours.start(context.Background(), g, 10*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before it was ready", "liveform.RetryDeploy tries such a start again")
	assert.Contains(t, err.Error(), "answered by another process")
}

// TestADelayMatchingTheStoragesMessagesRunsLive: a delay with a match runs
// on the clients' links to the storage (locklab's own messages) and is
// refused on Redis's links, whose messages do not pass through locklab.
func TestADelayMatchingTheStoragesMessagesRunsLive(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		refused  bool
	}{
		{"c1", "storage", false},
		{"storage", "c2", false},
		{"c1", "redis", true},
		{"c1", "primary", true},
		{"redis", "replica1", true},
	} {
		f := nemesis.Fault{Kind: nemesis.Delay, From: []string{tc.from}, To: []string{tc.to}, Match: "storage.WriteReq", Amount: nemesis.Duration(time.Second)}
		assert.Equal(t, tc.refused, redisRefuse(f) != "", "%s -> %s: %q", tc.from, tc.to, redisRefuse(f))
	}
	assert.Empty(t, redisRefuse(nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"redis"}, Amount: nemesis.Duration(time.Second)}),
		"an unmatched delay between a client and Redis is the proxies' (it is not refused here)")
}
