package libmode

import (
	"testing"

	"github.com/locklab/locklab/models"
)

// Safe reports whether no safety check of the run is invalid (liveness
// aside).
func (r Result) Safe() bool {
	for _, v := range r.Verdicts {
		if v.Result == models.Invalid && !v.Liveness {
			return false
		}
	}
	return true
}

// Explore runs seeds 1..n of the configurations draw makes (a seed may
// also draw the faults, their moments and sizes) and returns the first
// run that a safety check finds invalid, or false when none does: random
// exploration by seed. Random counts such a search, Guided runs every
// placement of a single pause anchored at the clients' steps, Shrink
// reduces a finding, and Search does all three.
func Explore(t *testing.T, n int, draw func(seed uint64) Config) (Result, bool) {
	t.Helper()
	for seed := uint64(1); seed <= uint64(n); seed++ {
		cfg := draw(seed)
		cfg.Seed = seed
		res := Run(t, cfg)
		if !res.Safe() {
			return res, true
		}
	}
	return Result{}, false
}
