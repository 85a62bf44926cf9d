package userlock

import (
	"maps"
	"slices"
	"strconv"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/backends/redlock"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// RedlockLock is a user's lock over a set of independent Redis instances
// (Redlock, or any lock of the user's that needs several instances): the
// lock of each client gets one Redis client per instance.
type RedlockLock struct {
	Spec
	// New makes the lock of one client: env is the client's environment,
	// instances its Redis clients, one per instance, always in the same
	// order (redis-a, redis-b, ...; live, real *redis.Client values).
	New func(env Env, instances []Redis) Lock
	// LockKey is the Redis key the lock stores its lock in on every
	// instance for the workload's key (nil: the key itself). Each instance
	// records the grants of these keys under its own name; the record holds
	// the lock for an owner while a majority of the instances hold the
	// owner's value there, so two owners at once in it are two majorities
	// whatever the lock counted. It cannot see a lock that needs fewer than
	// a majority (the lock's own claim, not Redlock's).
	LockKey func(key string) string
}

// RedlockOptions are the options of a user's Redlock's deployment: the
// number of instances, and the instances' and the clients' options, which
// mean what a user's Redis lock's options of the same names mean
// (RedisOptions' Replicas and DownAfter are unused: the instances have no
// replicas).
type RedlockOptions struct {
	Instances int
	RedisOptions
}

// RedlockTable declares the options of a user's Redlock: instances, and
// RedisTable's options but replicas and down-after.
var RedlockTable = opt.Table[RedlockOptions]{Owner: "redlock lock", Options: append([]opt.Option[RedlockOptions]{
	opt.Var("instances", "independent Redis instances (redis-a, redis-b, ...), one client of each per lock, as the redlock system deploys them",
		strconv.Itoa(redlock.DefaultOptions().Instances),
		func(o *RedlockOptions) *int { return &o.Instances }, opt.Range(1, 26)),
}, opt.Embed(slices.DeleteFunc(slices.Clone(RedisTable.Options), func(o opt.Option[RedisOptions]) bool {
	return o.Name == "replicas" || o.Name == "down-after"
}), func(o *RedlockOptions) *RedisOptions { return &o.RedisOptions })...)}

// RegisterRedlock registers a user's lock over independent Redis instances
// as a system over simulated instances, with the staged scenarios of every
// user's lock and Redlock's own: Kleppmann's clock jump and the restart of
// an instance without persistence. It panics on a spec without a name or
// without New. Its live form (against as many real redis-servers) is
// registered by userlock/live's RegisterRedlock, which calls this one.
func RegisterRedlock(l RedlockLock) {
	if l.New == nil {
		panic("userlock: RedlockLock " + l.Name + " has no New")
	}
	l.RegisterSystem(l.Simulated())
	scenario.Register(l.Name, l.RedlockScenarios)
}

// Simulated is the lock's system over the simulated Redis instances, as
// RegisterRedlock registers it (without the live form and the staged
// scenarios): for a test that registers it with system.Register and
// removes it with system.Unregister.
func (l RedlockLock) Simulated() system.System { return l.System("Redlock", RedlockTable, l.deploy) }

// deploy deploys the simulated instances for one run.
func (l RedlockLock) deploy(w *sim.World, opts map[string]string, c *Conduct) (system.Deployment, error) {
	o, err := RedlockTable.Parse(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	lockKeys := map[string]bool{}
	lockKey := RedisLock{LockKey: l.LockKey}.lockKey
	return redlock.DeployCommands(w, redlock.CommandDeployment{
		Instances: o.Instances,
		Server:    redis.ServerConfig{Persistence: o.Persistence, ExpiryClock: o.ExpiryClock, RestartDelay: o.RestartDelay},
		IsLockKey: func(key string) bool { return lockKeys[key] },
		NewLock: func(p *sim.Proc, ts []redis.Topology) lockapi.Lock {
			sl := simLock(o.RedisOptions, p, c, lockKeys, lockKey, ts...)
			sl.l = l.New(p, AsRedis(sl.rdbs))
			return sl
		},
	})
}

// AsRedis is clients (simulated, or live real *redis.Client values) as the
// interface the user's lock is written against.
func AsRedis[C Redis](clients []C) []Redis {
	out := make([]Redis, len(clients))
	for i, c := range clients {
		out[i] = c
	}
	return out
}

// RedlockRead are the client options of Redlock's staged scenarios: a
// Redlock asks its instances one after the other in the simulator (a lock
// starts no goroutines there), so an unreachable instance must cost it
// little of its lease: a 50 ms wait for each reply, no retries (the
// built-in redlock's request-timeout).
var RedlockRead = map[string]string{"instances": "5", "read-timeout": "50ms", "max-retries": "-1"}

// RedlockScenarios are Redlock's own counterexamples staged against the
// lock, as variants of the scenario named after it (besides Spec.Scenarios'):
// the redlock system's redlock-clock-jump (Kleppmann's: an instance's wall
// clock jumps forward and expires the holder's key early there) and
// redlock-restart (an instance restarts empty), with their remedies. None
// is expected in advance: the verdicts are the lock's.
func (l RedlockLock) RedlockScenarios() []scenario.Scenario {
	with := func(t scenario.Test, kv ...string) scenario.Test {
		t.SystemOptions = maps.Clone(RedlockRead)
		for i := 0; i+1 < len(kv); i += 2 {
			t.SystemOptions[kv[i]] = kv[i+1]
		}
		return t
	}
	jump, restart := redlock.ClockJumpStage(l.Name), redlock.RestartStage(l.Name)
	return []scenario.Scenario{{Name: l.Name, Variants: []scenario.Variant{
		{Name: "clock-jump", Kind: scenario.KindClockJump, Test: with(jump),
			Doc: "client 1 reaches redis-a, b, c alone (d and e unreachable for it); redis-c's wall clock jumps 20 s forward right after its grant, expiring its key there; client 2 may then win c, d, e: two majorities at once"},
		{Name: "clock-jump-mono-expiry", Test: with(jump, "expiry-clock", "mono"),
			Doc: "the clock jump, with the instances expiring keys on their monotonic clocks (antirez's remedy)"},
		{Name: "restart", Kind: scenario.KindRestartRegrant, Test: with(restart),
			Doc: "client 1 reaches redis-a, b, c alone; right after its grant redis-c crashes and restarts 100 ms later without persistence, forgetting the key; client 2 may then win c, d, e"},
		{Name: "restart-delayed", Test: with(restart, "restart-delay", "30s"),
			Doc: "the restart, with the restarted instance refusing commands for 30 s (antirez's remedy: longer than any lease it could have had)"},
	}}}
}
