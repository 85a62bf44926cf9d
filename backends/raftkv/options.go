package raftkv

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/internal/opt"
)

// Stamp is whose wall clock stamps a lock command before it is proposed.
type Stamp string

// Stamp choices.
const (
	// StampLeader: the Raft leader stamps each command with its wall clock
	// (RheaKV). Lease expiry then follows the clock of whichever node leads.
	StampLeader Stamp = "leader"
	// StampClient: the client stamps the command with its own wall clock.
	StampClient Stamp = "client"
)

// Fsync is when a raft node's writes (HardState, entries) become durable.
type Fsync string

// Fsync choices.
const (
	// FsyncAlways: every Ready is durable before its messages are sent, as
	// Raft requires. A crash loses nothing that was acknowledged.
	FsyncAlways Fsync = "always"
	// FsyncInterval: writes reach the disk every FsyncInterval; a crash loses
	// what came since (votes, terms and entries) — Raft's assumption broken.
	FsyncInterval Fsync = "interval"
)

// Options configure a raftkv cluster and its clients. Table declares each
// option's name, meaning and default; start from DefaultOptions.
type Options struct {
	// Nodes is the size of the Raft group: 3 or 5.
	Nodes int
	// Lease is the lease each try-lock asks for.
	Lease time.Duration
	// Watchdog renews a held lease every Lease·2/3 until released.
	Watchdog bool
	// Stamp is whose wall clock stamps lock commands.
	Stamp Stamp
	// Unlock is count (decrement, delete at zero) or delete (any unlock by
	// the owner frees the lock: nested releases release early).
	Unlock lockfsm.UnlockMode
	// Tick is the Raft tick on each node's monotonic clock.
	Tick time.Duration
	// HeartbeatTicks is the leader's heartbeat interval in ticks.
	HeartbeatTicks int
	// ElectionTimeout is the shortest time without hearing from a leader
	// before a node campaigns; each node draws its timeout uniformly in
	// [ElectionTimeout, 2·ElectionTimeout) from its seeded stream.
	ElectionTimeout time.Duration
	// PreVote runs Raft's pre-vote phase before each election.
	PreVote bool
	// InitialLeader, when set (a node name such as "n1"), makes that node
	// campaign as soon as the cluster starts, so scenarios know who leads
	// first. "": the seeded election timers decide.
	InitialLeader string
	// Fsync is when a node's writes become durable.
	Fsync Fsync
	// FsyncInterval is the period of fsync=interval.
	FsyncInterval time.Duration
	// RequestTimeout bounds each request to a node.
	RequestTimeout time.Duration
	// RetryBudget bounds how long one request is retried across nodes
	// (timeouts, redirects, elections) on the client's monotonic clock.
	RetryBudget time.Duration
	// BackoffMax bounds the random back-off between try-lock attempts and
	// while no leader is known.
	BackoffMax time.Duration
}

// Table declares the options of the raftkv system: the one place each is
// named, documented and given its default.
var Table = opt.Table[Options]{Owner: "raftkv", Options: []opt.Option[Options]{
	opt.Var("nodes", "size of the Raft group (n1, n2, ...)", "3",
		func(o *Options) *int { return &o.Nodes }, opt.IntChoice(3, 5)),
	opt.Var("lease", "the lease each try-lock asks for", "10s",
		func(o *Options) *time.Duration { return &o.Lease }, opt.Positive),
	opt.Var("watchdog", "renew a held lease every lease*2/3 until it is released", "true",
		func(o *Options) *bool { return &o.Watchdog }, opt.Bool),
	opt.Var("stamp", "whose wall clock stamps lock commands, and so measures leases: leader (RheaKV) or client",
		"leader", func(o *Options) *Stamp { return &o.Stamp }, opt.Choice(StampLeader, StampClient)),
	opt.Var("unlock", "count (decrement, delete at zero: reentrant) or delete (any unlock by the owner "+
		"frees the lock: nested releases release early)", "count",
		func(o *Options) *lockfsm.UnlockMode { return &o.Unlock }, opt.Choice(lockfsm.UnlockCount, lockfsm.UnlockDelete)),
	opt.Var("tick", "the Raft tick on each node's monotonic clock", "50ms",
		func(o *Options) *time.Duration { return &o.Tick }, opt.Positive),
	opt.Var("heartbeat-ticks", "the leader's heartbeat interval, in ticks", "2",
		func(o *Options) *int { return &o.HeartbeatTicks }, opt.Range(1, 1000)),
	opt.Var("election-timeout", "shortest time without a leader before a node campaigns (each draws its "+
		"timeout in [t, 2t)); must exceed tick*heartbeat-ticks", "1s",
		func(o *Options) *time.Duration { return &o.ElectionTimeout }, opt.Positive),
	opt.Var("prevote", "run Raft's pre-vote phase before each election", "true",
		func(o *Options) *bool { return &o.PreVote }, opt.Bool),
	opt.Var("initial-leader", "the node that campaigns as soon as the cluster starts (empty: the "+
		"seeded election timers decide)", "",
		func(o *Options) *string { return &o.InitialLeader }, opt.Text("a node name n1..n<nodes>, or empty")),
	opt.Var("fsync", "when writes become durable: always (before messages are sent, as Raft requires) or "+
		"interval (every fsync-interval: a crash loses votes, terms and entries)", "always",
		func(o *Options) *Fsync { return &o.Fsync }, opt.Choice(FsyncAlways, FsyncInterval)),
	opt.Var("fsync-interval", "the period of fsync=interval", "1s",
		func(o *Options) *time.Duration { return &o.FsyncInterval }, opt.Positive),
	opt.Var("request-timeout", "bound on each request to a node", "500ms",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("retry-budget", "how long one request is retried across nodes (timeouts, redirects, "+
		"elections), on the client's monotonic clock", "3s",
		func(o *Options) *time.Duration { return &o.RetryBudget }, opt.Positive),
	opt.Var("backoff-max", "bound on the random back-off between try-lock attempts and while no "+
		"leader is known", "100ms",
		func(o *Options) *time.Duration { return &o.BackoffMax }, opt.NonNegative),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error { return Table.Set(o, key, value) }

// Validate checks combinations Set cannot see alone.
func (o Options) Validate() error {
	if o.InitialLeader != "" {
		if _, ok := raftID(o.InitialLeader, o.Nodes); !ok {
			return fmt.Errorf("raftkv option initial-leader=%q: want a node name n1..n%d", o.InitialLeader, o.Nodes)
		}
	}
	if o.ElectionTimeout <= time.Duration(o.HeartbeatTicks)*o.Tick {
		return fmt.Errorf("raftkv options: election-timeout %v must exceed the heartbeat interval %v (tick × heartbeat-ticks)",
			o.ElectionTimeout, time.Duration(o.HeartbeatTicks)*o.Tick)
	}
	return nil
}

// NodeName is the name of the raft node with id (1-based): n1, n2, ...
func NodeName(id uint64) string { return fmt.Sprintf("n%d", id) }

// raftID parses a node name n1..n<nodes>.
func raftID(name string, nodes int) (uint64, bool) {
	var id uint64
	if _, err := fmt.Sscanf(name, "n%d", &id); err != nil || id < 1 || id > uint64(nodes) || NodeName(id) != name {
		return 0, false
	}
	return id, true
}
