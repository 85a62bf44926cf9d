package raftkvlive

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/raftkv"
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
// The lock options are the simulated raftkv's own (raftkv.Options, the same
// table entries: names, meanings, defaults), but for those that have no
// meaning on hashicorp/raft (simOnly); the timing options are hashicorp/raft's
// own, with its defaults (election-timeout and prevote are the simulated
// ones, given to hashicorp/raft).
type Options struct {
	raftkv.Options

	HeartbeatTimeout   time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
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

// Table declares the live raftkv options: the simulated raftkv's table
// (raftkv.Table) without simOnly, then hashicorp/raft's timing and what a
// restart keeps.
var Table = opt.Table[Options]{Owner: "raftkv (live)", Options: append(shared(),
	opt.Var("heartbeat-timeout", "hashicorp/raft HeartbeatTimeout: a follower without contact this long becomes a candidate", "1s",
		func(o *Options) *time.Duration { return &o.HeartbeatTimeout }, opt.Positive),
	opt.Var("leader-lease-timeout", "hashicorp/raft LeaderLeaseTimeout: a leader without contact with a quorum this long steps down", "500ms",
		func(o *Options) *time.Duration { return &o.LeaderLeaseTimeout }, opt.Positive),
	opt.Var("commit-timeout", "hashicorp/raft CommitTimeout", "50ms",
		func(o *Options) *time.Duration { return &o.CommitTimeout }, opt.Positive),
	opt.Var("snapshot-threshold", "hashicorp/raft SnapshotThreshold: log entries between snapshots", "8192",
		func(o *Options) *uint64 { return &o.SnapshotThreshold }, uint64Parser),
	opt.Var("trailing-logs", "hashicorp/raft TrailingLogs: entries kept after a snapshot", "10240",
		func(o *Options) *uint64 { return &o.TrailingLogs }, uint64Parser),
	opt.Var("rpc-timeout", "how long a raft RPC on a cut link hangs before it fails (a blackhole, not a refusal)", "500ms",
		func(o *Options) *time.Duration { return &o.RPCTimeout }, opt.Positive),
	opt.Var("restart", "what a crashed node keeps: keep (log, stable and snapshot stores) or lose (empty stores)", "keep",
		func(o *Options) *Restart { return &o.Restart }, opt.Choice(RestartKeep, RestartLose)),
)}

// liveDoc says what a shared option means on hashicorp/raft where the
// simulated table's words do not hold (same name, values and default).
var liveDoc = map[string]string{
	"election-timeout": "hashicorp/raft ElectionTimeout: a candidate without a win this long starts again " +
		"(and a follower's timeout is drawn in [t, 2t)); must be at least heartbeat-timeout",
	"prevote": "run Raft's pre-vote phase (hashicorp/raft PreVoteDisabled = !prevote)",
	"initial-leader": "the node that leads first (leadership is transferred to it once a leader is elected; " +
		"empty: whoever wins)",
}

// shared are the simulated raftkv's options that mean the same live.
func shared() []opt.Option[Options] {
	var out []opt.Option[Options]
	for _, o := range opt.Embed(raftkv.Table.Options, func(o *Options) *raftkv.Options { return &o.Options }) {
		if _, ok := simOnly[o.Name]; ok {
			continue
		}
		if d, ok := liveDoc[o.Name]; ok {
			o.Doc = d
		}
		out = append(out, o)
	}
	return out
}

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

// NodeName is the name of the node with raft id (1-based): n1, n2, ...,
// as in the simulated group.
func NodeName(id int) string { return raftkv.NodeName(uint64(id)) }

func nodeID(name string, nodes int) (int, bool) {
	for i := 1; i <= nodes; i++ {
		if NodeName(i) == name {
			return i, true
		}
	}
	return 0, false
}
