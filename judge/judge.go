package judge

import (
	"io"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// Exit codes of `locklab run`, `check` and `repro` (scenario's, while the
// judging moves here).
const (
	ExitValid    = scenario.ExitValid
	ExitInvalid  = scenario.ExitInvalid
	ExitUsage    = scenario.ExitUsage
	ExitUnknown  = scenario.ExitUnknown
	ExitCrash    = scenario.ExitCrash
	ExitDataSafe = scenario.ExitDataSafe
)

// ExitCode maps verdicts to the exit code.
func ExitCode(vs []models.Verdict) int { return scenario.ExitCode(vs) }

// DataSafe reports whether the verdicts say the lock broke and the data is
// safe.
func DataSafe(vs []models.Verdict) bool { return scenario.DataSafe(vs) }

// Checked is what the checks said about a history.
type Checked = scenario.Checked

// ChecksRecord is what results.json says about the checks.
type ChecksRecord = scenario.ChecksRecord

// CheckConfig configures the checks for test t.
func CheckConfig(t scenario.Test, initial map[string]int64) models.Config {
	return scenario.CheckConfig(t, initial)
}

// CheckHistory runs the checks named in names on events.
func CheckHistory(cfg models.Config, names []string, events []history.Event) (Checked, error) {
	return scenario.CheckHistory(cfg, names, events)
}

// CheckPaired is CheckHistory of events already paired by history.Pair.
func CheckPaired(cfg models.Config, names []string, events []history.Event, h *history.Paired, pairErr error) (Checked, error) {
	return scenario.CheckPaired(cfg, names, events, h, pairErr)
}

// Attachments are the files the verdicts add to a run directory.
func Attachments(vs []models.Verdict) []reports.Attachment { return scenario.Attachments(vs) }

// PrintCounterexamples prints the counterexample of every invalid verdict.
func PrintCounterexamples(w io.Writer, vs []models.Verdict) error {
	return scenario.PrintCounterexamples(w, vs)
}

// Report turns a result into what the reports package renders.
func Report(r scenario.Result, command string) reports.Run { return r.Report(command) }

// Faults is what a run asked of its nemesis, scheduled and fired.
type Faults = reports.Faults

// FaultsOf tallies the run's faults.
func FaultsOf(r scenario.Result) Faults { return r.Faults() }

// TallyFaults tallies the faults of a run of t with schedule s.
func TallyFaults(t scenario.Test, s nemesis.Schedule, outcomes []nemesis.Outcome, end time.Duration) Faults {
	return scenario.TallyFaults(t, s, outcomes, end)
}

// DrewNoFault is the warning of a run whose random nemesis drew no fault.
func DrewNoFault(t scenario.Test, s nemesis.Schedule) string { return scenario.DrewNoFault(t, s) }

// WeakFault is a fault kind none of whose faults reached its timeout.
type WeakFault = scenario.WeakFault

// WeakFaults are the fault kinds of the run too short to test the design.
func WeakFaults(t scenario.Test, s nemesis.Schedule, outcomes []nemesis.Outcome) []WeakFault {
	return scenario.WeakFaults(t, s, outcomes)
}
