// Package etcd is the live form of locklab's etcd system: a real etcd
// cluster (Debian's etcd-server 3.4, members etcd1..etcdN on loopback,
// started and stopped by locklab with internal/proc) and the real client,
// go.etcd.io/etcd/client/v3 v3.7.3 with concurrency.Session and
// concurrency.Mutex.
//
// Options are the simulated etcd's (backends/etcd: same names, meanings
// and defaults), as far as the real server and client honour them: tick
// and election-timeout are the members' --heartbeat-interval and
// --election-timeout, ttl the session's lease TTL (whole seconds, at least
// the server's minimum), leader-change-extends=false turns on
// --experimental-enable-lease-checkpoint, initial-leader moves the
// leadership there once the cluster is up, unlock=guarded deletes with
// Txn(If IsOwner), resource=etcd keeps the protected data in etcd (written
// with Txn(If IsOwner Then Put)), reads=serializable reads it from any
// member. What the real client cannot do is refused with the reason:
// lock=txn, check-after-wait=false (clientv3 3.4.3's bug is fixed in the
// client), unlock-retry, and the simulated client's own timing knobs.
//
// The fencing token is the holder key's create revision (the revision
// Mutex.IsOwner compares). Each client's connections pass its node's gate
// (internal/netgate): a paused client's keep-alives stop with it and
// its lease expires at the server, as in a real GC pause. Lease expiries
// are seen by a watch of the lock keys (a key deleted with its lease) and
// recorded as system events, as the simulator records its leader's.
//
// This package is live-only: nothing simulated imports it.
package etcd
