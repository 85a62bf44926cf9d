// Package redis models Redis used as a lock service — a single instance, or a
// primary with asynchronous replicas and a sentinel-like monitor — and the
// client library that takes locks from it, as described in SYSTEMS.md.
//
// # Server
//
// The server (Server, a sim.Handler) keeps a keyspace whose TTLs are absolute
// times on the server's wall clock, checked whenever a key is touched — as real
// Redis does, which is why a jump of the server's wall clock expires (or keeps
// alive) locks; ServerConfig.ExpiryClock = mono makes expiry immune to jumps.
// It understands the commands the lock recipes need, each as one atomic step:
// SET NX PX, GET, DEL, INCR, and the Lua scripts compare-and-delete,
// compare-and-pexpire, acquire-with-fencing-token (SET NX PX then INCR) and the
// Redisson-style reentrant hash lock. Persistence (none, everysec, always)
// decides what survives a crash; RestartDelay makes a restarted instance refuse
// commands for a while (antirez's remedy for locks lost in a restart).
//
// # Replication and failover
//
// With replicas, the primary answers a client and then streams the change to
// its replicas (replication.go): asynchronous, so a grant acknowledged by the
// primary may not exist anywhere else yet. Replicas refuse client commands
// (READONLY). WAIT n makes the primary answer once n replicas acknowledged the
// client's last write. A Monitor (monitor.go) pings every instance on its own
// monotonic clock; after the primary has been silent for DownAfter it promotes
// the reachable replica with the highest offset in a new config epoch and
// tells every other instance, the old primary included once it is heard of
// again, to replicate from it — discarding what they had. Writes the old
// primary acknowledged but never replicated are lost: that is the hazard the
// redis-failover scenario shows.
//
// Invariants: replication is deterministic (entries carry the primary's clock
// reading, so every copy computes the same absolute TTLs); a replica applies
// entries strictly in offset order and asks again after a gap; the replication
// configuration (role, primary, epoch) survives a crash, data only as far as
// persistence says.
//
// # Client
//
// The client (Client, a backends.Lock) acquires with SET key value NX PX ttl,
// value a random per-acquisition id, retrying with random back-off (0–100 ms)
// until the wait budget — measured on the client's monotonic clock, or its wall
// clock to show why that is wrong — is spent. Release variants: lua (atomic
// compare-and-delete: correct), del (plain DEL: deletes another client's lock
// once ours expired), check-then-del (GET, compare, DEL: races). Options add a
// watchdog that renews the lease every ttl/3 while held, a fencing token from
// INCR <key>:fence, reentrancy (none, client-side counter, server-side hash),
// and WAIT n after SET. A monitored client asks the monitor for the primary
// after a timeout or a READONLY answer, so it follows a failover.
//
// A request that times out is indeterminate: the client reports ErrUnknown
// unless a later answer settles it. A refusal (READONLY, restart delay) is
// certain: the command did not run.
package redis
