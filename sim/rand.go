package sim

import (
	"math/bits"
	"math/rand/v2"
)

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

// Weighted draws an index of weights with probability proportional to its
// weight (the last index when the draw falls past them all).
func Weighted(r *rand.Rand, weights []float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	x := r.Float64() * total
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// is32bit is true where math/rand/v2 draws bounded numbers differently.
const is32bit = ^uint(0)>>32 == 0

// pcgRand is a random stream drawn from its PCG source directly: the
// numbers rand.Rand draws from that source, without its interface calls.
// r wraps the same source, for the cases left to it.
type pcgRand struct {
	src *rand.PCG
	r   *rand.Rand
}

// newPCGRand is the stream NewRand(seed, name) returns, drawn directly.
func newPCGRand(seed uint64, name string) pcgRand {
	src := rand.NewPCG(seed, fnv64a(name))
	return pcgRand{src: src, r: rand.New(src)}
}

// float64 is rand.Rand's Float64.
func (p pcgRand) float64() float64 { return float64(p.src.Uint64()<<11>>11) / (1 << 53) }

// uniform is Uniform(p.r, lo, hi): rand.Rand's Int64N on 64-bit systems.
func (p pcgRand) uniform(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	n := uint64(hi - lo + 1)
	if is32bit || int64(n) <= 0 {
		return lo + p.r.Int64N(hi-lo+1)
	}
	if n&(n-1) == 0 {
		return lo + int64(p.src.Uint64()&(n-1))
	}
	hi64, lo64 := bits.Mul64(p.src.Uint64(), n)
	if lo64 < n {
		thresh := -n % n
		for lo64 < thresh {
			hi64, lo64 = bits.Mul64(p.src.Uint64(), n)
		}
	}
	return lo + int64(hi64)
}
