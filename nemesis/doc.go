// Package nemesis turns fault schedules into faults in a simulated world.
//
// A Schedule is data: a list of Faults, each a kind (pause, crash, partition,
// clock-jump, clock-drift, delay), the nodes it acts on by name, when it starts
// — at a time since the start of the run, or right after a history event such as
// "client c1's next acquire returns ok" — and how long it lasts. Schedules are
// JSON (see Schedule), so a run's schedule is stored with it, a person can edit
// it, and `locklab run --nemesis-file` replays it without recompiling.
//
// Random draws a schedule from a seeded stream and a RandomConfig; a random run
// therefore stores a concrete schedule like any other.
//
// Every fault records a start and a stop event in the history (process -1), so
// the checks and reports see the fault windows in the same stream as the
// clients' operations.
//
// Invariant: the nemesis acts only through sim's fault primitives and the
// world's event queue; it reads no machine clock and no global randomness.
package nemesis
