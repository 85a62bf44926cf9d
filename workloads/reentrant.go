package workloads

import (
	"github.com/locklab/locklab/internal/opt"
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
	// FencedCounter holds the options both workloads share: Keys (one picked
	// at random per round), Hold (between each read and its write), Think
	// (mean pause between rounds) and Wait (acquire wait budget).
	FencedCounter
	// Depth is the nesting depth of each round.
	Depth int
}

// ReentrantTable declares the options of the reentrant workload:
// fenced-counter's, and depth.
var ReentrantTable = counterTable("reentrant", func(w *Reentrant) *FencedCounter { return &w.FencedCounter },
	opt.Var("depth", "nesting depth of each round: acquires of the same lock before the first release", "2",
		func(w *Reentrant) *int { return &w.Depth }, opt.Range(1, 16)))

// DefaultReentrant returns the declared defaults.
func DefaultReentrant() Reentrant { return ReentrantTable.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (w *Reentrant) Set(key, value string) error { return ReentrantTable.Set(w, key, value) }

// Run is the client program.
func (w Reentrant) Run(c Client) {
	w.rounds(c, func(key string) { w.nest(c, key, w.Depth) })
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
