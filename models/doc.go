// Package models says what "correct" means for a lock, as checks over a
// history. It knows nothing about the simulator: it reads history events, so
// it checks histories recorded from real systems just as well (`locklab
// check`).
//
// # Verdicts
//
// Every check returns a Verdict: valid, invalid (with a counterexample a
// person can read: the operations involved, their times and the fault windows
// around them) or unknown (with the reason). A check that cannot decide — no
// data, a search that ran out of budget, a panic inside the check or its model
// — says unknown, never valid. Verdicts merge as invalid > unknown > valid.
// Liveness checks are marked (Verdict.Liveness): their failure is not a safety
// violation.
//
// # Checks
//
//   - critical-sections (CriticalSections): each critical section (a read of
//     the protected resource and the write or append the same process made
//     next) is one operation on a model of the resource — a counter, a stock
//     level or a list — and the sections must be linearizable. Writes rejected
//     by fenced storage have no effect; writes of unknown outcome may land at
//     any time after they were invoked, or never.
//   - mutual-exclusion (MutualExclusion): the intervals in which two clients
//     each believed they held the same lock must not overlap in true time. A
//     sweep; every overlap is reported with its length.
//   - lease and mutex (LockService): the lock service's grants and releases
//     against a lease-aware lock (a grant to another acquirer is legal once the
//     holder's lease could have run out; assumes the server's clock is true
//     time) or a reentrant mutex (owner-aware: release by a non-owner is
//     illegal, reentrant acquires count unless the lock does not count
//     them: etcd's Mutex, where one release frees it).
//   - fencing-tokens (FencingTokens): tokens increase strictly in the
//     real-time order of grants; a fencing storage never accepts a token lower
//     than one it accepted.
//   - liveness (Availability): the share of acquires that succeeded outside
//     fault windows (at least half by default: clients that mostly time out
//     starve, whether the lock is broken or oversubscribed), stalls
//     (clients wanted a lock nobody held, outside fault windows: deadlocks and
//     orphaned locks) and the recovery time after each fault window.
//
// Config configures all of them; Config.Select picks the checks that apply to
// a history (a check that does not apply is left out with the reason, see
// Applicable) or the ones a user named.
//
// # Models and the search
//
// The linearizability checks are Porcupine models (pure Step functions over
// per-key states, with Describe* for the visualization), partitioned by key,
// keys sorted. An operation of unknown outcome is encoded as Porcupine
// requires: it may take effect at any point after its invocation, or never
// (and its process is retired, as in Jepsen: see package history).
//
// Long histories are searched in batches: a key's operations are cut at a
// forcing operation X — one after which the state is the same whatever the
// order of the operations before it — when every operation concurrent with X
// is known to precede or follow it in any legal order (a waiting client's
// grant follows the current grant; a higher token follows a lower one). The
// state after X is carried to the next batch. A property test checks on
// thousands of random histories that batched and whole-history searches agree.
//
// Each batch is searched with Porcupine's algorithm run in-house (wgl.go): the
// same entries, order, memo and backtracking as Porcupine's checker, so the
// same steps and results (TestWGLIsPorcupine compares them step for step),
// without a goroutine, context or timer per batch and with buffers reused
// from batch to batch. The verbose search behind explanations and
// visualizations is Porcupine itself.
//
// RunAll pairs a history once (history.Pair) and every check reads the same
// paired form; what several checks derive from it (the holdings) is derived
// once (history.Paired.Memo). Work that cannot change a verdict waits until it
// is needed: the Porcupine visualization of an invalid verdict is analysed
// when it is written.
//
// Each key's search is bounded by a Budget: a number of model steps
// (deterministic: the default, so verdicts are reproducible) and optionally
// wall-clock time (a safety net; a result that hits it depends on the
// machine). Only unknown verdicts can depend on the budget, and they say which
// bound ran out (Verdict.Exhausted).
//
// The linearizability checks also give their model and the history as
// Porcupine operations (PorcupineModel), for use with Porcupine directly; the
// fixture suite checks that this whole-history search agrees with the check.
//
// An invalid linearizability verdict carries Porcupine's HTML visualization of
// the illegal batch, with the nemesis fault windows as annotations tagged
// "nemesis" (Verdict.Visualization).
//
// # Testing the testers
//
// testdata/histories holds histories (hand-written textbook cases and ones
// minimised from real runs), each with the verdict every check must give; one
// table-driven test walks them all.
package models
