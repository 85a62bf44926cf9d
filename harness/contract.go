package harness

import "github.com/locklab/locklab/scenario"

// What a run is and what it produced live in package scenario, the contract
// types of a system in package system; callers import those packages. The
// aliases below remain only for the live package, which still names them
// through harness.
type (
	// Test is one run: everything that determines its history (scenario.Test).
	Test = scenario.Test
	// Result is what a run produced (scenario.Result).
	Result = scenario.Result
	// Variant is one run of a scenario and what it must show (scenario.Variant).
	Variant = scenario.Variant
)

// FindScenario returns the scenario called name (scenario.Find), for the
// live package.
func FindScenario(name string) (scenario.Scenario, error) { return scenario.Find(name) }
