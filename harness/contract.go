package harness

import (
	"io"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// What a run is and what it produced live in package scenario, which a lock
// system's package imports for its scenarios; these aliases keep harness's
// callers as they were.
type (
	// Test is one run: everything that determines its history (scenario.Test).
	Test = scenario.Test
	// Liveness are the limits of a test's liveness check (scenario.Liveness).
	Liveness = scenario.Liveness
	// Result is what a run produced (scenario.Result).
	Result = scenario.Result
	// Faults is what a run asked of its nemesis and what fired (scenario.Faults).
	Faults = scenario.Faults
	// Effective is a run's configuration with every value spelled out
	// (scenario.Effective).
	Effective = scenario.Effective
	// Checked is what the checks said about a history (scenario.Checked).
	Checked = scenario.Checked
	// ChecksRecord is the checks' entry of results.json (scenario.ChecksRecord).
	ChecksRecord = scenario.ChecksRecord
)

// Unbounded is the CheckBudget that lets search-based checks run to the end.
const Unbounded time.Duration = scenario.Unbounded

// Exit codes of `locklab run`, `check` and `repro` (see scenario.ExitValid).
const (
	ExitValid   = scenario.ExitValid
	ExitInvalid = scenario.ExitInvalid
	ExitUsage   = scenario.ExitUsage
	ExitUnknown = scenario.ExitUnknown
	ExitCrash   = scenario.ExitCrash
)

// Kinds of violation (see scenario.KindGCPause).
const (
	KindGCPause          = scenario.KindGCPause
	KindClockJump        = scenario.KindClockJump
	KindFailover         = scenario.KindFailover
	KindRestartRegrant   = scenario.KindRestartRegrant
	KindNonOwnerRelease  = scenario.KindNonOwnerRelease
	KindLeaderClockAhead = scenario.KindLeaderClockAhead
	KindHolderClock      = scenario.KindHolderClock
	KindSessionExpiry    = scenario.KindSessionExpiry
	KindDelayedWrite     = scenario.KindDelayedWrite
	KindOther            = scenario.KindOther
)

// Kinds are the kinds of violation ViolationKinds tells apart, KindOther last.
var Kinds = scenario.Kinds

// CheckNames lists the checks of a history, in report order.
var CheckNames = scenario.CheckNames

// AuditNames lists the audits the registered systems run on their own servers.
func AuditNames() []string { return scenario.AuditNames() }

// RunCheckNames lists every check a run can ask for.
func RunCheckNames() []string { return scenario.RunCheckNames() }

// CheckConfig configures the checks for test t (scenario.CheckConfig).
func CheckConfig(t Test, initial map[string]int64) models.Config {
	return scenario.CheckConfig(t, initial)
}

// CheckHistory runs the checks named in names on events (scenario.CheckHistory).
func CheckHistory(cfg models.Config, names []string, events []history.Event) (Checked, error) {
	return scenario.CheckHistory(cfg, names, events)
}

// Attachments are the files the verdicts add to a run directory
// (scenario.Attachments).
func Attachments(vs []models.Verdict) []reports.Attachment { return scenario.Attachments(vs) }

// PrintCounterexamples prints the counterexample of every invalid verdict
// (scenario.PrintCounterexamples).
func PrintCounterexamples(w io.Writer, vs []models.Verdict) error {
	return scenario.PrintCounterexamples(w, vs)
}

// ExitCode maps verdicts to the exit code (scenario.ExitCode).
func ExitCode(vs []models.Verdict) int { return scenario.ExitCode(vs) }

// TallyFaults tallies the faults of a run (scenario.TallyFaults).
func TallyFaults(t Test, s nemesis.Schedule, outcomes []nemesis.Outcome, end time.Duration) Faults {
	return scenario.TallyFaults(t, s, outcomes, end)
}

// DrewNoFault says why a random nemesis drew no fault (scenario.DrewNoFault).
func DrewNoFault(t Test, s nemesis.Schedule) string { return scenario.DrewNoFault(t, s) }

// ViolationKinds classifies every overlap of a history by its cause
// (scenario.ViolationKinds).
func ViolationKinds(events []history.Event) []string { return scenario.ViolationKinds(events) }

// Story tells a run in plain words (scenario.Story).
func Story(r Result) []string { return scenario.Story(r) }
