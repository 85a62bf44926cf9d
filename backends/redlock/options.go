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

// Options configure Redlock: the client algorithm and its instances. Start from
// DefaultOptions.
type Options struct {
	// TTL is the lock's expiry on every instance (PX). Default 10 s.
	TTL time.Duration
	// Instances is the number of independent instances. Default 5.
	Instances int
	// RequestTimeout is the per-instance timeout, much smaller than the TTL.
	// Default 50 ms.
	RequestTimeout time.Duration
	// DriftFactor is the clock drift allowance: validity = TTL − elapsed −
	// (TTL·DriftFactor + 2 ms). Default 0.01.
	DriftFactor float64
	// ElapsedClock is the client clock that measures elapsed: mono (default,
	// antirez's recommendation) or wall.
	ElapsedClock redis.Clock
	// Token is value (default), incr or external.
	Token TokenSource
	// Fanout is parallel (default) or sequential.
	Fanout Fanout
	// BackoffMax bounds the random delay between attempts. Default 100 ms.
	BackoffMax time.Duration
	// Persistence of the instances: none (default), everysec, always.
	Persistence redis.Persistence
	// ExpiryClock of the instances: wall (default, as Redis) or mono.
	ExpiryClock redis.Clock
	// RestartDelay makes an instance that restarted refuse requests for that
	// long (antirez's fix: one TTL). Default 0.
	RestartDelay time.Duration
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		TTL:            10 * time.Second,
		Instances:      5,
		RequestTimeout: 50 * time.Millisecond,
		DriftFactor:    0.01,
		ElapsedClock:   redis.ClockMono,
		Token:          TokenValue,
		Fanout:         FanoutParallel,
		BackoffMax:     100 * time.Millisecond,
		Persistence:    redis.PersistNone,
		ExpiryClock:    redis.ClockWall,
	}
}

// OptionNames lists the keys Set understands.
var OptionNames = []string{"ttl", "instances", "request-timeout", "drift-factor", "elapsed-clock", "token",
	"fanout", "backoff-max", "persistence", "expiry-clock", "restart-delay"}

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error {
	var err error
	switch key {
	case "ttl":
		o.TTL, err = opt.PositiveDuration(value)
	case "instances":
		o.Instances, err = opt.IntIn(value, 1, 26)
	case "request-timeout":
		o.RequestTimeout, err = opt.PositiveDuration(value)
	case "drift-factor":
		o.DriftFactor, err = opt.FloatIn(value, 0, 1)
	case "elapsed-clock":
		o.ElapsedClock, err = opt.OneOf(value, redis.ClockMono, redis.ClockWall)
	case "token":
		o.Token, err = opt.OneOf(value, TokenValue, TokenIncr, TokenExternal)
	case "fanout":
		o.Fanout, err = opt.OneOf(value, FanoutParallel, FanoutSequential)
	case "backoff-max":
		o.BackoffMax, err = opt.NonNegativeDuration(value)
	case "persistence":
		o.Persistence, err = opt.OneOf(value, redis.PersistNone, redis.PersistEverySec, redis.PersistAlways)
	case "expiry-clock":
		o.ExpiryClock, err = opt.OneOf(value, redis.ClockWall, redis.ClockMono)
	case "restart-delay":
		o.RestartDelay, err = opt.NonNegativeDuration(value)
	default:
		return fmt.Errorf("redlock has no option %q (options: %v)", key, OptionNames)
	}
	if err != nil {
		return fmt.Errorf("redlock option %s=%q: %w", key, value, err)
	}
	return nil
}

// Quorum is the majority of the instances.
func (o Options) Quorum() int { return o.Instances/2 + 1 }

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
