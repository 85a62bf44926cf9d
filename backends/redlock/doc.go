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
// The client (Client) is written once against lockapi.Env and a Transport
// whose unit is the round (the sets, the validity check, the release after a
// failed round): NewClient gives it the simulated one, which runs the round
// as described above in messages; package backends/redlock/live gives it
// redsync's TryLock against real redis-server instances.
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
//
// # Fidelity
//
// What of the real system this model has, and where that is shown
// (docs/fidelity/redlock.md is the same as a table). Each item: the behaviour;
// whether it is modelled; the simulated test or catalog scenario that shows it;
// the row of live mode that checks it against the real server, if any ("live:"
// names a test of package live).
//
//   - N independent instances (default 5), no replication between them; a
//     majority must grant. Modelled. Shown by: backends/redlock:
//     TestMajorityGrantsAndValidity. Against the real server: every redlock row
//     of live: TestRedisAndRedlockSimulatedAndLiveAgree (redsync against
//     redis-server ×5).
//   - Validity = TTL − elapsed − (TTL·drift-factor + 2 ms); the acquire succeeds
//     iff a majority granted and validity is positive. Modelled. Shown by:
//     backends/redlock: TestMajorityGrantsAndValidity, TestOptionsSet. Against
//     the real server: live: kleppmann-gc-pause redlock rows (redsync computes
//     its own).
//   - A per-instance timeout much smaller than the TTL; a slow instance counts
//     as not granting. Modelled (request-timeout). Shown by: backends/redlock:
//     TestMajorityGrantsAndValidity (timed-out instances). Against the real
//     server: live rows run with request-timeout=50ms.
//   - The SETs go to every instance at once (redsync) or one after the other
//     (Redlock's description). Modelled (fanout=parallel or sequential). Shown
//     by: backends/redlock: TestMajorityGrantsAndValidity (both). Against the
//     real server: fanout=sequential refused: live:
//     TestOptionsWithoutALiveFormAreNamed.
//   - On failure the client releases on every instance and retries after a
//     random delay until its wait budget is spent. Modelled (redsync counts
//     tries instead of a time budget). Shown by: no dedicated test. Against the
//     real server: none.
//   - Elapsed is measured on the client's monotonic clock (antirez); on its wall
//     clock a jump back hides a pause. Modelled (elapsed-clock=mono or wall).
//     Shown by: backends/redlock: TestPauseBeforeTheValidityCheck; scenario
//     redlock-gc-pause pause-before-check, unsafe-wall-clock. Against the real
//     server: elapsed-clock=wall refused: live:
//     TestOptionsWithoutALiveFormAreNamed.
//   - A pause after acquire returned is invisible to the majority and the
//     validity check: only fencing protects the data. Modelled. Shown by:
//     scenarios kleppmann-gc-pause redlock-unsafe / redlock-fixed,
//     redlock-gc-pause unsafe / fixed. Against the real server: live:
//     kleppmann-gc-pause redlock-unsafe and redlock-fixed rows.
//   - An instance's wall-clock jump expires its key early: two majorities hold
//     the lock at once. Modelled. Shown by: backends/redlock:
//     TestClockJumpBreaksTheMajority; scenario redlock-clock-jump; harness:
//     TestGrantRecordSeesKnownBreaches. Against the real server: live:
//     redlock-clock-jump unsafe row (the fixed variant needs expiry-clock=mono,
//     which redis-server lacks).
//   - An instance that crashes without persistence loses its keys and grants
//     again: two majorities; remedies restart-delay (one TTL) or fsync always.
//     Modelled. Shown by: backends/redlock:
//     TestRestartDelayKeepsALostKeyFromBeingRegranted; scenario redlock-restart;
//     harness: TestGrantRecordSeesKnownBreaches. Against the real server: live:
//     redlock-restart unsafe, fixed-delay and fixed-fsync rows.
//   - Release deletes only our own value on each instance (compare-and-delete);
//     a release of a lock partly lost or taken over says not held. Modelled.
//     Shown by: backends/redlock: TestReleaseOfAStaleKeyIsNotHeld,
//     TestReleaseOfAPartlyLostLock. Against the real server: none.
//   - An acquire the client gave up on is certain (not acquired), whatever
//     instances kept its key until the TTL; a release that reached no instance
//     is unknown. Modelled. Shown by: backends/redlock:
//     TestMajorityGrantsAndValidity (the failed acquire; the unknown release has
//     no dedicated test). Against the real server: none.
//   - Tokens: the random value is unique, not ordered; a per-instance INCR
//     maximum is still not a fencing token; an external sequencer is. Modelled
//     (token=value, incr or external). Shown by: backends/redlock: TestTokens,
//     TestValueIsPrintedAsItsToken; scenario redlock-clock-jump
//     fenced-random-value. Against the real server: live: token=value and
//     token=external rows (kleppmann-gc-pause redlock-fixed); token=incr refused
//     (redsync sends a plain SET).
//   - expiry-clock=mono: instances expire keys on their monotonic clocks
//     (antirez's remedy for jumps). Not in the real system: an option locklab
//     adds to compare with. Shown by: scenario redlock-clock-jump fixed. Against
//     the real server: refused: live: TestOptionsWithoutALiveFormAreNamed.
//   - Clock drift between client and instances beyond the drift allowance.
//     Modelled (the clock-drift fault). Shown by: random sweeps: harness:
//     TestLockVerdictsAgreeWithTheServers (redlock). Against the real server:
//     none (clock-drift cannot run live).
//   - Extending a held lock (redsync's Extend) or renewing it from a watchdog.
//     Not modelled (a Redlock lease is never renewed). Shown by: none. Against
//     the real server: none.
//   - Ground truth: every INVALID lease or mutex verdict is backed by the
//     instances' own record of grants. Checked. Shown by: harness:
//     TestLockVerdictsAgreeWithTheServers (redlock, token=external). Against the
//     real server: none.
//
// Not checked live, though live mode could: redlock-gc-pause unsafe and fixed (a
// pause of the client after acquire returned): nothing in them needs a
// simulator-only option; a release of a partly lost lock
// (TestReleaseOfAPartlyLostLock's schedule) against redsync's Unlock, whose
// answer on a partly lost lock may differ.
package redlock
