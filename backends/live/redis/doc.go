// Package redis is the live form of the Redis and Redlock lock clients: the
// same recipes as the simulated backends/redis and backends/redlock clients,
// with the real client libraries against real redis-server processes.
//
// Client uses go-redis v9: SET key value NX PX ttl (or, with fencing, a Lua
// script that does SET NX PX and then INCR <key>:fence atomically), release
// by lua (compare-and-delete), del (plain DEL) or check-then-del (GET, compare,
// DEL), a watchdog that renews the lease every ttl/3 (compare-and-pexpire),
// and WAIT n sent on the same connection as the SET (one pipeline). With a
// Sentinel, a client that saw a timeout or an error asks the Sentinel for the
// primary before its next command (SENTINEL get-master-addr-by-name), as the
// simulated client asks its monitor.
//
// Redlock uses redsync v4 (one try per attempt; locklab's own retry loop with
// the simulated client's back-off and wait budget), with a recording wrapper
// around each instance's pool so that a lease names the instances that granted
// it and a release counts what each instance answered.
//
// Outcomes map as in the simulator: a request that timed out (or whose
// connection broke after it was sent) is indeterminate (lockapi.ErrUnknown);
// a refused connection or an error reply (READONLY, LOADING) is certain. The
// lease deadline is counted from the moment the request was sent, on the
// client's monotonic clock.
//
// Options the real libraries cannot honour are refused by CheckOptions and
// CheckRedlockOptions with a reason. This package is live-only: nothing
// simulated imports it.
package redis
