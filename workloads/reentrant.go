package workloads

import (
	"fmt"
	"strconv"
	"time"
)

// Reentrant is the reentrant workload: each client takes the lock and, while
// holding it, takes it again Depth-1 times nested (as a method holding a lock
// calls another that takes the same lock). Every level does a critical
// section — read the counter, hold, write counter+1 — after its inner levels
// have released, then releases its own acquire:
//
//	acquire; acquire; read, write; release; read, write; release
//
// A lock that lets a nested release free the lock early leaves the outer
// sections unprotected; a reentrant lock keeps them exclusive.
type Reentrant struct {
	// FencedCounter holds the options both workloads share: Keys (default
	// ["k"], one picked at random per round), Hold (between each read and its
	// write, default 100 ms), Think (mean pause between rounds, default
	// 100 ms) and Wait (acquire wait budget, default 5 s).
	FencedCounter
	// Depth is the nesting depth of each round. Default 2.
	Depth int
}

// DefaultReentrant returns the documented defaults.
func DefaultReentrant() Reentrant {
	return Reentrant{FencedCounter: DefaultFencedCounter(), Depth: 2}
}

// Set sets one option from its textual form (key=value on the command line).
func (w *Reentrant) Set(key, value string) error {
	switch key {
	case "keys", "hold", "think", "wait":
		if err := w.FencedCounter.Set(key, value); err != nil {
			return fmt.Errorf("reentrant: %w", err)
		}
		return nil
	case "depth":
		d, err := strconv.Atoi(value)
		if err == nil && (d < 1 || d > 16) {
			err = fmt.Errorf("must be between 1 and 16")
		}
		if err != nil {
			return fmt.Errorf("reentrant option %s=%q: %w", key, value, err)
		}
		w.Depth = d
		return nil
	}
	return fmt.Errorf("reentrant has no option %q (options: keys, depth, hold, think, wait)", key)
}

// Run is the client program.
func (w Reentrant) Run(c Client) {
	RecordRenewals(c)
	rnd := c.Env.Rand()
	for {
		w.nest(c, w.Keys[rnd.IntN(len(w.Keys))], w.Depth)
		c.Env.Sleep(time.Duration(rnd.Int64N(int64(2*w.Think) + 1)))
	}
}

// nest takes key, runs the inner levels, does this level's critical section
// and releases (no defer: a process stopped at the end of the run must not
// record a release).
func (w Reentrant) nest(c Client, key string, level int) {
	lease, err := Acquire(c, key, w.Wait)
	if err != nil {
		return
	}
	if level > 1 {
		w.nest(c, key, level-1)
	}
	if v, err := Read(c, key, lease); err == nil {
		c.Env.Sleep(w.Hold)
		_ = Write(c, key, v+1, lease)
	}
	_ = Release(c, lease)
}
