package redlock

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/internal/opt"
)

// TokenSource is where a grant's token comes from.
type TokenSource string

// Token sources.
const (
	// TokenValue: the random lock value itself (as a uint64). Unique, not ordered.
	TokenValue TokenSource = "value"
	// TokenIncr: INCR <key>:fence on every instance with the SET, the maximum of
	// the counters of the instances that granted. Ordered on each instance, not
	// across majorities.
	TokenIncr TokenSource = "incr"
	// TokenExternal: INCR on a separate sequencer instance ("fence") after the
	// majority was reached — an external monotonic counter, not Redlock's own.
	TokenExternal TokenSource = "external"
)

// Fanout is how the client sends its requests to the instances.
type Fanout string

// Fan-out modes.
const (
	// FanoutParallel sends to every instance at once and then reads the replies
	// (as redsync does with one goroutine per instance).
	FanoutParallel Fanout = "parallel"
	// FanoutSequential asks one instance after the other (as the Redlock
	// description puts it).
	FanoutSequential Fanout = "sequential"
)

// Options configure Redlock: the client algorithm and its instances. Table
// declares each option's name, meaning and default; start from
// DefaultOptions.
type Options struct {
	// TTL is the lock's expiry on every instance (PX).
	TTL time.Duration
	// Instances is the number of independent instances.
	Instances int
	// RequestTimeout is the per-instance timeout, much smaller than the TTL.
	RequestTimeout time.Duration
	// DriftFactor is the clock drift allowance: validity = TTL − elapsed −
	// (TTL·DriftFactor + 2 ms).
	DriftFactor float64
	// ElapsedClock is the client clock that measures elapsed (mono is
	// antirez's recommendation).
	ElapsedClock redis.Clock
	// Token is where a grant's token comes from.
	Token TokenSource
	// Fanout is how the client sends its requests to the instances.
	Fanout Fanout
	// BackoffMax bounds the random delay between attempts.
	BackoffMax time.Duration
	// Persistence of the instances.
	Persistence redis.Persistence
	// ExpiryClock of the instances (wall, as Redis).
	ExpiryClock redis.Clock
	// RestartDelay makes an instance that restarted refuse requests for that
	// long (antirez's fix: one TTL).
	RestartDelay time.Duration
}

// Table declares the options of the redlock system: the one place each is
// named, documented and given its default.
var Table = opt.Table[Options]{Owner: "redlock", Options: []opt.Option[Options]{
	opt.Var("ttl", "the lock's expiry on every instance (SET PX)", "10s",
		func(o *Options) *time.Duration { return &o.TTL }, opt.Positive),
	opt.Var("instances", "independent Redis instances (redis-a, redis-b, ...); a majority grants", "5",
		func(o *Options) *int { return &o.Instances }, opt.Range(1, 26)),
	opt.Var("request-timeout", "the per-instance timeout, much smaller than the ttl", "50ms",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("drift-factor", "clock drift allowance: validity = ttl - elapsed - (ttl*drift-factor + 2ms)", "0.01",
		func(o *Options) *float64 { return &o.DriftFactor }, opt.Fraction(0, 1)),
	opt.Var("elapsed-clock", "the client clock that measures the time the acquire took", "mono",
		func(o *Options) *redis.Clock { return &o.ElapsedClock }, opt.Choice(redis.ClockMono, redis.ClockWall)),
	opt.Var("token", "where a grant's token comes from: value (the random lock value: unique, not "+
		"ordered), incr (INCR <key>:fence on each instance, the maximum of the granting ones), "+
		"external (INCR on a separate sequencer \"fence\" after the majority)", "value",
		func(o *Options) *TokenSource { return &o.Token }, opt.Choice(TokenValue, TokenIncr, TokenExternal)),
	opt.Var("fanout", "how requests reach the instances: parallel (all at once, as redsync) or "+
		"sequential (one after the other, as the Redlock description)", "parallel",
		func(o *Options) *Fanout { return &o.Fanout }, opt.Choice(FanoutParallel, FanoutSequential)),
	opt.Var("backoff-max", "bound on the random delay between attempts", "100ms",
		func(o *Options) *time.Duration { return &o.BackoffMax }, opt.NonNegative),
	opt.Var("persistence", "what each instance writes to disk: none, everysec or always (fsync every write)",
		"none", func(o *Options) *redis.Persistence { return &o.Persistence },
		opt.Choice(redis.PersistNone, redis.PersistEverySec, redis.PersistAlways)),
	opt.Var("expiry-clock", "the instances' clock TTLs follow (Redis uses the wall clock)", "wall",
		func(o *Options) *redis.Clock { return &o.ExpiryClock }, opt.Choice(redis.ClockWall, redis.ClockMono)),
	opt.Var("restart-delay", "a restarted instance refuses requests for this long (antirez's fix: one ttl)", "0s",
		func(o *Options) *time.Duration { return &o.RestartDelay }, opt.NonNegative),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error { return Table.Set(o, key, value) }

// Quorum is the majority of the instances.
func (o Options) Quorum() int { return Quorum(o.Instances) }

// Quorum is the majority of n instances.
func Quorum(n int) int { return n/2 + 1 }

// Drift is the clock drift allowance subtracted from the validity.
func (o Options) Drift() time.Duration {
	return time.Duration(float64(o.TTL)*o.DriftFactor) + 2*time.Millisecond
}

// Server is the configuration of every instance.
func (o Options) Server() redis.ServerConfig {
	return redis.ServerConfig{Persistence: o.Persistence, ExpiryClock: o.ExpiryClock, RestartDelay: o.RestartDelay}
}

// InstanceName is the node name of instance i (0-based): redis-a, redis-b, ...
func InstanceName(i int) string { return fmt.Sprintf("redis-%c", 'a'+i) }

// FenceName is the node name of the external sequencer (token=external).
const FenceName = "fence"
