package scenario

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/sim"
)

// Result is what a run produced.
type Result struct {
	// Test is the test that ran, with defaults filled in.
	Test Test `json:"test"`
	// Schedule is the fault schedule that ran (drawn, read or given).
	Schedule nemesis.Schedule `json:"schedule"`
	// FaultOutcomes say, fault by fault, whether each fault of the schedule
	// fired, and why not when it did not.
	FaultOutcomes []nemesis.Outcome `json:"fault_outcomes,omitempty"`
	// Events is the history.
	Events []history.Event `json:"-"`
	// Verdicts are the checks' verdicts, in check order.
	Verdicts []models.Verdict `json:"verdicts"`
	// Skipped are the checks left out because they do not apply, with why.
	Skipped []models.Skipped `json:"skipped,omitempty"`
	// Overall merges the verdicts.
	Overall models.Result `json:"overall"`
	// Summary counts the history's operations and faults.
	Summary models.Summary `json:"summary"`
	// Network counts the messages the simulated network carried.
	Network sim.NetStats `json:"network"`
	// SystemFigures are what the lock system measured (raft elections, say).
	SystemFigures map[string]any `json:"system_figures,omitempty"`
	// KernelEvents is the number of events the simulator executed.
	KernelEvents uint64 `json:"kernel_events"`
	// Ended is when the run stopped, if before Test.Time (a live run cut
	// short); 0: at Test.Time. judge.FaultsOf reads it.
	Ended time.Duration `json:"-"`
	// Grants is the servers' own record of the grants they made, in true
	// time, when the run kept it (harness.Prepared.RecordGrants); nil
	// otherwise. judge.Report hands it to the run's report.
	Grants *lockapi.GrantLog `json:"-"`
	// Writes is the protected resource's own record of the writes it
	// applied, in true time, when the run kept it
	// (harness.Prepared.RecordWrites); nil otherwise. judge.Report hands it to
	// results.json beside the grants.
	Writes *lockapi.WriteLog `json:"-"`
	// Notes say what the run saw that its history cannot show (a live
	// run: a write that landed after its client gave up on it, and whether
	// any read saw it; a simulated one: what its servers noted,
	// system.Deployment.Notes, such as a Redis script's error). Story tells
	// them last; judge.Report puts them under the verdict.
	Notes []string `json:"notes,omitempty"`

	// log recorded Events (nil: Release has nothing to hand back); it and
	// release are set by Attach.
	log *history.Log
	// release hands back the system's own storage (Deployment.Release).
	release func()
	// marks (set by Mark) are the indexes of the start and stop events in Events (nil:
	// not known), for ViolationKinds.
	marks []int32
}

// Release hands the storage of the run's history to the next run, for a
// caller that runs world after world and keeps nothing of a result but what
// it copied out (a seed, a verdict's result, a count): Events, and whatever
// points into them, must not be used afterwards (every string stays valid);
// so must the verdicts' visualizations, whose search memory goes to the next
// run's checks, and the system's own records (a raftkv cluster and its audit,
// Deployment.Release). Release empties r.Events; a result that is kept (an
// invalid run to report, a run directory to write) is simply not released.
func (r *Result) Release() {
	if r.log != nil {
		r.log.Release()
	}
	if r.release != nil {
		r.release()
		r.release = nil
	}
	for i := range r.Verdicts {
		r.Verdicts[i].Visualization.Release() // an invalid verdict's search memory, for the next run's checks
	}
	r.Events, r.log, r.marks = nil, nil, nil
}

// Attach gives the result what its run kept beside it: the log that
// recorded its Events (Release hands its storage to the next run) and the
// function that hands back the system's own records (Deployment.Release).
func (r *Result) Attach(log *history.Log, release func()) { r.log, r.release = log, release }

// Mark gives the result the indexes of its history's start and stop events
// (history.Paired's Marks; nil: not known), which ViolationKinds reads
// instead of scanning the whole history.
func (r *Result) Mark(marks []int32) { r.marks = marks }
