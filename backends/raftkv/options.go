package raftkv

import (
	"fmt"
	"strconv"
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

// Options configure a raftkv cluster and its clients. Start from
// DefaultOptions; Set parses the command line's key=value form.
type Options struct {
	// Nodes is the size of the Raft group: 3 (default) or 5.
	Nodes int
	// Lease is the lease each try-lock asks for. Default 10 s.
	Lease time.Duration
	// Watchdog renews a held lease every Lease·2/3 until released. Default on.
	Watchdog bool
	// Stamp is whose wall clock stamps lock commands: leader (default) or client.
	Stamp Stamp
	// Unlock is count (default: decrement, delete at zero) or delete (any
	// unlock by the owner frees the lock: nested releases release early).
	Unlock lockfsm.UnlockMode
	// Tick is the Raft tick on each node's monotonic clock. Default 50 ms.
	Tick time.Duration
	// HeartbeatTicks is the leader's heartbeat interval in ticks. Default 2.
	HeartbeatTicks int
	// ElectionTimeout is the shortest time without hearing from a leader
	// before a node campaigns; each node draws its timeout uniformly in
	// [ElectionTimeout, 2·ElectionTimeout) from its seeded stream. Default 1 s.
	ElectionTimeout time.Duration
	// PreVote runs Raft's pre-vote phase before each election. Default on.
	PreVote bool
	// InitialLeader, when set (a node name such as "n1"), makes that node
	// campaign as soon as the cluster starts, so scenarios know who leads
	// first. Default "": the seeded election timers decide.
	InitialLeader string
	// Fsync is always (default) or interval.
	Fsync Fsync
	// FsyncInterval is the period of fsync=interval. Default 1 s.
	FsyncInterval time.Duration
	// RequestTimeout bounds each request to a node. Default 500 ms.
	RequestTimeout time.Duration
	// RetryBudget bounds how long one request is retried across nodes
	// (timeouts, redirects, elections) on the client's monotonic clock.
	// Default 3 s.
	RetryBudget time.Duration
	// BackoffMax bounds the random back-off between try-lock attempts and
	// while no leader is known. Default 100 ms.
	BackoffMax time.Duration
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		Nodes:           3,
		Lease:           10 * time.Second,
		Watchdog:        true,
		Stamp:           StampLeader,
		Unlock:          lockfsm.UnlockCount,
		Tick:            50 * time.Millisecond,
		HeartbeatTicks:  2,
		ElectionTimeout: time.Second,
		PreVote:         true,
		Fsync:           FsyncAlways,
		FsyncInterval:   time.Second,
		RequestTimeout:  500 * time.Millisecond,
		RetryBudget:     3 * time.Second,
		BackoffMax:      100 * time.Millisecond,
	}
}

// OptionNames lists the keys Set understands, for help texts.
var OptionNames = []string{"nodes", "lease", "watchdog", "stamp", "unlock", "tick", "heartbeat-ticks",
	"election-timeout", "prevote", "initial-leader", "fsync", "fsync-interval", "request-timeout",
	"retry-budget", "backoff-max"}

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error {
	var err error
	switch key {
	case "nodes":
		o.Nodes, err = strconv.Atoi(value)
		if err == nil && o.Nodes != 3 && o.Nodes != 5 {
			err = fmt.Errorf("want 3 or 5")
		}
	case "lease":
		o.Lease, err = opt.PositiveDuration(value)
	case "watchdog":
		o.Watchdog, err = strconv.ParseBool(value)
	case "stamp":
		o.Stamp, err = opt.OneOf(value, StampLeader, StampClient)
	case "unlock":
		o.Unlock, err = opt.OneOf(value, lockfsm.UnlockCount, lockfsm.UnlockDelete)
	case "tick":
		o.Tick, err = opt.PositiveDuration(value)
	case "heartbeat-ticks":
		o.HeartbeatTicks, err = opt.IntIn(value, 1, 1000)
	case "election-timeout":
		o.ElectionTimeout, err = opt.PositiveDuration(value)
	case "prevote":
		o.PreVote, err = strconv.ParseBool(value)
	case "initial-leader":
		o.InitialLeader = value
	case "fsync":
		o.Fsync, err = opt.OneOf(value, FsyncAlways, FsyncInterval)
	case "fsync-interval":
		o.FsyncInterval, err = opt.PositiveDuration(value)
	case "request-timeout":
		o.RequestTimeout, err = opt.PositiveDuration(value)
	case "retry-budget":
		o.RetryBudget, err = opt.PositiveDuration(value)
	case "backoff-max":
		o.BackoffMax, err = opt.NonNegativeDuration(value)
	default:
		return fmt.Errorf("raftkv has no option %q (options: %v)", key, OptionNames)
	}
	if err != nil {
		return fmt.Errorf("raftkv option %s=%q: %w", key, value, err)
	}
	return nil
}

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
