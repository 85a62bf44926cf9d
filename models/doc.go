// Package models says what "correct" means for a lock, as checks over a
// history. It knows nothing about the simulator: it reads history events, so it
// checks histories recorded from real systems just as well.
//
// Every check returns a Verdict: valid, invalid (with a counterexample a person
// can read) or unknown (with the reason). A check that cannot decide — no data,
// a search that ran out of budget, a panic inside the check — says unknown,
// never valid. Verdicts merge as invalid > unknown > valid.
//
// Checks in this package:
//
//   - critical-sections: each critical section (the read and the write a client
//     made while it believed it held the lock) is one operation on a model of
//     the protected counter; with mutual exclusion they are linearizable, and
//     Porcupine decides whether they are. Writes rejected by fenced storage have
//     no effect; writes with unknown outcome may or may not have taken effect.
//   - mutual-exclusion: the intervals in which two clients each believed they
//     held the same lock must not overlap in true time. Every overlap is
//     reported with its length.
package models
