// Package judge judges a run: it runs the checks a test selects on a
// history (CheckConfig, CheckHistory), maps their verdicts to the exit code
// of `locklab run`, `check` and `repro` (ExitCode), tallies what the run's
// nemesis asked for, scheduled and fired (FaultsOf, WeakFaults), and turns a
// scenario.Result into what the reports package renders (Report).
//
// It hangs below package scenario: scenario describes an experiment (a
// Test, the catalog's variants and what they must show) and the record of a
// run (scenario.Result), and imports neither this package nor reports, so
// that a lock system, which registers its scenarios there, links no
// plotting. The harness runs a test and judges it here; the command line,
// the live runner and the sweeps judge and report through this package.
package judge
