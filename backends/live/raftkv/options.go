package raftkv

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/internal/opt"
)

// Restart is what a crashed node keeps when it restarts.
type Restart string

// Restart choices.
const (
	// RestartKeep: the node restarts over its log, stable and snapshot
	// stores, as after a process crash with the disk intact.
	RestartKeep Restart = "keep"
	// RestartLose: the node restarts with empty stores (a lost disk): its
	// votes and log are gone, which breaks Raft's assumptions on purpose.
	RestartLose Restart = "lose"
)

// Options configure a live raftkv cluster on hashicorp/raft and its clients.
// The lock options mean what they mean in the simulated raftkv (same names,
// same defaults); the timing options are hashicorp/raft's own, with its
// defaults.
type Options struct {
	Nodes          int
	Lease          time.Duration
	Watchdog       bool
	Stamp          raftkv.Stamp
	Unlock         lockfsm.UnlockMode
	InitialLeader  string
	RequestTimeout time.Duration
	RetryBudget    time.Duration
	BackoffMax     time.Duration

	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	PreVote            bool
	SnapshotThreshold  uint64
	TrailingLogs       uint64
	RPCTimeout         time.Duration
	Restart            Restart
}

// simOnly are the simulated raftkv's options that have no meaning on
// hashicorp/raft; naming one is an error that says so.
var simOnly = map[string]string{
	"tick":            "hashicorp/raft has no ticks: use heartbeat-timeout, election-timeout, leader-lease-timeout",
	"heartbeat-ticks": "hashicorp/raft has no ticks: use heartbeat-timeout",
	"fsync":           "the live stores are in memory: use restart=keep|lose for what a crash keeps",
	"fsync-interval":  "the live stores are in memory: use restart=keep|lose for what a crash keeps",
}

// Table declares the live raftkv options.
var Table = opt.Table[Options]{Owner: "raftkv (live)", Options: []opt.Option[Options]{
	opt.Var("nodes", "size of the Raft group (n1, n2, ...)", "3",
		func(o *Options) *int { return &o.Nodes }, opt.IntChoice(3, 5)),
	opt.Var("lease", "the lease each try-lock asks for", "10s",
		func(o *Options) *time.Duration { return &o.Lease }, opt.Positive),
	opt.Var("watchdog", "renew a held lease every lease*2/3 until it is released", "true",
		func(o *Options) *bool { return &o.Watchdog }, opt.Bool),
	opt.Var("stamp", "whose wall clock stamps lock commands, and so measures leases: leader (RheaKV) or client",
		"leader", func(o *Options) *raftkv.Stamp { return &o.Stamp }, opt.Choice(raftkv.StampLeader, raftkv.StampClient)),
	opt.Var("unlock", "count (decrement, delete at zero: reentrant) or delete (any unlock by the owner frees the lock)",
		"count", func(o *Options) *lockfsm.UnlockMode { return &o.Unlock }, opt.Choice(lockfsm.UnlockCount, lockfsm.UnlockDelete)),
	opt.Var("initial-leader", "the node that leads first (leadership is transferred to it once a leader is elected; "+
		"empty: whoever wins)", "", func(o *Options) *string { return &o.InitialLeader }, opt.Text("a node name n1..n<nodes>, or empty")),
	opt.Var("request-timeout", "bound on each request to a node", "500ms",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("retry-budget", "how long one request is retried across nodes, on the client's monotonic clock", "3s",
		func(o *Options) *time.Duration { return &o.RetryBudget }, opt.Positive),
	opt.Var("backoff-max", "bound on the random back-off between try-lock attempts and while no leader is known", "100ms",
		func(o *Options) *time.Duration { return &o.BackoffMax }, opt.NonNegative),
	opt.Var("heartbeat-timeout", "hashicorp/raft HeartbeatTimeout: a follower without contact this long becomes a candidate", "1s",
		func(o *Options) *time.Duration { return &o.HeartbeatTimeout }, opt.Positive),
	opt.Var("election-timeout", "hashicorp/raft ElectionTimeout: a candidate without a win this long starts again", "1s",
		func(o *Options) *time.Duration { return &o.ElectionTimeout }, opt.Positive),
	opt.Var("leader-lease-timeout", "hashicorp/raft LeaderLeaseTimeout: a leader without contact with a quorum this long steps down", "500ms",
		func(o *Options) *time.Duration { return &o.LeaderLeaseTimeout }, opt.Positive),
	opt.Var("commit-timeout", "hashicorp/raft CommitTimeout", "50ms",
		func(o *Options) *time.Duration { return &o.CommitTimeout }, opt.Positive),
	opt.Var("prevote", "run Raft's pre-vote phase (hashicorp/raft PreVoteDisabled = !prevote)", "true",
		func(o *Options) *bool { return &o.PreVote }, opt.Bool),
	opt.Var("snapshot-threshold", "hashicorp/raft SnapshotThreshold: log entries between snapshots", "8192",
		func(o *Options) *uint64 { return &o.SnapshotThreshold }, uint64Parser),
	opt.Var("trailing-logs", "hashicorp/raft TrailingLogs: entries kept after a snapshot", "10240",
		func(o *Options) *uint64 { return &o.TrailingLogs }, uint64Parser),
	opt.Var("rpc-timeout", "how long a raft RPC on a cut link hangs before it fails (a blackhole, not a refusal)", "500ms",
		func(o *Options) *time.Duration { return &o.RPCTimeout }, opt.Positive),
	opt.Var("restart", "what a crashed node keeps: keep (log, stable and snapshot stores) or lose (empty stores)", "keep",
		func(o *Options) *Restart { return &o.Restart }, opt.Choice(RestartKeep, RestartLose)),
}}

var uint64Parser = opt.Parser[uint64]{Accepts: "a whole number >= 1",
	Parse: func(s string) (uint64, error) {
		var v uint64
		if _, err := fmt.Sscanf(s, "%d", &v); err != nil || v < 1 || fmt.Sprint(v) != s {
			return 0, fmt.Errorf("want a whole number >= 1, got %q", s)
		}
		return v, nil
	},
	Format: func(v uint64) string { return fmt.Sprint(v) }}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// ParseOptions reads -o key=value pairs; a simulated-only option is refused
// with what to use instead.
func ParseOptions(kv map[string]string) (Options, error) {
	for k := range kv {
		if why, ok := simOnly[k]; ok {
			return Options{}, fmt.Errorf("raftkv option %s is not available live: %s", k, why)
		}
	}
	o, err := Table.Parse(kv)
	if err != nil {
		return o, err
	}
	return o, o.Validate()
}

// Validate checks combinations Set cannot see alone (hashicorp/raft's own
// rules among them, so that NewRaft never refuses the configuration).
func (o Options) Validate() error {
	if o.InitialLeader != "" {
		if _, ok := nodeID(o.InitialLeader, o.Nodes); !ok {
			return fmt.Errorf("raftkv option initial-leader=%q: want a node name n1..n%d", o.InitialLeader, o.Nodes)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"heartbeat-timeout", o.HeartbeatTimeout}, {"election-timeout", o.ElectionTimeout},
		{"leader-lease-timeout", o.LeaderLeaseTimeout}, {"commit-timeout", o.CommitTimeout}} {
		if d.v < 5*time.Millisecond {
			return fmt.Errorf("raftkv option %s=%v: hashicorp/raft needs at least 5ms", d.name, d.v)
		}
	}
	if o.LeaderLeaseTimeout > o.HeartbeatTimeout {
		return fmt.Errorf("raftkv options: leader-lease-timeout %v must not exceed heartbeat-timeout %v (hashicorp/raft)",
			o.LeaderLeaseTimeout, o.HeartbeatTimeout)
	}
	if o.ElectionTimeout < o.HeartbeatTimeout {
		return fmt.Errorf("raftkv options: election-timeout %v must be at least heartbeat-timeout %v (hashicorp/raft)",
			o.ElectionTimeout, o.HeartbeatTimeout)
	}
	return nil
}

// Fast returns o with hashicorp/raft's timing shortened for tests: elections
// in tens of milliseconds.
func (o Options) Fast() Options {
	o.HeartbeatTimeout, o.ElectionTimeout, o.LeaderLeaseTimeout = 50*time.Millisecond, 50*time.Millisecond, 25*time.Millisecond
	o.CommitTimeout, o.RPCTimeout = 5*time.Millisecond, 50*time.Millisecond
	return o
}

// NodeName is the name of the node with raft id (1-based): n1, n2, ...
func NodeName(id int) string { return fmt.Sprintf("n%d", id) }

func nodeID(name string, nodes int) (int, bool) {
	for i := 1; i <= nodes; i++ {
		if NodeName(i) == name {
			return i, true
		}
	}
	return 0, false
}
