package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPCGRandIsRandsStream: drawing from the source directly gives exactly
// the numbers rand.Rand gives from the same stream (Float64, Uniform), for
// ranges of every kind: empty, powers of two, small, huge, near the limit.
func TestPCGRandIsRandsStream(t *testing.T) {
	ranges := []struct{ lo, hi int64 }{
		{5, 5}, {7, 3}, {0, 1}, {0, 3}, {0, 1 << 40}, {0, 1<<40 - 1}, {500_000, 1_500_000},
		{-10, 10}, {0, math.MaxInt64 - 1}, {0, math.MaxInt64 / 3}, {1, math.MaxInt64},
		{0, 3 << 61}, // about one draw in five rejected and drawn again
	}
	for seed := range uint64(20) {
		want, got := NewRand(seed, "network"), newPCGRand(seed, "network")
		for i := range 2000 {
			r := ranges[i%len(ranges)]
			if i%3 == 0 {
				require.Equal(t, want.Float64(), got.float64(), "seed %d draw %d", seed, i)
				continue
			}
			require.Equal(t, Uniform(want, r.lo, r.hi), got.uniform(r.lo, r.hi), "seed %d draw %d %v", seed, i, r)
		}
	}
}
