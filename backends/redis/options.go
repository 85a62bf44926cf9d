package redis

import (
	"fmt"
	"strconv"
	"time"
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
	}
}

// OptionNames lists the keys Set understands, for help texts.
var OptionNames = []string{"ttl", "release", "watchdog", "fencing", "reentrancy", "budget-clock",
	"request-timeout", "backoff-max", "persistence"}

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error {
	var err error
	switch key {
	case "ttl":
		o.TTL, err = positiveDuration(value)
	case "release":
		o.Release, err = oneOf(value, ReleaseLua, ReleaseDel, ReleaseCheckThenDel)
	case "watchdog":
		o.Watchdog, err = strconv.ParseBool(value)
	case "fencing":
		o.Fencing, err = strconv.ParseBool(value)
	case "reentrancy":
		o.Reentrancy, err = oneOf(value, ReentrancyNone, ReentrancyClient, ReentrancyServer)
	case "budget-clock":
		o.BudgetClock, err = oneOf(value, ClockMono, ClockWall)
	case "request-timeout":
		o.RequestTimeout, err = positiveDuration(value)
	case "backoff-max":
		o.BackoffMax, err = time.ParseDuration(value)
	case "persistence":
		o.Persistence, err = oneOf(value, PersistNone, PersistEverySec, PersistAlways)
	default:
		return fmt.Errorf("redis has no option %q (options: %v)", key, OptionNames)
	}
	if err != nil {
		return fmt.Errorf("redis option %s=%q: %w", key, value, err)
	}
	return nil
}

func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}

func oneOf[T ~string](s string, choices ...T) (T, error) {
	for _, c := range choices {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("want one of %v", choices)
}
