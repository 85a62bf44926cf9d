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
	// Keys are the lock keys (each also the storage cell it protects).
	// Default ["k"]; each round picks one at random.
	Keys []string
	// Depth is the nesting depth of each round. Default 2.
	Depth int
	// Hold is the time between each read and its write. Default 100 ms.
	Hold time.Duration
	// Think is the mean pause between rounds (uniform in [0, 2*Think]). Default 100 ms.
	Think time.Duration
	// Wait is the acquire wait budget. Default 5 s.
	Wait time.Duration
}

// DefaultReentrant returns the documented defaults.
func DefaultReentrant() Reentrant {
	return Reentrant{Keys: []string{"k"}, Depth: 2, Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond, Wait: 5 * time.Second}
}

// Set sets one option from its textual form (key=value on the command line).
func (w *Reentrant) Set(key, value string) error {
	var err error
	switch key {
	case "keys":
		var n int
		n, err = strconv.Atoi(value)
		if err == nil && n < 1 {
			err = fmt.Errorf("must be at least 1")
		}
		w.Keys = nil
		for i := range n {
			w.Keys = append(w.Keys, fmt.Sprintf("k%d", i))
		}
	case "depth":
		w.Depth, err = strconv.Atoi(value)
		if err == nil && (w.Depth < 1 || w.Depth > 16) {
			err = fmt.Errorf("must be between 1 and 16")
		}
	case "hold":
		w.Hold, err = time.ParseDuration(value)
	case "think":
		w.Think, err = time.ParseDuration(value)
	case "wait":
		w.Wait, err = time.ParseDuration(value)
	default:
		return fmt.Errorf("reentrant has no option %q (options: keys, depth, hold, think, wait)", key)
	}
	if err != nil {
		return fmt.Errorf("reentrant option %s=%q: %w", key, value, err)
	}
	return nil
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
