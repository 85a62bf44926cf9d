// Package zookeeper models a ZooKeeper ensemble and Curator's lock recipe
// (InterProcessMutex) in the simulator.
//
// Servers zk1..zkN order every write through an atomic broadcast and apply it
// to a data tree of znodes (czxid, mzxid, version, cversion; EPHEMERAL and
// SEQUENTIAL nodes); reads (getChildren, exists) are served by the server a
// client is connected to and may lag; one-shot watches fire as that server
// applies the change, in zxid order. The leader tracks sessions on its own
// monotonic clock and closes one, through the log, after its timeout without
// contact, deleting its ephemeral nodes; a new leader re-arms every session.
// A server that is not part of a working quorum refuses clients.
//
// The atomic broadcast is etcd raft (go.etcd.io/raft/v3, as backends/raftkv
// runs it: RawNode stepped by the event loop, elections timed by a seeded
// timer), standing in for ZAB. ZAB differs in ways the lock does not see:
// its leader election picks the server with the highest zxid (raft: the most
// up-to-date log, the same outcome), a new epoch begins with a synchronisation
// phase (raft: the leader's first empty entry), followers forward writes to
// the leader (raft proposal forwarding) and sessions are revalidated by the
// leader on reconnect (here the server checks its own copy of the session
// table, which is current up to its lag). zxid = term<<32 | index, as
// ZooKeeper's epoch<<32 | counter: it increases with every transaction.
// The log survives a crash (ZooKeeper syncs its log before acknowledging).
//
// The client (Client) keeps one session per process, pings every
// session-timeout/3 from an I/O process, calls the connection lost after the
// read timeout (SUSPENDED) and reconnects to the next server with the same
// session; Curator's LOST comes when its clock says the session timeout has
// passed since SUSPENDED, or when a server says the session expired. The
// recipe's options (protection, herd, on-suspend, token, sync,
// release-retry, adopt-check) are in Table.
//
// In the simulator the ensemble also keeps a record of its grants
// (RecordGrants): a lock's lowest node, given to the client whose session
// owns it, until its owner deletes it or, after the session's expiry, until
// the leader's promise to the session ran out (its last contact with the
// serving leader of the highest term, plus the timeout). A session's expiry
// event (Event) names the nodes it deleted and that promise.
//
// # Fidelity
//
// What matters for a lock, modelled or not, and what shows it (a test, a
// catalog scenario, a live row of live/etcdzk_test.go against ZooKeeper
// 3.8.0; "extended" rows need LOCKLAB_LIVE_MEASURE=1). The same table, with
// more words, is docs/fidelity/zookeeper.md.
//
// Servers:
//   - Writes ordered by one leader, committed on a quorum: modelled (raft for
//     ZAB, see above). baseline-zookeeper; live: every row.
//   - A server outside a working quorum refuses clients (CONNECTIONLOSS):
//     modelled. zk-partitioned-holder; live: zk-partitioned-holder (extended).
//   - Reads served by the connected server may lag; sync catches up:
//     modelled (option sync). No scenario pins a stale read.
//   - The leader expires a session after its timeout without contact, on its
//     monotonic clock, tick-granular, deleting its ephemeral nodes: modelled
//     (a fast clock expires early, a wall-clock jump does nothing).
//     zk-session-expiry, kleppmann-gc-pause/zookeeper-*,
//     TestZooKeeperLeaseSaysWhosePromiseBroke; live: zk-session-expiry,
//     kleppmann-gc-pause/zookeeper-* (a server clock jump is refused live).
//   - A new leader re-arms every session: modelled. zk-reconnect-double-lock.
//   - A follower relays its clients' pings to the leader: modelled at once
//     per ping (ZooKeeper batches them, up to a tick later).
//   - The leader refuses the requests of a session it decided to close: not
//     modelled (until the close commits the session is answered; the record
//     of grants does not count those contacts).
//   - A server refuses a client that has seen a later zxid: not modelled (a
//     client may resume its session on a lagging server).
//   - Ephemeral sequential nodes, sequence = parent's cversion, any session
//     may delete any node: modelled. TestTree.
//   - One-shot watches in zxid order: modelled. zk-herd, TestHerdCurves.
//   - The log is synced before acknowledging and replayed after a crash:
//     modelled. Random crash faults.
//
// Client and Curator:
//   - Pings every session-timeout/3; no reply within the read timeout (2/3)
//     is SUSPENDED; the session resumes on the next server: modelled.
//     zk-partitioned-holder; live: the same (read-timeout refused live).
//   - The connection loss is the client's: it closes the silent connection,
//     fails what was pending on it, takes nothing that comes on it later as
//     an answer, and a connection attempt it gave up never reaches a server:
//     modelled (the read timeout runs from each request's send).
//     TestAConnectionTheClientAbandonedAnswersNothing,
//     TestZooKeeperConnectionLossesReproduceOverTCP. A write on a closed
//     connection after the session moved is applied (no SESSIONMOVED).
//   - LOST when the session timeout has passed since SUSPENDED, or on
//     SESSIONEXPIRED; Curator injects it client-side and does not close the
//     session on the server: modelled. zk-reconnect-double-lock.
//   - on-suspend=continue believes up to read timeout + session timeout
//     (16.7 s at 10 s) after the last reply, longer than the leader keeps the
//     session: modelled (default). zk-partitioned-holder/unsafe,
//     TestZooKeeperLeaseSaysWhosePromiseBroke (seeds 145, 191); live:
//     zk-partitioned-holder/unsafe (extended). on-suspend=stop ends the
//     belief at SUSPENDED: zk-partitioned-holder/fixed,
//     TestLockVerdictsAgreeWithTheServers/zookeeper-suspend-stop.
//   - The recipe (EPHEMERAL_SEQUENTIAL, lowest holds, watch the next-lower
//     node, herd): modelled. baseline-zookeeper, zk-herd; live: every row.
//   - Protected mode and the orphan node without it: zk-orphan-node.
//     CURATOR-604 (adopt-check): zk-reconnect-double-lock. CURATOR-678
//     (release-retry): zk-release-connection-loss.
//   - Outcomes: an unanswered create or delete is unknown, and a retry does
//     not make it a failure; an acquire that fails while a node of its own
//     may hold the lock is unknown: TestZooKeeperAcquireAfterAnUnansweredCreateIsUnknown,
//     zk-release-connection-loss.
//   - Fencing token czxid or sequence: kleppmann-gc-pause/zookeeper-fixed,
//     zk-session-expiry/fixed; live: the same.
//   - Ground truth: TestZooKeeperRecordsItsGrants,
//     TestLockVerdictsAgreeWithTheServers/zookeeper.
package zookeeper
