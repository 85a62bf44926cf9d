// Package live is the live form of locklab's etcd system: a real etcd
// cluster (Debian's etcd-server 3.4, members etcd1..etcdN on loopback,
// started and stopped by locklab with internal/proc) and the real client,
// go.etcd.io/etcd/client/v3 v3.7.3, carrying the simulated client's recipe.
//
// The recipe is written once, in backends/etcd (etcd.Lock: the session, the
// queue mutex as clientv3's concurrency.Mutex writes it, the keep-alive
// watchdog, the releases, the guarded write, the outcomes and their error
// texts), over an etcd.Transport. This package's transport is clientv3: a
// Txn, a Get, a lease grant, a KeepAliveOnce and a watch per request, with
// what the library does on its own left to it (gRPC's retries and balancing
// within the retry budget, and a concurrency.Session per lease whose
// keep-alive stream runs beside the recipe's watchdog; a session clientv3
// closes ends the recipe's session too).
//
// Options are the simulated etcd's (backends/etcd: same names, meanings
// and defaults), as far as the real server and client honour them: tick
// and election-timeout are the members' --heartbeat-interval and
// --election-timeout, ttl the session's lease TTL (whole seconds, at least
// the server's minimum), leader-change-extends=false turns on
// --experimental-enable-lease-checkpoint, initial-leader moves the
// leadership there once the cluster is up, unlock=guarded deletes with
// Txn(If IsOwner), unlock-retry retries an unknown release in a goroutine,
// resource=etcd keeps the protected data in etcd (written with Txn(If
// IsOwner Then Put)), reads=serializable reads from any member. What the
// pinned client does not do is refused with the reason: lock=txn,
// check-after-wait=false (clientv3 3.4.3's bug is fixed in the client), and
// the simulated transport's own timing knobs.
//
// The fencing token is the holder key's create revision (the revision
// Mutex.IsOwner compares). Each client's connections pass its node's gate
// (internal/netgate): a paused client's keep-alives stop with it and
// its lease expires at the server, as in a real GC pause. Lease expiries
// are seen by a watch of the lock keys (a key deleted with its lease) and
// recorded as system events, as the simulator records its leader's.
//
// The package registers the live form with liveform from its init (the
// servers and roles it describes, the faults real etcd members cannot run
// and why, the deployment: start, pause, crash, cut, lease-expiry events);
// backends/builtin imports it, which registers the simulated etcd too.
// Nothing simulated imports it.
package live
