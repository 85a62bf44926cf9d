package workloads

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// FencedCounter is the fenced-counter workload: each client loops
// acquire -> read the counter -> hold -> write counter+1 with its token ->
// release -> think. With mutual exclusion every increment lands exactly once;
// without it two holders read the same value and one increment is lost.
// FencedCounterTable declares its options and their defaults.
type FencedCounter struct {
	// Keys are the lock keys; each is also the storage cell it protects.
	// Each iteration picks one at random.
	Keys []string
	// Hold is the time between the read and the write.
	Hold time.Duration
	// Think is the mean pause between iterations (uniform in [0, 2*Think]).
	Think time.Duration
	// Wait is the acquire wait budget.
	Wait time.Duration
}

// counterOptions are the options of FencedCounter, shared by the workloads
// built on it (list-append, reentrant).
var counterOptions = []opt.Option[FencedCounter]{
	opt.Var("keys", "number of lock keys, each the storage cell it protects (1: the key k; n: k0..k<n-1>); "+
		"each iteration picks one at random", "1", func(w *FencedCounter) *[]string { return &w.Keys }, keyCount),
	opt.Var("hold", "time between the read and the write", "100ms",
		func(w *FencedCounter) *time.Duration { return &w.Hold }, opt.NonNegative),
	opt.Var("think", "mean pause between iterations (uniform in [0, 2*think])", "100ms",
		func(w *FencedCounter) *time.Duration { return &w.Think }, opt.NonNegative),
	opt.Var("wait", "the acquire wait budget", "5s",
		func(w *FencedCounter) *time.Duration { return &w.Wait }, opt.NonNegative),
}

// FencedCounterTable declares the options of the fenced-counter workload.
var FencedCounterTable = opt.Table[FencedCounter]{Owner: "fenced-counter", Options: counterOptions}

// keyCount reads the number of keys into their names: "k" alone, or k0, k1, ...
var keyCount = opt.Parser[[]string]{
	Accepts: opt.AtLeast(1).Accepts,
	Parse: func(s string) ([]string, error) {
		n, err := opt.AtLeast(1).Parse(s)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			return []string{"k"}, nil
		}
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i)
		}
		return keys, nil
	},
	Format: func(keys []string) string { return strconv.Itoa(len(keys)) },
}

// DefaultFencedCounter returns the declared defaults.
func DefaultFencedCounter() FencedCounter { return FencedCounterTable.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (w *FencedCounter) Set(key, value string) error { return FencedCounterTable.Set(w, key, value) }

// Run is the client program.
func (w FencedCounter) Run(c Client) {
	w.rounds(c, func(key string) {
		if lease, err := Acquire(c, key, w.Wait); err == nil {
			if v, err := Read(c, key, lease); err == nil {
				c.Env.Sleep(w.Hold)
				_ = Write(c, key, v+1, lease)
			}
			_ = Release(c, lease)
		}
	})
}

// rounds is the client loop of the fenced counter and of the workloads built
// on it: it records renewals, then does round after round, each on a key
// picked at random among Keys and followed by a think pause (uniform in [0,
// 2*Think]).
func (w FencedCounter) rounds(c Client, round func(key string)) {
	RecordRenewals(c)
	rnd := c.Env.Rand()
	for {
		round(w.Keys[rnd.IntN(len(w.Keys))])
		think(c, rnd, w.Think)
	}
}

// think is a client's pause between rounds: uniform in [0, 2*mean].
func think(c Client, rnd *rand.Rand, mean time.Duration) {
	c.Env.Sleep(time.Duration(rnd.Int64N(int64(2*mean) + 1)))
}

// counterTable declares the options of a workload built on the fenced
// counter (counter locates it): fenced-counter's, then its own.
func counterTable[W any](owner string, counter func(*W) *FencedCounter, own ...opt.Option[W]) opt.Table[W] {
	return opt.Table[W]{Owner: owner, Options: append(opt.Embed(counterOptions, counter), own...)}
}
