// Package guide is coverage-guided exploration: instead of drawing each
// run's faults blindly (swarm random), it keeps a corpus of schedules that
// reached new coverage and mutates them, in the manner of greybox fuzzing
// (AFL), with the coverage of a run abstracted in the lock's own terms
// (Mallory, CCS 2023, guides fault injection by the states it reaches;
// model-guided fuzzing, OOPSLA 2025, by an abstract model's states).
//
// Coverage (see Coverage) is a set of features: for every fault, its kind,
// the role of the node it hit (holder, waiter, idle client, a server that
// granted the current lock, another server, the storage) and the protocol
// phase that node was in when the fault began (acquiring, held, read,
// writing, written, releasing, renewing; for servers whether the lock was
// held); and lock-level events (a storage operation after the lease ran out,
// a grant by a restarted, promoted or clock-skewed server, a stale write
// rejected, outcomes unknown, a failed release, and each kind of overlap).
//
// Search starts with a few swarm-random runs, then mostly mutates corpus
// entries, chosen with weight 1 + the number of features each brought: add
// a random fault, drop one, move one by up to ±10 s, retarget one, scale its
// duration and amount (×1/8 to ×4), place it right after a client's protocol
// step (a trigger: the Nth acquire, read, write or release, ok or invoked),
// or change the seed of the rest of the world. One run in FreshEvery is a
// fresh random draw, so the search never does worse than swarm for long.
// Every run is a full simulated run of the hunt's length, so runs counted by
// Search and by harness.Hunt.Sweep are comparable.
//
// Search is deterministic from its seed: one PCG stream drives every
// choice, and corpus features are kept in sorted order, so the same seed
// gives the same corpus and the same finding.
package guide
