// Package storage is the protected resource every workload writes under the
// lock: one correct, single server holding numbered cells (a counter, a stock
// level), and the client library workloads call.
//
// Modes (Options.Mode):
//
//   - unfenced: accepts every operation. Mutual exclusion is the lock's job alone.
//   - fenced: Kleppmann's fencing. Each cell remembers the highest fencing token
//     it has accepted and rejects a write presenting a lower one. With
//     FenceReads, reads are fenced too (a read presenting a token also raises the
//     cell's highest token): without that, a read-modify-write whose read ran
//     under an old token and whose write landed before the new holder's write is
//     still a lost update — fencing writes alone protects blind writes only.
//
// The storage never fails on its own; it is the one part of the system assumed
// correct. Its server is a sim.Handler; its client uses a sim.Proc.
package storage
