package chubby

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// Options configure a Chubby cell and its clients. Table declares them.
type Options struct {
	// Replicas is the cell's size (5 in the paper).
	Replicas int
	// Lease is the session lease the master grants and extends with every
	// KeepAlive (12 s in the paper).
	Lease time.Duration
	// KeepAlive is how often a client sends a KeepAlive (0: lease/3).
	KeepAlive time.Duration
	// LockDelay: when a holder's session is lost without a clean release,
	// nobody else gets the lock for this long (1 min in the paper).
	LockDelay time.Duration
	// Grace is the client's grace period after its local lease ran out
	// (jeopardy), before it calls the session expired (45 s in the paper).
	Grace time.Duration
	// Tick and ElectionTimeout time the replicas' consensus.
	Tick, ElectionTimeout time.Duration
	// RequestTimeout bounds each client request.
	RequestTimeout time.Duration
	// Backoff is the pause between attempts of a blocked acquire.
	Backoff time.Duration
}

// Table declares the options of the chubby system.
var Table = opt.Table[Options]{Owner: "chubby", Options: []opt.Option[Options]{
	opt.Var("replicas", "cell size (odd)", "5", func(o *Options) *int { return &o.Replicas }, opt.Range(1, 7)),
	opt.Var("lease", "the session lease the master extends with every KeepAlive, on its own clock", "12s",
		func(o *Options) *time.Duration { return &o.Lease }, opt.Positive),
	opt.Var("keepalive", "how often a client sends a KeepAlive (0: lease/3)", "0s",
		func(o *Options) *time.Duration { return &o.KeepAlive }, opt.NonNegative),
	opt.Var("lock-delay", "after a holder's session is lost without a clean release, nobody gets the lock for this long", "1m0s",
		func(o *Options) *time.Duration { return &o.LockDelay }, opt.NonNegative),
	opt.Var("grace", "the client's grace period (jeopardy) after its local lease ran out", "45s",
		func(o *Options) *time.Duration { return &o.Grace }, opt.NonNegative),
	opt.Var("tick", "the replicas' heartbeat tick", "100ms", func(o *Options) *time.Duration { return &o.Tick }, opt.Positive),
	opt.Var("election-timeout", "a replica without its master this long (randomized up to twice) calls an election", "1s",
		func(o *Options) *time.Duration { return &o.ElectionTimeout }, opt.Positive),
	opt.Var("request-timeout", "bound on each client request", "1s",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("backoff", "pause between attempts of a blocked acquire", "100ms",
		func(o *Options) *time.Duration { return &o.Backoff }, opt.Positive),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Validate reports options that contradict each other.
func (o Options) Validate() error {
	if o.Replicas%2 == 0 {
		return fmt.Errorf("replicas: %d is even (a cell has an odd size)", o.Replicas)
	}
	return nil
}

func (o Options) keepAlive() time.Duration {
	if o.KeepAlive > 0 {
		return o.KeepAlive
	}
	return o.Lease / 3
}
