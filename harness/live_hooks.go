package harness

import (
	"fmt"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// Judge runs a test's checks on a history recorded outside the simulator
// (live mode): the same selection as Run makes. The audits of simulated
// servers (raft-audit) cannot run on it: naming one alone is an error; an
// audit selected by default is listed as skipped, with why.
func Judge(t scenario.Test, initial map[string]int64, events []history.Event) (judge.Checked, error) {
	t = t.WithDefaults()
	sel, err := t.SelectChecks()
	if err != nil {
		return judge.Checked{}, err
	}
	if sel.NoHistory {
		return judge.Checked{}, fmt.Errorf("checks: %v audits the servers of a simulated run; a live run cannot run it", sel.Audits)
	}
	c, err := judge.CheckHistory(judge.CheckConfig(t, initial), sel.History, events)
	for _, a := range sel.Audits {
		c.Skipped = append(c.Skipped, models.Skipped{Check: a, Reason: "it judges a record only a simulated run keeps (its servers', or the lock's calls for " +
			"lock-conduct); this run was live"})
	}
	return c, err
}

// ReproWith is Repro with another runner (live mode runs the variant's test
// in real time): it runs the variant's ReproTest with run and compares.
func ReproWith(v scenario.Variant, run func(scenario.Test) (scenario.Result, error)) (Outcome, error) {
	r, err := run(v.ReproTest())
	if err != nil {
		return Outcome{}, err
	}
	return compareOutcome(v, r), nil
}
