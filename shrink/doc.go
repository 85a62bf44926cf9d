// Package shrink reduces a failing run to a minimal one that still fails the
// same check the same way, so that a person reads one fault instead of a dozen.
//
// A run fails "the same way" when its Target holds: the same safety check is
// invalid and, when the original's overlaps had a kind
// (scenario.ViolationKinds: gc-pause, clock-jump, failover, ...), a violation
// of that kind is still among them. Every candidate is a deterministic
// simulated run of the harness, judged by that check alone (the minimal run
// is finally run with the original's checks, for its report).
//
// Shrink works in passes, in this order, and repeats them while a pass
// changes anything (at most a few rounds):
//
//  1. Delta debugging (Zeller's ddmin) over the fault list: first the empty
//     schedule, then halves, quarters, ... and their complements, keeping
//     any subset that still fails. When more than one fault is left, each
//     fault is then anchored to the protocol step it landed on (a trigger:
//     right after the acquire of the client that held the lock when it
//     began, else right after the latest client event before it, plus the
//     time between them; the same run) and ddmin runs again. A failure that
//     needs a fault in a given phase (a clock jump while c2 holds) then no
//     longer needs the faults that merely moved the clients there at the
//     right moment: removing them shifts the clients, and the anchored
//     fault follows (a Redlock clock-jump finding shrank from 16 faults to
//     5 without anchors, to 3 with them).
//  2. Each fault acting on several nodes made to act on fewer (a target, a
//     member of a partition's group, an end of a cut: each dropped in turn
//     while the run still fails).
//  3. Each fault made smaller: its duration, its amount (a clock jump's
//     size, a message delay) and its drift are binary-searched down to the
//     smallest value that still fails (to the millisecond, or 1/16 of the
//     range); a fault that lasts to the end of the run (duration 0) is first
//     tried with a finite one.
//  4. Each fault moved as late as possible: its start (for a fault with a
//     trigger, the time its trigger is armed) is binary-searched up, the
//     latest fault first; an anchor's delay is read to the millisecond
//     when that fails too.
//  5. Fewer clients (the fewest that fail; a candidate whose schedule names
//     a client it no longer has is not run) and a shorter run (binary search
//     on the simulated time, to 100 ms).
//
// The algorithm is deterministic: the same test gives the same minimal test
// and the same number of runs. Candidate results are cached by the candidate's
// JSON, so a candidate never runs twice; Options.MaxRuns bounds the runs.
package shrink
