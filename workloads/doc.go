// Package workloads holds what clients do with a lock: sequential programs that
// acquire, touch the protected storage, and release, recording every operation
// in the history as they go.
//
// A workload sees only the backends interfaces (Lock, Storage, Env) and a
// history.Recorder, never the simulator, so the same program can later drive
// real servers. The recording helpers here (Acquire, Release, Read, Write) are
// the one place where an operation's outcome becomes ok, fail or info: nil
// error -> ok, an error wrapping lockapi.ErrUnknown -> info, any other error ->
// fail. Renewals made by a lock's watchdog are recorded by the same helpers
// (RecordRenewals) under processes of their own.
//
// Invariant: a workload never reads the machine's clock, sleeps on it, starts
// goroutines or uses global randomness; time and randomness come from Env.
package workloads
