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
package zookeeper
