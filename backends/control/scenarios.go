package control

import (
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("control", controlScenarios)
}

// controlScenarios are the control: a lock that grants everything, which the
// checks must judge unsafe.
func controlScenarios() []scenario.Scenario {
	return []scenario.Scenario{
		{
			Name: "control-no-lock",
			Doc:  "a lock that grants everything: the checks must find the lost updates and the overlaps",
			Variants: []scenario.Variant{{
				Name:   "unsafe",
				Doc:    "every client 'holds' the lock at once",
				Test:   scenario.Test{System: "control", Seed: 1, Time: 10 * time.Second},
				Expect: scenario.Expect(models.Invalid, models.Invalid).And("mutex", models.Invalid),
				NoHunt: "the control fails without any fault: every seed shows it",
			}},
		},
	}
}
