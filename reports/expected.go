package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/models"
)

// Expected is what the scenario a run staged expects of it: a fixed variant
// may be INVALID by design (the lock breaks, fenced storage keeps the data
// safe), and a run that shows what its scenario expects is no surprise.
// Every surface that shows a run's verdict (its summary, its report, the
// index of the store) says whether it is as expected.
type Expected struct {
	// Scenario and Variant name what the run staged.
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
	// Verdicts are the verdicts the variant expects, by check.
	Verdicts map[string]models.Result `json:"verdicts,omitempty"`
	// Match reports whether the run showed every expected verdict (and the
	// variant's own assertion held).
	Match bool `json:"match"`
	// Mismatches say how it did not, one line each.
	Mismatches []string `json:"mismatches,omitempty"`
}

// Name is scenario/variant.
func (e Expected) Name() string { return e.Scenario + "/" + e.Variant }

// Sentence says whether the run is as its scenario expects: "As scenario
// kleppmann-gc-pause/fixed expects (critical-sections valid, mutual-exclusion
// invalid)" or "Not as scenario ... expects: ...".
func (e Expected) Sentence() string {
	if e.Match {
		return fmt.Sprintf("As scenario %s expects (%s)", e.Name(), e.verdictList())
	}
	return fmt.Sprintf("Not as scenario %s expects: %s", e.Name(), strings.Join(e.Mismatches, "; "))
}

// verdictList is the expected verdicts, "check result" in check order.
func (e Expected) verdictList() string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(e.Verdicts)) {
		parts = append(parts, fmt.Sprintf("%s %s", c, e.Verdicts[c]))
	}
	if len(parts) == 0 {
		return "its assertion holds"
	}
	return strings.Join(parts, ", ")
}

// ExitDataSafe is the exit code of a run in which the lock broke but the
// data was safe (judge.ExitDataSafe is the same): mutual exclusion or
// the lease is invalid, and every other check, the data's (critical
// sections, fencing tokens on fenced storage) among them, is valid.
const ExitDataSafe = 5

// DataSafeSentence says what ExitDataSafe means.
const DataSafeSentence = "the lock broke, the data is safe: two clients believed they held the lock at once, " +
	"but fenced storage refused every stale write (critical-sections and fencing-tokens valid)"
