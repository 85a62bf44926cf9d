package redis

import (
	"errors"
	"fmt"
	"strconv"
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

// Options configure a Redis lock: the client recipe and the server. The zero
// value is not valid; start from DefaultOptions.
type Options struct {
	// TTL is the lease (PX). Default 10 s.
	TTL time.Duration
	// Release is lua (default), del or check-then-del.
	Release Release
	// Watchdog renews the lease every TTL/3 while held. Default off.
	Watchdog bool
	// Fencing takes a token from INCR <key>:fence with each grant. Default off.
	Fencing bool
	// Reentrancy is none (default), client or server.
	Reentrancy Reentrancy
	// BudgetClock measures the wait budget: mono (default) or wall.
	BudgetClock Clock
	// RequestTimeout bounds each request. Default 200 ms.
	RequestTimeout time.Duration
	// BackoffMax bounds the random back-off between attempts. Default 100 ms.
	BackoffMax time.Duration
	// Persistence of the server: none (default), everysec or always.
	Persistence Persistence
	// ExpiryClock is the server clock TTLs follow: wall (default, as Redis
	// does) or mono.
	ExpiryClock Clock
	// RestartDelay makes a server that restarted refuse commands for that long.
	// Default 0.
	RestartDelay time.Duration
	// Replicas is the number of replicas of the primary; with replicas a
	// sentinel-like monitor promotes one when the primary is down. Default 0.
	Replicas int
	// DownAfter is how long the monitor waits, on its own clock, before it
	// promotes a replica. Default 3 s.
	DownAfter time.Duration
	// Wait makes the client send WAIT <Wait> after a successful SET and treat
	// the grant as failed (releasing it) unless that many replicas acknowledged
	// it within WaitTimeout. Default 0 (no WAIT).
	Wait int
	// WaitTimeout is WAIT's timeout. Default 1 s.
	WaitTimeout time.Duration
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		TTL:            10 * time.Second,
		Release:        ReleaseLua,
		Reentrancy:     ReentrancyNone,
		BudgetClock:    ClockMono,
		RequestTimeout: 200 * time.Millisecond,
		BackoffMax:     100 * time.Millisecond,
		Persistence:    PersistNone,
		ExpiryClock:    ClockWall,
		DownAfter:      3 * time.Second,
		WaitTimeout:    time.Second,
	}
}

// Server is the configuration of the instances the options describe.
func (o Options) Server() ServerConfig {
	return ServerConfig{Persistence: o.Persistence, ExpiryClock: o.ExpiryClock, RestartDelay: o.RestartDelay}
}

// OptionNames lists the keys Set understands, for help texts.
var OptionNames = []string{"ttl", "release", "watchdog", "fencing", "reentrancy", "budget-clock",
	"request-timeout", "backoff-max", "persistence", "expiry-clock", "restart-delay", "replicas", "down-after",
	"wait", "wait-timeout"}

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error {
	var err error
	switch key {
	case "ttl":
		o.TTL, err = opt.PositiveDuration(value)
	case "release":
		o.Release, err = opt.OneOf(value, ReleaseLua, ReleaseDel, ReleaseCheckThenDel)
	case "watchdog":
		o.Watchdog, err = strconv.ParseBool(value)
	case "fencing":
		o.Fencing, err = strconv.ParseBool(value)
	case "reentrancy":
		o.Reentrancy, err = opt.OneOf(value, ReentrancyNone, ReentrancyClient, ReentrancyServer)
	case "budget-clock":
		o.BudgetClock, err = opt.OneOf(value, ClockMono, ClockWall)
	case "request-timeout":
		o.RequestTimeout, err = opt.PositiveDuration(value)
	case "backoff-max":
		o.BackoffMax, err = time.ParseDuration(value)
	case "persistence":
		o.Persistence, err = opt.OneOf(value, PersistNone, PersistEverySec, PersistAlways)
	default:
		err = o.setReplication(key, value)
		if errors.Is(err, errUnknownOption) {
			return fmt.Errorf("redis has no option %q (options: %v)", key, OptionNames)
		}
	}
	if err != nil {
		return fmt.Errorf("redis option %s=%q: %w", key, value, err)
	}
	return nil
}

var errUnknownOption = errors.New("unknown option")

// setReplication sets the server and replication options.
func (o *Options) setReplication(key, value string) error {
	var err error
	switch key {
	case "expiry-clock":
		o.ExpiryClock, err = opt.OneOf(value, ClockWall, ClockMono)
	case "restart-delay":
		o.RestartDelay, err = opt.NonNegativeDuration(value)
	case "replicas":
		o.Replicas, err = opt.IntIn(value, 0, 9)
	case "down-after":
		o.DownAfter, err = opt.PositiveDuration(value)
	case "wait":
		o.Wait, err = opt.IntIn(value, 0, 9)
	case "wait-timeout":
		o.WaitTimeout, err = opt.PositiveDuration(value)
	default:
		return errUnknownOption
	}
	return err
}

// Validate reports options that contradict each other.
func (o Options) Validate() error {
	if o.Wait > o.Replicas {
		return fmt.Errorf("redis option wait=%d: only %d replica(s) could acknowledge", o.Wait, o.Replicas)
	}
	return nil
}
