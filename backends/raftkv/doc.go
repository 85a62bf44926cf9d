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
// Client implements backends.Lock. It discovers the leader (following
// NotLeader hints, rotating over the nodes on timeouts and while no leader is
// known), retries each request within a retry budget, and reports
// backends.ErrUnknown when an attempt timed out and none settled it. Acquire
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
package raftkv
