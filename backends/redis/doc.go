// Package redis models a single Redis instance used as a lock service, and the
// client library that takes locks from it, as described in SYSTEMS.md.
//
// The server (Server, a sim.Handler) keeps a keyspace whose TTLs are absolute
// times on the server's wall clock, checked whenever a key is touched — as real
// Redis does, which is why a jump of the server's wall clock expires (or keeps
// alive) locks. It understands the commands the lock recipes need, each as one
// atomic step: SET NX PX, GET, DEL, INCR, and the Lua scripts compare-and-delete,
// compare-and-pexpire, acquire-with-fencing-token (SET NX PX then INCR) and the
// Redisson-style reentrant hash lock. Persistence (none, everysec, always)
// decides what survives a crash.
//
// The client (Client, a backends.Lock) acquires with SET key value NX PX ttl,
// value a random per-acquisition id, retrying with random back-off (0–100 ms)
// until the wait budget — measured on the client's monotonic clock, or its wall
// clock to show why that is wrong — is spent. Release variants: lua (atomic
// compare-and-delete: correct), del (plain DEL: deletes another client's lock
// once ours expired), check-then-del (GET, compare, DEL: races). Options add a
// watchdog that renews the lease every ttl/3 while held, a fencing token from
// INCR <key>:fence, and reentrancy (none, client-side counter, server-side hash).
//
// A request that times out is indeterminate: the client reports ErrUnknown
// unless a later answer settles it.
package redis
