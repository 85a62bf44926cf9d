// Package live is the live form of locklab's ZooKeeper system: a real
// ZooKeeper 3.8 ensemble (Debian's zookeeper; servers zk1..zkN, one server
// standalone), each server a JVM running QuorumPeerMain with a private
// configuration directory, -Xmx256m and an slf4j binding, readiness by the
// four-letter word srvr; and github.com/go-zookeeper/zk v1.0.4 as the
// client library.
//
// The lock recipe is the simulated system's own, written once
// (zookeeper.Client: Curator's InterProcessMutex with the same options);
// this package gives it a zookeeper.Transport on go-zookeeper's primitives
// (the handle), not go-zookeeper's zk.Lock, which has no wait budget (no
// timeout, no context), hides its node (no path, no czxid for a fencing
// token) and has no protected-mode adopt check. The fencing token is the lock node's czxid (or its
// sequence number, token=sequence).
//
// Timing comes from the simulated options: tick is the servers' tickTime,
// election-timeout their syncLimit (in ticks), session-timeout the
// client's requested session timeout (the servers allow it). Client
// connections pass the client node's gate (internal/netgate), so a
// paused client's pings stop and its session expires at the leader.
// Server-to-server links go through per-link proxies (see peerLinks), so
// partitions that split or isolate servers run; a one-way cut between
// servers is refused. Session expiries are seen by a watch of the lock
// directories (a node that vanished without its client's delete) and
// recorded as system events.
//
// The package registers ZooKeeper's live form (liveform.Register: describe,
// deploy, the faults its real servers perform); backends/builtin imports it,
// and through it the simulated form. It is live-only: nothing simulated
// imports it.
package live
