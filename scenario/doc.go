// Package scenario describes an experiment: a Test (a lock system and its
// options, a workload, the storage mode, a fault schedule or generator, a
// run length and a seed: everything that determines a history), the record
// of a run (Result), and the catalog of named counterexamples (Scenario,
// Variant: a Test in an unsafe variant and the variant that fixes it, with
// the verdicts each must give), with the helpers the catalog is written in
// (schedules, expectations, assertions, Story, ViolationKinds).
//
// Every lock system registers its scenarios from its own package
// (Register, with the system's name); Catalog orders a scenario's variants
// by the system registry, its home family first.
//
// It runs and judges nothing: package harness runs a Test, package judge
// checks the history, maps the verdicts to exit codes and turns a Result
// into a report. It imports neither, nor package reports, so that a lock
// system links no plotting.
package scenario
