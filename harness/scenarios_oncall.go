package harness

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"

	"github.com/locklab/locklab/models"
)

// oncallScenarios are the on-call write skew (the workload oncall): two
// doctors, each may go off call only if the other still is.
func oncallScenarios() []Scenario {
	paused := Test{System: "redis", Workload: "oncall", Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: schedule(pauseAfter("c1", "read", 15*time.Second)), WorkloadOptions: map[string]string{"off-duty": "20s"}}
	db := func(opts ...string) Test {
		t := dbTest(2, 20*time.Second, nil, opts...)
		t.Workload = "oncall"
		return t
	}
	fencedReads := fenced(paused, "fencing", "true")
	fencedReads.FenceReads = true
	onCall := func(r models.Result) expectations { return expectations{"on-call": r} }
	return []Scenario{{
		Name: "oncall-write-skew",
		Doc: "two doctors on call; each, under the lock, reads the other's row and goes off call only if the other " +
			"is still on call. If both decide on the same state, both leave: nobody is on call (write skew)",
		Variants: []Variant{
			{Name: "unsafe", Kind: KindGCPause,
				Doc: "Redis, unfenced storage: doctor 1 reads doctor 2 on call and pauses past its lease; doctor 2 " +
					"takes the lock, reads doctor 1 on call and leaves; doctor 1 wakes and leaves too",
				Test: paused, Expect: onCall(models.Invalid).And("mutual-exclusion", models.Invalid)},
			{Name: "fenced-writes-unsafe", MatrixNote: "the write skew needs the oncall workload (two doctors' rows, the on-call check); the matrix runs the fenced counter, one cell, where fencing writes does keep the data", Kind: KindGCPause,
				Doc: "Redis with INCR fencing tokens, storage fencing writes only: the fence is per row, and doctor 2 " +
					"wrote only its own row — doctor 1's row never saw token 2, so doctor 1's stale write lands",
				Test:   fenced(paused, "fencing", "true"),
				Expect: onCall(models.Invalid).And("fencing-tokens", models.Valid)},
			{Name: "fixed", Doc: "Redis with INCR fencing tokens, storage fencing reads too: doctor 2's read of doctor 1's row " +
				"raised its fence, so doctor 1's stale read of its own row is rejected and it never writes; it stays on call",
				Test:   fencedReads,
				Expect: onCall(models.Valid).And("fencing-tokens", models.Valid), Assert: storageRejected("c1", history.FRead)},
			{Name: "optimistic-row-unsafe",
				NoHunt: "it fails without any fault: two doctors without a lock decide on the same state by design",
				Doc: "database optimistic, per-row versions, no lock: both doctors read both rows, each compare-and-swaps " +
					"only its own row, both succeed — the write skew a per-row compare-and-swap cannot see " +
					"(every critical section is atomic on its own row: critical-sections is valid)",
				Test: db("mode", "optimistic"), Expect: onCall(models.Invalid).And("critical-sections", models.Valid)},
			{Name: "optimistic-pair-fixed",
				Doc: "database optimistic, versions=pair: each write compares the versions of both rows read; the " +
					"second doctor's write fails because the first's changed a row it read",
				Test: db("mode", "optimistic", "versions", "pair"), Expect: onCall(models.Valid), Assert: writesRejected(1)},
			{Name: "for-update-fixed",
				Doc: "database for-update with the rows in the database, read and written in the lock's transaction: " +
					"the doctors' turns are serialized",
				Test: db("mode", "for-update", "resource", "db"), Expect: onCall(models.Valid).And("critical-sections", models.Valid)},
		},
	}}
}

// storageRejected asserts that the fenced storage rejected at least one
// operation f of node.
func storageRejected(node, f string) func(Result) error {
	return func(r Result) error {
		for _, e := range r.Events {
			if e.Node == node && e.F == f && e.Type == history.Fail && strings.Contains(e.Detail, "rejected by the storage") {
				return nil
			}
		}
		return fmt.Errorf("expected the storage to reject a %s of %s, it rejected none", f, node)
	}
}
