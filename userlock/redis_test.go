package userlock_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
)

// The locks below are what a user writes against userlock.Redis: the same
// code runs on the simulated Redis and, live, on a *goredis.Client.

const lease = 2 * time.Second

// release is the compare-and-delete script of the fixed lock.
var release = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)

// fixedLock is SET NX PX, an INCR fencing token, and the Lua release.
type fixedLock struct {
	env userlock.Env
	rdb userlock.Redis
}

func (l *fixedLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		ok, err := l.rdb.SetNX(ctx, key, owner, lease).Result()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("SET NX %s: %v: %w", key, err, userlock.ErrUnknown)
		}
		if ok {
			token, err := l.rdb.Incr(ctx, key+":fence").Result()
			if err != nil {
				return userlock.Lease{}, fmt.Errorf("INCR %s:fence: %v: %w", key, err, userlock.ErrUnknown)
			}
			return userlock.Lease{Key: key, Owner: owner, HasToken: true, Token: uint64(token), Deadline: start + lease}, nil
		}
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

func (l *fixedLock) Release(le userlock.Lease) error {
	n, err := release.Run(context.Background(), l.rdb, []string{le.Key}, le.Owner).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("release %s: %v: %w", le.Key, err, userlock.ErrUnknown)
	case n == 0:
		return userlock.ErrNotHeld
	}
	return nil
}

// brokenLock makes the classic mistakes: SETNX then PEXPIRE as two
// commands, release by GET then DEL, no fencing.
type brokenLock struct {
	env userlock.Env
	rdb userlock.Redis
}

func (l *brokenLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		ok, err := l.rdb.SetNX(ctx, key, owner, 0).Result()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("SETNX %s: %v: %w", key, err, userlock.ErrUnknown)
		}
		if ok {
			if err := l.rdb.PExpire(ctx, key, lease).Err(); err != nil {
				return userlock.Lease{}, fmt.Errorf("PEXPIRE %s: %v: %w", key, err, userlock.ErrUnknown)
			}
			return userlock.Lease{Key: key, Owner: owner, Deadline: start + lease}, nil
		}
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

func (l *brokenLock) Release(le userlock.Lease) error {
	ctx := context.Background()
	v, err := l.rdb.Get(ctx, le.Key).Result()
	if err == goredis.Nil || v != le.Owner {
		return userlock.ErrNotHeld
	}
	if err != nil {
		return fmt.Errorf("GET %s: %v: %w", le.Key, err, userlock.ErrUnknown)
	}
	return l.rdb.Del(ctx, le.Key).Err()
}

var (
	fixedRedisLock = userlock.RedisLock{Spec: userlock.Spec{Name: "test-redis-fixed", Tokens: true, SafeRelease: true},
		New: func(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &fixedLock{env: env, rdb: rdb} }}
	brokenRedisLock = userlock.RedisLock{Spec: userlock.Spec{Name: "test-redis-broken"},
		New: func(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &brokenLock{env: env, rdb: rdb} }}
)

// registerRedis registers l's simulated system for the test.
func registerRedis(t *testing.T, l userlock.RedisLock) { registerSimulated(t, l.Simulated()) }

// registerSimulated registers a user lock's simulated system for the test.
func registerSimulated(t *testing.T, sys system.System) {
	system.Register(sys)
	t.Cleanup(func() { system.Unregister(sys.Name) })
}

// redisVariant is the staged scenario of l called name.
func redisVariant(t *testing.T, l userlock.RedisLock, name string) scenario.Test {
	return variantOf(t, l.Scenarios(), name)
}

// variantOf is the variant called name of the first of a lock's staged
// scenarios.
func variantOf(t *testing.T, scenarios []scenario.Scenario, name string) scenario.Test {
	for _, v := range scenarios[0].Variants {
		if v.Name == name {
			return v.Test
		}
	}
	t.Fatalf("%s has no scenario %s", scenarios[0].Name, name)
	return scenario.Test{}
}

// runWithGrants runs test with the servers' record of grants kept.
func runWithGrants(t *testing.T, test scenario.Test) (scenario.Result, *lockapi.GrantLog) {
	t.Helper()
	p, err := harness.Prepare(test)
	require.NoError(t, err)
	p.RecordGrants()
	r, err := p.Run()
	require.NoError(t, err)
	return r, p.Deployment.Grants
}

// runBroken runs test, which must break the lock (critical-sections
// INVALID) through no misconduct of the lock's (lock-conduct valid), and
// returns the servers' record.
func runBroken(t *testing.T, test scenario.Test) *lockapi.GrantLog {
	t.Helper()
	r, grants := runWithGrants(t, test)
	v := verdict(r, "critical-sections")
	require.Equal(t, models.Invalid, v.Result, v.Reason)
	assert.Equal(t, models.Valid, verdict(r, userlock.ConductCheck).Result)
	return grants
}

// TestTheGCPauseBreaksTheBrokenRedisLockAndTheRecordShowsIt: the paused
// holder writes after its lease ran out, while the servers' record shows
// the lock granted to the other client.
func TestTheGCPauseBreaksTheBrokenRedisLockAndTheRecordShowsIt(t *testing.T) {
	registerRedis(t, brokenRedisLock)
	grants := runBroken(t, redisVariant(t, brokenRedisLock, "gc-pause"))
	hs := grants.Holdings()
	require.GreaterOrEqual(t, len(hs), 2, "the record: %v", hs)
	assert.Equal(t, "c1", hs[0].Client, "c1 held first: %v", hs)
	var taken bool
	for _, h := range hs[1:] {
		// c2 was granted the lock while c1 was paused (its pause outlasts its lease)
		taken = taken || (h.Client == "c2" && h.From >= hs[0].To && h.From < hs[0].From+userlock.HolderPause)
	}
	assert.True(t, taken, "the record shows c2 granted the lock during c1's pause: %v", hs)
}

// TestTheFixedRedisLockWithFencedStorageSurvivesTheGCPause: the stale
// write carries an older token and the storage refuses it.
func TestTheFixedRedisLockWithFencedStorageSurvivesTheGCPause(t *testing.T) {
	registerRedis(t, fixedRedisLock)
	r, err := harness.Run(redisVariant(t, fixedRedisLock, "gc-pause-fenced"))
	require.NoError(t, err)
	for _, check := range []string{"critical-sections", "fencing-tokens", userlock.ConductCheck} {
		v := verdict(r, check)
		assert.Equal(t, models.Valid, v.Result, "%s: %s", check, v.Reason)
	}
	assert.NotEmpty(t, r.Events)
}

// TestARedisLockRunIsDeterministic: the same seed gives the same history.
func TestARedisLockRunIsDeterministic(t *testing.T) {
	for _, l := range []userlock.RedisLock{fixedRedisLock, brokenRedisLock} {
		t.Run(l.Name, func(t *testing.T) {
			registerRedis(t, l)
			assertByteIdenticalRuns(t, scenario.Test{System: l.Name, Workload: "fenced-counter", Clients: 3, Seed: 7,
				Time: 20 * time.Second, Nemesis: "random", SystemOptions: map[string]string{"replicas": "2"}})
		})
	}
}

// strayLock sets its TTL from a goroutine of its own: in the simulator the
// call is refused (it never reaches the simulated Redis) and lock-conduct
// names it.
type strayLock struct {
	env userlock.Env
	rdb userlock.Redis
}

func (l *strayLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	ok, err := l.rdb.SetNX(ctx, key, l.env.Name(), 0).Result()
	if err != nil || !ok {
		return userlock.Lease{}, fmt.Errorf("held: %w", userlock.ErrNotAcquired)
	}
	done := make(chan struct{})
	go func() { l.rdb.PExpire(ctx, key, 5*time.Second); close(done) }()
	<-done
	return userlock.Lease{Key: key, Owner: l.env.Name()}, nil
}

func (l *strayLock) Release(le userlock.Lease) error {
	return l.rdb.Del(context.Background(), le.Key).Err()
}

// TestACallFromAGoroutineOfTheLocksOwnIsItsVerdict: lock-conduct INVALID,
// naming the client and the call; the run completes (exit 1, not 4).
func TestACallFromAGoroutineOfTheLocksOwnIsItsVerdict(t *testing.T) {
	l := userlock.RedisLock{Spec: userlock.Spec{Name: "test-redis-stray"},
		New: func(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &strayLock{env: env, rdb: rdb} }}
	registerRedis(t, l)
	r, err := harness.Run(scenario.Test{System: l.Name, Clients: 2, Seed: 1, Time: 5 * time.Second})
	require.NoError(t, err)
	v := verdict(r, userlock.ConductCheck)
	assert.Equal(t, models.Invalid, v.Result, v.Reason)
	assert.Regexp(t, `client c\d's PEXPIRE\("k", "5000"\) at .*: called Redis from a goroutine other than the client's`, v.Reason)
	assert.Equal(t, judge.ExitInvalid, judge.ExitCode(r.Verdicts))
}

// assertByteIdenticalRuns runs test twice: the histories, as written to
// history.jsonl, are the same bytes.
func assertByteIdenticalRuns(t *testing.T, test scenario.Test) {
	t.Helper()
	var outs [2]bytes.Buffer
	for i := range outs {
		r, err := harness.Run(test)
		require.NoError(t, err)
		require.NoError(t, history.Write(&outs[i], r.Events))
	}
	require.Greater(t, bytes.Count(outs[0].Bytes(), []byte("\n")), 20, "the clients did something")
	assert.Equal(t, outs[0].String(), outs[1].String())
}
