package harness

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// CheckNames lists the checks a run can ask for.
var CheckNames = []string{"critical-sections", "mutual-exclusion"}

// findCheck returns the check called name, configured for test t; initial
// are the storage cells' values before the run (nil: all 0).
func findCheck(name string, t Test, initial map[string]int64) (models.Check, error) {
	switch name {
	case "critical-sections":
		return models.CriticalSections{Budget: max(t.CheckBudget, 0), Initial: history.Ptr(int64(0)), InitialByKey: initial}, nil
	case "mutual-exclusion":
		return models.MutualExclusion{}, nil
	}
	return nil, fmt.Errorf("unknown check %q (known: %s)", name, strings.Join(CheckNames, ", "))
}

// checksFor returns the checks of a test (every check when none is named).
func checksFor(t Test, initial map[string]int64) ([]models.Check, error) {
	names := t.Checks
	if len(names) == 0 {
		names = CheckNames
	}
	var out []models.Check
	for _, n := range names {
		c, err := findCheck(n, t, initial)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
