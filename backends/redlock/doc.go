// Package redlock models Redlock: one lock over N independent Redis instances
// (default 5, no replication between them), as antirez describes it and
// redsync implements it, with the knobs the Kleppmann–antirez debate turns on.
//
// Acquire notes the start time, sets the key (a random 64-bit value, SET NX PX
// ttl) on every instance with a per-instance timeout much smaller than the TTL
// — all at once by default, as redsync does, or one after the other — and
// succeeds iff a majority granted it and validity = TTL − elapsed − (TTL·0.01 +
// 2 ms) is positive. Otherwise it releases on every instance and retries after a
// random delay until its wait budget is spent. Elapsed is measured on the
// client's monotonic clock (antirez's recommendation) or, as an option, its
// wall clock, which a jump fools. The lease the client believes in ends at
// now + validity on its monotonic clock.
//
// The instances are redis.Server handlers: keys expire on each instance's wall
// clock (or, as an option, its monotonic clock), persistence decides what a
// crash loses, and restart-delay makes a restarted instance refuse requests
// for a while (antirez's fix for locks lost in a restart).
//
// Tokens: Redlock has no fencing. By default a grant's token is its random
// value, a uint64 (stored in Redis in decimal, so the owner and the token of a
// history read the same) — unique, not ordered, so a fenced storage cannot tell
// the stale holder. token=incr takes INCR <key>:fence on each instance with the
// SET and uses the maximum over the instances that granted: ordered on each
// instance, but two majorities see different counters, so it still is not a
// fencing token. token=external takes the token from a separate sequencer
// node after the majority: a monotonic counter Redlock itself does not have.
//
// Outcomes: an acquire the client gave up on is certain (ErrNotAcquired) — the
// client never believes it holds the lock, whatever instances kept its key
// until the TTL. A release that reached no instance is ErrUnknown.
package redlock
