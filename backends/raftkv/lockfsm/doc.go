// Package lockfsm is the lock state machine of the Raft-replicated KV lock
// (RheaKV's DistributedLock semantics). It is a plain Go value with no
// simulator and no consensus dependency: the simulator applies it to entries
// committed by etcd raft, and a live cluster can apply the very same code as a
// hashicorp/raft FSM (Apply / Snapshot / Restore).
//
// # State
//
// Per lock key an Owner: the acquirer id, the lease deadline, the fencing token,
// the acquire count (reentrancy) and the acquirer's context bytes. One fencing
// counter for the whole keyspace hands out tokens; a token is drawn for every
// first-time or new acquisition and kept by reentrant acquires and renewals.
//
// # Commands
//
//   - try-lock: no owner -> grant, count 1, new token, FIRST_TIME_SUCCESS;
//     owner's deadline passed -> grant to the caller, new token,
//     NEW_ACQUIRE_SUCCESS; same acquirer, not expired -> count+1, deadline
//     extended, same token, REENTRANT_SUCCESS; otherwise HELD_BY_OTHER with the
//     current owner (id, remaining lease, context).
//   - unlock: same acquirer -> count-1, the lock deleted at 0 (or at once with
//     UnlockDelete); another acquirer -> HELD_BY_OTHER with the owner; no owner
//     -> UNLOCK_SUCCESS with count 0 (RheaKV's answer).
//   - keep-lease: same acquirer, not expired -> deadline extended,
//     KEEP_LEASE_SUCCESS; otherwise KEEP_LEASE_FAIL with the owner, if any.
//   - get: the current owner, if any and not expired (a read through the log).
//
// # Time
//
// The state machine never reads a clock. Every command carries a Stamp (wall
// clock, Unix nanoseconds) put on it before it was proposed — by the Raft
// leader that proposed it, or by the client — and every replica computes
// deadlines and expiry from that stamp, so replicas agree and replay is exact.
// Lease expiry therefore depends on the clock of whoever stamped the command:
// a leader whose wall clock runs ahead expires leases early.
//
// # Sessions
//
// A command may carry a client session and a sequence number. The machine
// remembers the last sequence number and result of each session: a retry of
// the last command is answered from the table without applying it again
// (exactly-once through leader changes and lost replies), and an older one is
// refused as STALE without effect.
//
// Invariants: Apply is deterministic (the same commands give the same states
// and results); tokens strictly increase with each grant; Snapshot encodes the
// state deterministically (sorted keys), and Restore(Snapshot()) is the same
// state.
package lockfsm
