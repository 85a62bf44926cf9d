// Package harness wires a run together: a Test names a lock system (with its
// options), a workload, the storage mode, a fault schedule or generator, a run
// length and a seed; Run builds the simulated world from them, runs it, checks
// the history and returns a Result.
//
// The registries of systems and workloads live here, so adding a backend means
// adding one entry to Systems. Each entry carries its option table (an
// opt.Table declared beside the system or workload: every option's name,
// meaning, default and parser, declared once), from which Deploy and New parse
// the options and `locklab systems` prints them; TestEveryOptionTableIsConsistent
// checks every registered table. Names a fault schedule may use are resolved here
// too: client names (c1, c2, ...), server names (redis, ...), "storage",
// "clients", "servers" and whatever a system adds.
//
// The scenario catalog (Catalog, Repro) holds the named counterexamples: each
// a system, options, workload and fault schedule in an unsafe variant and the
// variant that fixes it, with the verdicts each must give; every family
// registers its scenarios from its own file (scenarios_*.go), and TestCatalog
// asserts them all. Story tells a run in plain words: the faults, and for the
// first overlap who held the lock, how each grant came about, with which token
// and until when, and what the storage did. Hunts and Sweep measure how many
// seeds random faults need to rediscover a catalog counterexample of a given
// kind: every unsafe variant declares its kind (Variant.Kind), and Hunts are
// derived from those declarations (ViolationKinds classifies overlaps as
// gc-pause, clock-jump, failover, restart-regrant, non-owner-release,
// leader-clock-ahead, holder-clock, session-expiry, and delayed writes).
// LoadTest reads back the test a run directory ran (for `locklab shrink`).
//
// A run's history is bounded (Test.MaxHistoryEvents, about BytesPerEvent of
// memory each): a run whose history, extrapolated from its first 1% (10 s to
// a minute of simulated time), would pass the bound is refused, and one that
// passes it anyway stops, both with ErrTooLarge. RunWatched reports progress
// to a callback. Neither changes what a run records.
//
// Where a lock system lives: its servers, client library and option table in
// backends/<name>/; its registration (Deploy, roles, and the Claims the
// conformance suite holds it to) in harness/system_<name>.go; its scenarios in
// harness/scenarios_<name>.go, named once in scenarioFamilies. The suite in
// conformance then proves every registered system (every property a
// lock system must have) without further code.
//
// Run is deterministic: the same Test gives the same history, byte for byte.
package harness
