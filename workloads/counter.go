package workloads

import (
	"fmt"
	"strconv"
	"time"
)

// FencedCounter is the fenced-counter workload: each client loops
// acquire -> read the counter -> hold -> write counter+1 with its token ->
// release -> think. With mutual exclusion every increment lands exactly once;
// without it two holders read the same value and one increment is lost.
type FencedCounter struct {
	// Keys are the lock keys; each is also the storage cell it protects.
	// Default ["k"] (keys=1); keys=N > 1 makes k0..kN-1. Each iteration picks
	// one at random.
	Keys []string
	// Hold is the time between the read and the write. Default 100 ms.
	Hold time.Duration
	// Think is the mean pause between iterations (uniform in [0, 2*Think]). Default 100 ms.
	Think time.Duration
	// Wait is the acquire wait budget. Default 5 s.
	Wait time.Duration
}

// DefaultFencedCounter returns the documented defaults.
func DefaultFencedCounter() FencedCounter {
	return FencedCounter{Keys: []string{"k"}, Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond, Wait: 5 * time.Second}
}

// Set sets one option from its textual form (key=value on the command line).
func (w *FencedCounter) Set(key, value string) error {
	var err error
	switch key {
	case "keys":
		var n int
		n, err = strconv.Atoi(value)
		if err == nil && n < 1 {
			err = fmt.Errorf("must be at least 1")
		}
		w.Keys = []string{"k"} // keys=1 is the default: one key, "k"
		if n > 1 {
			w.Keys = nil
			for i := range n {
				w.Keys = append(w.Keys, fmt.Sprintf("k%d", i))
			}
		}
	case "hold":
		w.Hold, err = time.ParseDuration(value)
	case "think":
		w.Think, err = time.ParseDuration(value)
	case "wait":
		w.Wait, err = time.ParseDuration(value)
	default:
		return fmt.Errorf("fenced-counter has no option %q (options: keys, hold, think, wait)", key)
	}
	if err != nil {
		return fmt.Errorf("fenced-counter option %s=%q: %w", key, value, err)
	}
	return nil
}

// Run is the client program.
func (w FencedCounter) Run(c Client) {
	RecordRenewals(c)
	rnd := c.Env.Rand()
	for {
		key := w.Keys[rnd.IntN(len(w.Keys))]
		if lease, err := Acquire(c, key, w.Wait); err == nil {
			if v, err := Read(c, key, lease); err == nil {
				c.Env.Sleep(w.Hold)
				_ = Write(c, key, v+1, lease)
			}
			_ = Release(c, lease)
		}
		c.Env.Sleep(time.Duration(rnd.Int64N(int64(2*w.Think) + 1)))
	}
}
