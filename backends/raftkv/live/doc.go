// Package raftkvlive is the live form of the raftkv lock: the same RheaKV lock
// state machine (backends/raftkv/lockfsm) replicated by
// github.com/hashicorp/raft, the production library, with 3 or 5 nodes in
// this process.
//
//   - FSM wraps lockfsm.Machine as a raft.FSM, snapshots included
//     (Snapshot/Restore use the machine's deterministic JSON snapshot).
//   - Each node's transport wraps a raft.InmemTransport and sends every RPC
//     through a faultnet.Net: a cut directed link hangs for rpc-timeout and
//     fails (a blackhole, not a refusal), delay rules delay it, a paused
//     sender or receiver holds it. Pipelining is refused so that every append
//     and heartbeat crosses the Net; pre-vote is kept (the wrapper implements
//     raft.WithPreVote, without which raft silently disables it).
//   - A pause stops a node's transport, its FSM and its client requests until
//     it resumes (what a GC pause does). hashicorp/raft's own timers keep
//     running, as they would in a paused process only after it resumes: the
//     node typically finds itself behind and holds an election.
//   - Crash shuts a node down; Restart brings it back over its log, stable and
//     snapshot stores (restart=keep) or empty ones (restart=lose: a lost disk),
//     on a fresh transport at the same address.
//   - Each node's wall clock is the machine's plus an offset the nemesis moves;
//     the leader stamps lock commands with it (stamp=leader), so a leader whose
//     clock runs ahead expires leases early, as in the simulated model.
//   - The client is the simulated raftkv client itself (raftkv.Client: leader
//     redirects, retries under one session and sequence number, reentrant
//     acquires, a watchdog renewing every lease·2/3) over a live
//     raftkv.Transport: its requests cross the faultnet to Cluster.Serve, its
//     watchdog is a goroutine. A node that lost leadership after proposing
//     answers Unknown, which the transport gives as an uncertain outcome.
//   - Options are the simulated raftkv's table (Options embeds
//     raftkv.Options) without its tick and fsync options, plus hashicorp/raft's
//     timing and what a restart keeps.
//
// Timing options are hashicorp/raft's (heartbeat-timeout, election-timeout,
// leader-lease-timeout, commit-timeout) with its defaults; Options.Fast
// shortens them for tests. Apply errors are classified as the library
// documents: ErrNotLeader, ErrEnqueueTimeout, ErrLeadershipTransferInProgress
// and ErrAbortedByRestore certainly did not apply (a redirect);
// ErrLeadershipLost may have (unknown).
//
// This package is live-only: real time, goroutines. Nothing simulated imports it.
package raftkvlive
