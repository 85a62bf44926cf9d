// Package redislive is the live form of the Redis lock client: the recipe of
// backends/redis (redis.Client, written once against lockapi.Env and
// redis.Transport) over go-redis v9 against real redis-server processes.
//
// The transport sends each command of backends/redis as go-redis sends it
// (command): SET key value NX PX ttl, or, with fencing, a Lua script that does
// SET NX PX and then INCR <key>:fence atomically; GET; DEL; the release
// script (compare-and-delete, answering the value it found otherwise); the
// renewal script (compare-and-pexpire) and WAIT n, which goes over the
// connection of the SET before it (WAIT counts the replicas that
// acknowledged that connection's last write). With a Sentinel, a client that
// saw a timeout or an error asks the Sentinel for the primary before its next
// command (SENTINEL get-master-addr-by-name), as the simulated client asks
// its monitor. A watchdog is a goroutine with its own Env.
//
// Outcomes map as in the simulator: a request that timed out (or whose
// connection broke after it was sent) is indeterminate (lockapi.ErrUnknown);
// a refused connection or an error reply (READONLY, LOADING) is certain
// (Classify). The lease deadline is counted from the moment the request was
// sent, on the client's monotonic clock.
//
// Options the real server cannot honour are refused by CheckOptions with a
// reason. This package is live-only: nothing simulated imports it.
package redislive
