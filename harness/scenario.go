package harness

import (
	"fmt"
	"maps"
	"slices"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// Outcome compares a variant's result with its expectations.
type Outcome struct {
	Variant scenario.Variant
	Result  scenario.Result
	// Mismatches lists every expectation that did not hold; empty means MATCH.
	Mismatches []string
}

// Match reports whether every expectation held.
func (o Outcome) Match() bool { return len(o.Mismatches) == 0 }

// Repro runs a variant and compares the verdicts with its expectations. The
// checks the expectations name run in addition to those that apply by default.
// A fault of its schedule that did not fire is a mismatch too.
func Repro(v scenario.Variant) (Outcome, error) {
	return ReproWith(v, Run)
}

// compareOutcome compares a variant's result with its expectations.
func compareOutcome(v scenario.Variant, r scenario.Result) Outcome {
	out := Outcome{Variant: v, Result: r}
	for _, check := range slices.Sorted(maps.Keys(v.Expect)) {
		want := v.Expect[check]
		got, found := models.Verdict{}, false
		for _, vd := range r.Verdicts {
			if vd.Check == check {
				got, found = vd, true
			}
		}
		switch {
		case !found:
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("%s: expected %s, but the check did not run", check, want))
		case got.Result != want:
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("%s: expected %s, got %s (%s)", check, want, got.Result, got.Reason))
		}
	}
	if v.Assert != nil {
		if err := v.Assert(r); err != nil {
			out.Mismatches = append(out.Mismatches, err.Error())
		}
	}
	// A scenario shows what its faults do: one that did not fire shows nothing.
	for _, o := range r.FaultOutcomes {
		if !o.Fired {
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("faults[%d] (%s) did not fire: %s", o.Fault, o.Kind, o.DidNotFire))
		}
	}
	return out
}
