// Package harness wires a run together: a Test names a lock system (with its
// options), a workload, the storage mode, a fault schedule or generator, a run
// length and a seed; Run builds the simulated world from them, runs it, checks
// the history and returns a Result.
//
// The registries are below it: lock systems register in package system and
// workloads in package workloads, each from its own package's init, so that
// harness names no system. Each entry carries its option table (an
// opt.Table declared beside the system or workload: every option's name,
// meaning, default and parser, declared once), from which Deploy and New parse
// the options and `locklab systems` prints them; TestEveryOptionTableIsConsistent
// checks every registered table. Names a fault schedule may use are resolved here
// too: client names (c1, c2, ...), server names (redis, ...), "storage",
// "clients", "servers" and whatever a system adds.
//
// The scenario catalog (scenario.Catalog; Repro runs a variant) holds the
// named counterexamples: each a system, options, workload and fault schedule
// in an unsafe variant and the variant that fixes it, with the verdicts each
// must give; every system registers its scenarios from its own package
// (scenario.Register), and TestCatalog asserts them all. scenario.Story
// tells a run in plain words: the faults, and for the first overlap who held
// the lock, how each grant came about, with which token and until when, and
// what the storage did. Hunts and Sweep measure how many
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
// Where a lock system lives: all of it in backends/<name>/: its servers,
// client library and option table; its registration (Deploy, roles, and the
// Claims the conformance suite holds it to) in system.go; its scenarios in
// scenarios.go; both registered from init. backends/builtin imports every
// built-in system, and a program (or test) that runs systems imports it.
// The suite in conformance then proves every registered system
// (every property a lock system must have) without further code.
//
// Run is deterministic: the same Test gives the same history, byte for byte.
package harness
