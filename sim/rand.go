package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// NewRand returns the random stream called name under seed: a PCG source keyed by
// (seed, FNV-64a(name)). Streams with different names are independent, so adding a
// component (and its stream) never shifts the randomness of the others.
func NewRand(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// Uniform draws a duration uniformly from [lo, hi] (lo when hi <= lo).
func Uniform(r *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + r.Int64N(hi-lo+1)
}
