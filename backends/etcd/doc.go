// Package etcd models an etcd cluster and the locks clientv3 builds on it,
// inside the simulator, as described in SYSTEMS.md (`etcd`).
//
// # Members
//
// A Cluster has 3 or 5 members (etcd1, etcd2, ...). Each is a Server: an
// event-driven sim.Handler around an etcd raft RawNode (go.etcd.io/raft/v3,
// the engine etcd itself runs), timed as in backends/raftkv: ticks on the
// member's monotonic clock, elections started by a seeded timer (raft's own
// randomized timeout reads crypto/rand and never fires), pre-vote and
// CheckQuorum on as etcd runs them (a leader that hears from no quorum for an
// election timeout steps down; a member that heard from its leader within an
// election timeout ignores votes), the log durable across crashes (a restart
// replays it into an empty keyspace).
//
// Each member applies the committed log to a Store: etcd's MVCC keyspace with
// a global revision and, per key, create revision, mod revision and version;
// transactions with compares on those and on the value; Put, Get (by key or
// prefix, sorted by create revision, bounded by a maximum create revision),
// Delete; leases with their attached keys. Linearizable requests go through
// the leader's log (ReadIndex is not modelled); serializable reads are
// answered by any member from what it has applied, possibly stale. Watches
// on a key or prefix from a revision are registered with one member, which
// sends the events since that revision and every later one it applies.
//
// # Leases
//
// Leases are granted through the log with at least the server's minimum TTL
// (1.5 election timeouts, rounded up to seconds). Their expiry belongs to the
// leader alone, on its monotonic clock: keep-alives go to the leader and are
// not logged; every 500 ms the leader proposes the revocation of each lease
// that expired, and applying it deletes the lease's keys at one revision. A
// new leader restarts every lease (election timeout + TTL from its election,
// etcd's lessor Promote): a holder that died just before a leader change
// keeps its lock that much longer. With leader-change-extends=false each
// keep-alive is checkpointed in the log with the leader's wall clock, and a
// new leader keeps the expiry the last keep-alive gave. The cluster reports
// both as SystemEvents ("lease-expired", "lease-extended").
//
// # Clients
//
// KVClient is clientv3's client: it follows NotLeader hints, rotates members
// on timeouts and retries within a budget; a retried write may apply twice,
// as in etcd. It is the simulated Transport of Lock, the lock client written
// once for both worlds (the live form, backends/etcd/live, gives it clientv3
// as its Transport). Lock is concurrency.Session (a lease kept alive every
// TTL/3 by a background routine; done when the lease is gone or no
// keep-alive succeeded for a TTL) plus one of two recipes: the queue mutex of clientv3 (put
// prefix/<lease-id> under the lease; the lowest create revision holds;
// waiters watch the key just below theirs), or the simple txn lock. Either
// way the fencing token is the create revision of the holder's key. Options
// reproduce clientv3 3.4.3 (no check of the own key after waiting, etcd
// issue 11456) and the unlock that deletes by name (etcd issue 22082).
// GuardedStore is the protected data kept in etcd and written only by
// Txn(If IsOwner Then Put).
//
// Fault schedules may name "leader" and "followers" (Cluster.Resolve).
//
// Not modelled: compaction and snapshots, membership changes, ReadIndex,
// proposal forwarding (followers answer NotLeader), the gRPC lock service.
//
// # Fidelity
//
// The behaviours of etcd that matter for a lock, whether the model has them,
// and the test (or live row, live/etcdzk_test.go) that shows it. A copy is
// docs/fidelity/etcd.md.
//
//   - Raft with pre-vote (etcd's default since 3.5): yes.
//     TestAFollowerCutFromTheLeaderAloneDoesNotDeposeIt.
//   - CheckQuorum: a leader without a quorum steps down within two election
//     timeouts and stops renewing leases: yes. TestAnIsolatedLeaderStepsDown.
//   - CheckQuorum vote lease: a member that heard its leader within an
//     election timeout ignores votes: yes.
//     TestAFollowerCutFromTheLeaderAloneDoesNotDeposeIt.
//   - Leases expire on the leader's clock alone; revocation through the log
//     deletes the lease's keys at one revision: yes.
//     TestTheLeaderExpiresLeasesAndANewLeaderRestartsThem;
//     TestLeasesOwnKeysAndRevokeDeletesThemAtOneRevision; live:
//     TestEtcdAndZooKeeperSimulatedAndLiveAgree etcd-lease-expiry/*.
//   - Keep-alives answered by the leader only, not logged: yes.
//     TestAnIsolatedLeaderStepsDown.
//   - Leader change restarts every lease for election timeout + TTL (lessor
//     Promote): yes. TestTheLeaderExpiresLeasesAndANewLeaderRestartsThem;
//     catalog etcd-leader-change-extends-lease.
//   - Lease checkpoints (leader-change-extends=false): yes, as an option.
//     TestTheLeaderExpiresLeasesAndANewLeaderRestartsThem.
//   - Minimum lease TTL: 1.5 election timeouts, rounded up to seconds: yes.
//     TestMinimumTTL.
//   - LeaseRenew first confirms leadership with a ReadIndex round
//     (ensureLeadership, the fix of etcd issue 15247): no: CheckQuorum alone
//     bounds an isolated leader's renewals to two election timeouts. No test.
//   - Linearizable reads by ReadIndex: no: linearizable reads go through the
//     log (same answers, slower). TestPutGetAndWatchThroughTheLog.
//   - Serializable reads from any member, possibly stale: yes
//     (reads=serializable). No test.
//   - MVCC revisions: create/mod revision and version per key; txn compares:
//     yes. TestStoreRevisionsPerKey; TestTxnCompares.
//   - Watches from a revision, re-registered at another member: yes.
//     TestPutGetAndWatchThroughTheLog; TestEventsSinceARevision.
//   - clientv3 Mutex: queue under a prefix, lowest create revision holds,
//     create revision as fencing token: yes.
//     TestBothLocksGrantInQueueOrderWithIncreasingTokens; live:
//     TestEtcdAndZooKeeperSimulatedAndLiveAgree kleppmann-gc-pause/etcd-*.
//   - A session takes a lock once: a Lock whose key is already there (its
//     release certainly failed) returns that key, the same grant, and one
//     Unlock frees it (not counted like a reentrant lock's): yes. harness:
//     TestAnEtcdRegrantAfterAFailedReleaseIsNotNested; models:
//     TestAnUncountedLockIsFreedByOneRelease.
//   - Mutex 3.4.3 without the own-key check after waiting (etcd issue 11456):
//     yes, as an option. catalog etcd-waiter-lease-lost,
//     etcd-jepsen-3.4.3-lock; live: etcd-jepsen-3.4.3-lock/fixed.
//   - Unlock by name deletes a newer incarnation (etcd issue 22082): yes, as
//     an option. catalog etcd-stale-unlock-retry.
//   - Guarded write Txn(If IsOwner Then Put): yes.
//     TestGuardedWriteFailsOnceTheLockKeyIsGone; live:
//     kleppmann-gc-pause/etcd-guarded.
//   - A retried write may apply twice; a retry refused after a timed-out
//     attempt is unknown: yes.
//     TestARetryRefusedForAGoneLeaseAfterATimeoutIsUnknown.
//   - Servers' record of grants (ground truth): yes.
//     TestLockVerdictsAgreeWithTheServers/etcd, /etcd-guarded.
//   - Compaction, snapshots, membership changes, proposal forwarding, the gRPC
//     lock service: no. No test.
package etcd
