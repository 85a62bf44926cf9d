// Package reports writes what a person reads after a run: the run directory
// (history.jsonl, results.json, schedule.json, summary.txt) and the verdict
// summary printed on the terminal.
//
// reports knows nothing about the simulator or the harness: it is given a Run
// (the command that replays it, the configuration, the schedule, the history,
// the verdicts) and renders it. Every file is written atomically (a temporary
// file in the same directory, then a rename), so an interrupted run never
// leaves a half-written result, and a rerun into the same directory replaces
// files whole.
package reports
