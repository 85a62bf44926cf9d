// Package raftkv models a Raft-replicated KV lock with RheaKV's
// DistributedLock semantics, running inside the simulator on etcd raft
// (go.etcd.io/raft/v3 RawNode), and the client library that takes locks from
// it, as described in SYSTEMS.md (`raftkv`).
//
// # Servers
//
// A Cluster is a raft group of 3 or 5 nodes (n1, n2, ...). Each node is a
// Server, an event-driven sim.Handler around a RawNode:
//
//   - Ticks come from a timer on the node's monotonic clock (drift changes the
//     tick rate, as it would on a real machine).
//   - Election timing belongs to the simulator: raft's own ElectionTick is so
//     large that it never campaigns, CheckQuorum is off, and the node calls
//     Campaign when a seeded timer expires. The timer's timeout is drawn from
//     the node's own stream in [ElectionTimeout, 2·ElectionTimeout) and reset
//     whenever the node hears from a leader (MsgApp, MsgHeartbeat, MsgSnap of
//     its term or later) or grants a vote. So runs replay exactly: raft's
//     randomized timeout (which reads crypto/rand) never decides anything.
//   - Raft messages travel on the simulated network as etcd raft hands them
//     out, their entries shared rather than copied: nothing writes to them
//     once sent (raftnode.Outbound says why).
//   - Each Ready is processed in the documented order: persist the hard state
//     and entries (to the node's Disk and its raft storage), send the
//     messages, apply the committed entries, Advance.
//   - The Disk survives crashes; a restart builds a new RawNode over it and a
//     fresh state machine that the committed entries replay into. With
//     fsync=interval, writes become durable only every fsync-interval and a
//     crash loses the rest — breaking Raft's assumption on purpose.
//
// Clients send a Request to the node they believe leads. A node that does not
// lead answers NotLeader with the leader it knows of (proposal forwarding is
// off). The leader stamps the command with its wall clock (or keeps the
// client's stamp with stamp=client), proposes it, and answers when it applies
// the entry. Commands carry a session and sequence number: the state machine
// (package lockfsm) answers a retry from its session table, so a request that
// is retried at another leader takes effect at most once.
//
// # Client
//
// Client implements lockapi.Lock. It discovers the leader (following
// NotLeader hints, rotating over the nodes on timeouts and while no leader is
// known), retries each request within a retry budget, and reports
// lockapi.ErrUnknown when an attempt timed out and none settled it. Acquire
// retries try-lock with random back-off until the wait budget is spent; one
// acquirer id per client and key makes nested acquires reentrant
// (REENTRANT_SUCCESS, same fencing token) and each Release gives back one of
// them. A watchdog process renews the lease every lease·2/3 while it is held.
// The lease the client records ends lease after it sent the winning try-lock,
// on its own monotonic clock.
//
// # Audit
//
// Every cluster has an Audit that watches it from outside: at most one leader
// per term, at most one leader per term whose results clients were given, the
// same entry at each index on every node that applies it (including replays
// after restarts), and every acknowledged command in the log of a majority
// at the end (Cluster.Violations).
//
// Fault schedules may name "leader" (the node that leads when the fault
// starts) and "followers" (Cluster.Resolve).
//
// Not modelled: log compaction and snapshots (the log of a run stays in
// memory), membership changes, ReadIndex (reads go through the log).
//
// # Fidelity
//
// What of the real system this model has, and where that is shown
// (docs/fidelity/raftkv.md is the same as a table). Each item: the behaviour;
// whether it is modelled; the simulated test or catalog scenario that shows it;
// the row of live mode that checks it against the real server, if any ("live:"
// names a test of package live).
//
//   - try-lock: no owner -> FIRST_TIME_SUCCESS with a new token; owner expired
//     -> NEW_ACQUIRE_SUCCESS with a new token; same acquirer ->
//     REENTRANT_SUCCESS, same token; else fail with the owner (id, remaining
//     lease, context). Modelled. Shown by: backends/raftkv/lockfsm:
//     TestLockStateMachine, TestRefusalReportsTheOwnersContext; backends/raftkv:
//     TestLockGrantsRefusesAndReenters. Against the real server:
//     backends/raftkv/live: TestClusterGrantsWithTokensAndRedirects; live:
//     kleppmann-gc-pause raftkv rows.
//   - unlock counts down and deletes at zero; unlock=delete frees the lock at
//     the first nested release. Modelled (unlock=delete is a comparison
//     variant). Shown by: backends/raftkv/lockfsm: TestLockStateMachine;
//     scenario raftkv-reentrant. Against the real server: none.
//   - Fencing tokens come from one replicated counter, increase with every grant
//     and are kept by reentrant acquires and renewals. Modelled. Shown by:
//     backends/raftkv/lockfsm: TestLockStateMachine; harness:
//     TestTokensMonotonicRejectsAndAccepts. Against the real server: live:
//     kleppmann-gc-pause raftkv-fixed row,
//     TestRandomFaultsOnHashicorpRaftKeepTheLockSafe.
//   - The leader stamps each lock command with its wall clock and every replica
//     computes deadlines from the stamp: a leader whose clock is ahead expires
//     leases early. Modelled (stamp=leader; stamp=client to compare). Shown by:
//     scenario raftkv-leader-clock-ahead (unsafe, fixed, client-stamp); harness:
//     TestRaftkvLeaseVerdictsOfIssue10, TestGrantRecordSeesKnownBreaches.
//     Against the real server: live: raftkv-leader-clock-ahead unsafe and fixed
//     rows.
//   - Watchdog: keep-lease every lease·2/3 while held. Modelled. Shown by:
//     backends/raftkv: TestWatchdogKeepsTheLeaseUntilReleased. Against the real
//     server: none (the live client renews the same way; no row isolates it).
//   - The lease a client believes in counts from when it sent the winning
//     try-lock, on its monotonic clock. Modelled. Shown by: harness:
//     TestClientLeasesCountFromTheRequest (raftkv). Against the real server:
//     none.
//   - Reads of the owner go through the log, never a stale local read. Modelled
//     (through the log only; ReadIndex and lease reads are not modelled). Shown
//     by: backends/raftkv/lockfsm: TestLockStateMachine (get). Against the real
//     server: none.
//   - A follower answers NotLeader with the leader it knows (no proposal
//     forwarding); the client follows hints and rotates over the nodes.
//     Modelled. Shown by: backends/raftkv:
//     TestClientFollowsTheLeaderAcrossAPartition, TestResolveFollowsTheLeader.
//     Against the real server: backends/raftkv/live:
//     TestClusterGrantsWithTokensAndRedirects.
//   - A request that timed out and was not settled is indeterminate. Modelled.
//     Shown by: backends/raftkv: TestRequestLostInAPartitionIsUnknown. Against
//     the real server: none (the live client classifies hashicorp/raft's errors
//     the same way; no row forces one).
//   - A retried command takes effect once (a session and sequence number per
//     client). Modelled; whether RheaKV itself deduplicates a retried try-lock
//     is not established here (without it, a retry whose first attempt committed
//     counts as a reentrant acquire). Shown by: backends/raftkv/lockfsm:
//     TestSessionsMakeRetriesExactlyOnce; backends/raftkv:
//     TestRetriedRequestTakesEffectOnce. Against the real server: none.
//   - Elections: at most one leader per term, randomized timeouts, pre-vote.
//     Modelled (etcd raft; the simulator draws the timeouts from the seed).
//     Shown by: backends/raftkv: TestElectsOneLeaderAndReplaysExactly,
//     TestInitialLeaderCampaignsFirst; harness: TestRaftAuditIsAVerdict,
//     TestRaftTracesAreUnchanged. Against the real server: backends/raftkv/live:
//     TestLeaderIsolationElectsAnotherLeader; live: raftkv-leader-partition
//     rows.
//   - A leader cut off from a majority steps down (CheckQuorum; JRaft's leader
//     lease). Not modelled: the cut-off leader believes it leads until it hears
//     a later term; its clients time out and retry elsewhere instead of being
//     redirected. Shown by: none. Against the real server: hashicorp/raft steps
//     down (leader-lease-timeout): live: raftkv-leader-partition rows.
//   - Durability: entries and votes are fsync'd before messages are sent; with
//     fsync=interval a crash loses acknowledged entries. Modelled (fsync=always
//     or interval). Shown by: backends/raftkv:
//     TestDiskLosesOnlyWhatWasNotSynced; harness:
//     TestAuditCatchesLostWritesWithoutFsync. Against the real server: none.
//   - A crashed node restarts from its disk and replays the committed log into a
//     fresh state machine. Modelled. Shown by: backends/raftkv:
//     TestCrashRestartReplaysTheLog. Against the real server:
//     backends/raftkv/live: TestCrashRestartKeepsTheLockState.
//   - A node that lost its disk rejoins empty. Not modelled in the simulator
//     (the disk survives every crash). Shown by: none. Against the real server:
//     backends/raftkv/live: TestRestartWithLostStoresRejoinsEmpty
//     (restart=lose).
//   - A paused node (GC) applies nothing until it resumes. Modelled (the pause
//     fault). Shown by: harness: TestRaftKVRandomFaults. Against the real
//     server: backends/raftkv/live: TestPausedLeaderAppliesNothingUntilResumed.
//   - Log compaction and snapshots. Not modelled in the simulator (the log stays
//     whole); the state machine's snapshot is deterministic. Shown by:
//     backends/raftkv/lockfsm: TestSnapshotRoundTripIsDeterministic. Against the
//     real server: hashicorp/raft snapshots the FSM live; no row forces one.
//   - Membership changes; RheaKV's regions (the key space split over several
//     Raft groups) and placement driver. Not modelled (one fixed group holds
//     every key). Shown by: none. Against the real server: none.
//   - Audit: one leader per term, the same entry at each index on every node,
//     every acknowledged command on a majority at the end. Checked. Shown by:
//     backends/raftkv: TestAuditRejectsAndAccepts,
//     TestAuditFindsAcknowledgedCommandsMissingFromAMajority. Against the real
//     server: none.
//   - Ground truth: every INVALID lease or mutex verdict is backed by the state
//     machine's own record of grants. Checked. Shown by: harness:
//     TestLockVerdictsAgreeWithTheServers (raftkv). Against the real server:
//     none.
//
// Not checked live, though live mode could: raftkv-reentrant unsafe and fixed
// (counted and deleting unlocks): the live client is reentrant and lockfsm is
// the same code; fsync=interval losing acknowledged entries: hashicorp/raft's
// stores could be given the same interval.
package raftkv
