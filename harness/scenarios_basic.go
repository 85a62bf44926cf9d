package harness

import (
	"github.com/locklab/locklab/scenario"
	"time"

	"github.com/locklab/locklab/models"
)

// basicScenarios are the control and the no-fault baselines.
func basicScenarios() []Scenario {
	return []Scenario{
		{
			Name: "control-no-lock",
			Doc:  "a lock that grants everything: the checks must find the lost updates and the overlaps",
			Variants: []Variant{{
				Name:   "unsafe",
				Doc:    "every client 'holds' the lock at once",
				Test:   Test{System: "control", Seed: 1, Time: 10 * time.Second},
				Expect: expect(models.Invalid, models.Invalid).And("mutex", models.Invalid),
				NoHunt: "the control fails without any fault: every seed shows it",
			}},
		},
		{
			Name: "baseline-redis",
			Doc:  "Redis (one instance; or replicated), defaults, no faults: every check valid, acquires succeed",
			Variants: []Variant{{
				Name:   "fixed",
				Doc:    "no faults",
				Test:   Test{System: "redis", Seed: 1},
				Expect: expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid),
				Assert: scenario.AcquireSuccessAbove(0.99),
			}, {
				Name:   "replicated",
				Doc:    "a primary, two asynchronous replicas and the monitor, WAIT 1, no faults",
				Test:   Test{System: "redis", Seed: 1, SystemOptions: map[string]string{"replicas": "2", "wait": "1"}},
				Expect: expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid),
				Assert: scenario.AcquireSuccessAbove(0.99),
			}},
		},
		{
			Name: "baseline-redlock",
			Doc:  "Redlock over 5 instances, defaults, no faults: every check valid, acquires succeed",
			Variants: []Variant{{
				Name:   "fixed",
				Doc:    "no faults",
				Test:   Test{System: "redlock", Seed: 1},
				Expect: expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid),
				Assert: scenario.AcquireSuccessAbove(0.99),
			}},
		},
	}
}
