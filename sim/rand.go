package sim

import "math/rand/v2"

// NewRand returns the random stream called name under seed: a PCG source keyed by
// (seed, FNV-64a(name)). Streams with different names are independent, so adding a
// component (and its stream) never shifts the randomness of the others.
func NewRand(seed uint64, name string) *rand.Rand {
	return rand.New(rand.NewPCG(seed, fnv64a(name)))
}

// fnv64a is hash/fnv's FNV-64a of s, without its allocations.
func fnv64a(s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// Uniform draws a duration uniformly from [lo, hi] (lo when hi <= lo).
func Uniform(r *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + r.Int64N(hi-lo+1)
}
