package userlock

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// Redis is the Redis client a user's lock is written against: the methods
// of go-redis's *redis.Client (github.com/redis/go-redis/v9) that a lock
// uses, with their signatures, so that a *redis.Client satisfies it
// unchanged (live) and locklab's simulated client does too. It includes
// redis.Scripter, so redis.NewScript(...).Run works on it.
//
// In the simulator every call is one command to the simulated Redis,
// executed atomically (scripts by a real Lua interpreter, gopher-lua), with
// go-redis's replies, errors, timeouts and retries; a context's deadline is
// not honoured there (the read-timeout option is the timeout). The lock
// must call it from the goroutine that calls Acquire and Release: a call
// from a goroutine of its own is refused and reported (lock-conduct).
type Redis interface {
	Do(ctx context.Context, args ...any) *goredis.Cmd
	Eval(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd
	ScriptExists(ctx context.Context, hashes ...string) *goredis.BoolSliceCmd
	ScriptLoad(ctx context.Context, script string) *goredis.StringCmd
	Set(ctx context.Context, key string, value any, expiration time.Duration) *goredis.StatusCmd
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *goredis.BoolCmd
	SetArgs(ctx context.Context, key string, value any, a goredis.SetArgs) *goredis.StatusCmd
	Get(ctx context.Context, key string) *goredis.StringCmd
	Del(ctx context.Context, keys ...string) *goredis.IntCmd
	Exists(ctx context.Context, keys ...string) *goredis.IntCmd
	Incr(ctx context.Context, key string) *goredis.IntCmd
	Expire(ctx context.Context, key string, expiration time.Duration) *goredis.BoolCmd
	PExpire(ctx context.Context, key string, expiration time.Duration) *goredis.BoolCmd
	PExpireAt(ctx context.Context, key string, tm time.Time) *goredis.BoolCmd
	SetEx(ctx context.Context, key string, value any, expiration time.Duration) *goredis.StatusCmd
	GetSet(ctx context.Context, key string, value any) *goredis.StringCmd
	Unlink(ctx context.Context, keys ...string) *goredis.IntCmd
	TTL(ctx context.Context, key string) *goredis.DurationCmd
	PTTL(ctx context.Context, key string) *goredis.DurationCmd
	HSet(ctx context.Context, key string, values ...any) *goredis.IntCmd
	HGet(ctx context.Context, key, field string) *goredis.StringCmd
	HIncrBy(ctx context.Context, key, field string, incr int64) *goredis.IntCmd
	HDel(ctx context.Context, key string, fields ...string) *goredis.IntCmd
}

var (
	_ Redis = (*goredis.Client)(nil)
	_ Redis = (*redis.GoRedisClient)(nil)
)

// RedisLock is a user's lock over Redis.
type RedisLock struct {
	Spec
	// New makes the lock of one client: env is the client's environment,
	// rdb its Redis client (simulated, or a real *redis.Client live).
	New func(env Env, rdb Redis) Lock
	// LockKey is the Redis key the lock stores its lock in for the
	// workload's key (nil: the key itself). The servers' record of grants,
	// the ground truth of a simulated run, watches these keys: the holder is
	// the value stored there (a hash's field names, for a hash).
	LockKey func(key string) string
}

// RedisOptions are the options of a user's Redis lock's deployment: the
// simulated Redis servers' (Replicas, DownAfter, Persistence, ExpiryClock,
// RestartDelay, as the redis system's options of the same names) and the
// client's (ReadTimeout, MaxRetries: go-redis's Options).
type RedisOptions = redis.UserOptions

// RedisTable declares the options of a user's Redis lock.
var RedisTable = redis.UserTable

// RegisterRedis registers a user's lock over Redis as a system over the
// simulated Redis, with its staged scenarios. It panics on a spec without a
// name or without New. Its live form (against real redis-server through
// go-redis) is registered by userlock/live's RegisterRedis instead, which
// calls this one: a program that does not import that package builds
// without the live runner's servers and clients.
func RegisterRedis(l RedisLock) {
	l.registerOver("Redis", l.New != nil, l.Simulated)
}

// Simulated is the lock's system over the simulated Redis, as RegisterRedis
// registers it (without the live form and the staged scenarios): for a test
// that registers it with system.Register and removes it with
// system.Unregister.
func (l RedisLock) Simulated() system.System { return l.System("Redis", RedisTable, l.deploy) }

// lockKey is the key the lock stores its lock in for key.
func (l RedisLock) lockKey(key string) string { return keyOr(l.LockKey, sameKey)(key) }

// deploy deploys the simulated Redis for one run.
func (l RedisLock) deploy(w *sim.World, opts map[string]string, c *Conduct) (system.Deployment, error) {
	o, err := RedisTable.Parse(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	lockKeys := map[string]bool{}
	return redis.DeployCommands(w, redis.CommandDeployment{
		Options:   o.Servers(),
		IsLockKey: func(key string) bool { return lockKeys[key] },
		NewLock: func(p *sim.Proc, t redis.Topology) lockapi.Lock {
			sl := simLock(o, p, c, lockKeys, l.lockKey, t)
			sl.l = l.New(p, sl.rdbs[0])
			return sl
		},
	})
}

// simLock is the simulated wrapper of a user's lock of process p, with one
// go-redis-shaped client per topology (per instance, for Redlock) made with
// o's client options; the caller sets its lock.
func simLock(o RedisOptions, p *sim.Proc, c *Conduct, keys map[string]bool, lockKey func(string) string, ts ...redis.Topology) *simRedisLock {
	co := o.Client()
	s := &simRedisLock{env: p, c: c, keys: keys, lockKey: lockKey}
	for _, t := range ts {
		s.rdbs = append(s.rdbs, redis.NewGoRedisClient(p, t, co))
	}
	return s
}

// simRedisLock is a user's lock in the simulator: it tells the servers'
// record which keys are lock keys (the lock key of each key acquired), and
// reports the calls the lock made from goroutines of its own.
type simRedisLock struct {
	l       Lock
	rdbs    []*redis.GoRedisClient
	env     Env
	c       *Conduct
	keys    map[string]bool
	lockKey func(string) string
}

func (s *simRedisLock) Acquire(key string, wait time.Duration) (Lease, error) {
	s.keys[s.lockKey(key)] = true
	defer s.strays()
	return s.l.Acquire(key, wait)
}

func (s *simRedisLock) Release(l Lease) error {
	defer s.strays()
	return s.l.Release(l)
}

// strays reports the Redis calls made from other goroutines, from the
// process (where the run's clock can be read).
func (s *simRedisLock) strays() {
	for _, rdb := range s.rdbs {
		for _, call := range rdb.Strays() {
			s.c.Report(s.env.Name(), call, s.env.Mono(),
				"called Redis from a goroutine other than the client's (one the lock started): refused; in the simulator a lock makes its calls from the goroutine that calls Acquire and Release")
		}
	}
}
