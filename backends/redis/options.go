package redis

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// Release is how a client gives the lock back.
type Release string

// Release variants.
const (
	ReleaseLua          Release = "lua"            // compare-and-delete in one script: correct
	ReleaseDel          Release = "del"            // plain DEL: may delete another client's lock
	ReleaseCheckThenDel Release = "check-then-del" // GET, compare on the client, DEL: not atomic
)

// Reentrancy is how repeated acquires by one client are counted.
type Reentrancy string

// Reentrancy variants.
const (
	ReentrancyNone   Reentrancy = "none"   // a second acquire by the holder waits like anyone else
	ReentrancyClient Reentrancy = "client" // the client counts its own nested acquires
	ReentrancyServer Reentrancy = "server" // Redisson style: a hash {owner: count} on the server
)

// Persistence is what a Redis instance writes to disk.
type Persistence string

// Persistence variants.
const (
	PersistNone     Persistence = "none"     // a crash loses everything
	PersistEverySec Persistence = "everysec" // fsync every second: a crash loses up to a second
	PersistAlways   Persistence = "always"   // fsync every write: a crash loses nothing
)

// Clock is which client clock measures the wait budget.
type Clock string

// Clock choices.
const (
	ClockMono Clock = "mono"
	ClockWall Clock = "wall"
)

// Options configure a Redis lock: the client recipe and the server. Table
// declares each option's name, meaning and default; start from
// DefaultOptions.
type Options struct {
	// TTL is the lease (PX).
	TTL time.Duration
	// Release is how the client gives the lock back.
	Release Release
	// Watchdog renews the lease every TTL/3 while held.
	Watchdog bool
	// Fencing takes a token from INCR <key>:fence with each grant.
	Fencing bool
	// Reentrancy is how repeated acquires by one client are counted.
	Reentrancy Reentrancy
	// BudgetClock measures the wait budget.
	BudgetClock Clock
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
	// BackoffMax bounds the random back-off between attempts.
	BackoffMax time.Duration
	// Persistence is what the server writes to disk.
	Persistence Persistence
	// ExpiryClock is the server clock TTLs follow (wall, as Redis does).
	ExpiryClock Clock
	// RestartDelay makes a server that restarted refuse commands for that long.
	RestartDelay time.Duration
	// Replicas is the number of replicas of the primary; with replicas a
	// sentinel-like monitor promotes one when the primary is down.
	Replicas int
	// DownAfter is how long the monitor waits, on its own clock, before it
	// promotes a replica.
	DownAfter time.Duration
	// Wait makes the client send WAIT <Wait> after a successful SET and treat
	// the grant as failed (releasing it) unless that many replicas acknowledged
	// it within WaitTimeout. 0: no WAIT.
	Wait int
	// WaitTimeout is WAIT's timeout.
	WaitTimeout time.Duration
}

// Table declares the options of the redis system: the one place each is
// named, documented and given its default.
var Table = opt.Table[Options]{Owner: "redis", Options: []opt.Option[Options]{
	opt.Var("ttl", "the lease each grant carries (SET PX)", "10s",
		func(o *Options) *time.Duration { return &o.TTL }, opt.Positive),
	opt.Var("release", "how the client gives the lock back: lua (compare-and-delete script, correct), "+
		"del (plain DEL: may delete another client's lock), check-then-del (GET, compare, DEL: not atomic)", "lua",
		func(o *Options) *Release { return &o.Release }, opt.Choice(ReleaseLua, ReleaseDel, ReleaseCheckThenDel)),
	opt.Var("watchdog", "renew the lease every ttl/3 while it is held", "false",
		func(o *Options) *bool { return &o.Watchdog }, opt.Bool),
	opt.Var("fencing", "take a fencing token from INCR <key>:fence with each grant", "false",
		func(o *Options) *bool { return &o.Fencing }, opt.Bool),
	opt.Var("reentrancy", "repeated acquires by the holder: none (it waits like anyone else), "+
		"client (the client counts them), server (Redisson style: a hash {owner: count} on the server)", "none",
		func(o *Options) *Reentrancy { return &o.Reentrancy }, opt.Choice(ReentrancyNone, ReentrancyClient, ReentrancyServer)),
	opt.Var("budget-clock", "the client clock that measures the wait budget", "mono",
		func(o *Options) *Clock { return &o.BudgetClock }, opt.Choice(ClockMono, ClockWall)),
	opt.Var("request-timeout", "bound on each request", "200ms",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("backoff-max", "bound on the random back-off between attempts", "100ms",
		func(o *Options) *time.Duration { return &o.BackoffMax }, opt.NonNegative),
	opt.Var("persistence", "what the server writes to disk: none (a crash loses everything), "+
		"everysec (fsync every second), always (fsync every write)", "none",
		func(o *Options) *Persistence { return &o.Persistence }, opt.Choice(PersistNone, PersistEverySec, PersistAlways)),
	opt.Var("expiry-clock", "the server clock TTLs follow (Redis uses the wall clock)", "wall",
		func(o *Options) *Clock { return &o.ExpiryClock }, opt.Choice(ClockWall, ClockMono)),
	opt.Var("restart-delay", "a restarted server refuses commands for this long", "0s",
		func(o *Options) *time.Duration { return &o.RestartDelay }, opt.NonNegative),
	opt.Var("replicas", "asynchronous replicas of the primary; with any, a sentinel-like monitor "+
		"promotes one when the primary is down", "0",
		func(o *Options) *int { return &o.Replicas }, opt.Range(0, 9)),
	opt.Var("down-after", "how long the monitor waits, on its own clock, before it promotes a replica", "3s",
		func(o *Options) *time.Duration { return &o.DownAfter }, opt.Positive),
	opt.Var("wait", "after a SET, WAIT for this many replicas within wait-timeout, else release and fail "+
		"the acquire (0: no WAIT; at most replicas)", "0",
		func(o *Options) *int { return &o.Wait }, opt.Range(0, 9)),
	opt.Var("wait-timeout", "the timeout of WAIT", "1s",
		func(o *Options) *time.Duration { return &o.WaitTimeout }, opt.Positive),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Server is the configuration of the instances the options describe.
func (o Options) Server() ServerConfig {
	return ServerConfig{Persistence: o.Persistence, ExpiryClock: o.ExpiryClock, RestartDelay: o.RestartDelay}
}

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error { return Table.Set(o, key, value) }

// Validate reports options that contradict each other.
func (o Options) Validate() error {
	if o.Wait > o.Replicas {
		return fmt.Errorf("redis option wait=%d: only %d replica(s) could acknowledge", o.Wait, o.Replicas)
	}
	return nil
}
