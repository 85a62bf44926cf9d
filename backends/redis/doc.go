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
// The client (Client, a lockapi.Lock) acquires with SET key value NX PX ttl,
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
//
// The recipe is written once, against lockapi.Env and a Transport (send a
// command to the instance commands go to now; start a background routine):
// NewClient and NewClientFor give it the simulated transport (messages from
// the client's sim.Proc, the monitor asked after a failure), package
// backends/redis/live a go-redis one against real redis-server.
//
// # Fidelity
//
// What of the real system this model has, and where that is shown
// (docs/fidelity/redis.md is the same as a table). Each item: the behaviour;
// whether it is modelled; the simulated test or catalog scenario that shows it;
// the row of live mode that checks it against the real server, if any ("live:"
// names a test of package live).
//
//   - A grant is SET key value NX PX ttl, one atomic step; the value is a random
//     per-acquisition id. Modelled. Shown by: backends/redis:
//     TestKeyspaceCommands, TestAcquireWaitsWithinItsBudget. Against the real
//     server: every redis row of live: TestRedisAndRedlockSimulatedAndLiveAgree
//     (go-redis against redis-server).
//   - TTLs are absolute times on the server's wall clock: a wall-clock jump
//     expires a lock early (or keeps it). Modelled (checked whenever the key is
//     touched; Redis's background expiry only frees memory sooner, which no
//     reader can tell). Shown by: backends/redis:
//     TestLeaseExpiresOnTheServersWallClock, TestMonoExpiryIgnoresClockJumps
//     (wall). Against the real server: live: TestAClockJumpExpiresAKeyEarly
//     (libfaketime moves redis-server's clock).
//   - expiry-clock=mono: TTLs on the server's monotonic clock. Not in the real
//     system: an option locklab adds to compare with. Shown by: backends/redis:
//     TestMonoExpiryIgnoresClockJumps (mono). Against the real server: refused:
//     live: TestOptionsWithoutALiveFormAreNamed.
//   - Release: Lua compare-and-delete is atomic; plain DEL deletes another
//     client's lock once ours expired; GET-compare-DEL races. Modelled. Shown
//     by: backends/redis: TestReleaseVariants; scenario redis-del-unlock;
//     harness: TestGrantRecordSeesKnownBreaches. Against the real server: live:
//     redis-del-unlock unsafe and fixed rows.
//   - A user's lock's commands and scripts: every command the common lock
//     libraries (bsm/redislock, redsync, Redisson, rueidislock) send or call
//     from their scripts, with redis-server 7.0's replies, errors and TTLs (the
//     table is in package backends/redis/engine); a script's error or an
//     unknown command is a note of the run. Modelled (not subscribers, WAIT
//     from a script's client, client-side caching). Shown by:
//     backends/redis/engine: FuzzDo; backends/redis:
//     TestAScriptsErrorReachesTheRunsNotes. Against the real server:
//     backends/redis/engine: TestTheEngineAnswersAsRedisServerDoes (each call
//     against redis-server).
//   - Watchdog (Redisson): renew every ttl/3 while held; it cannot save a paused
//     holder. Modelled. Shown by: backends/redis:
//     TestWatchdogRenewsWhileHeldAndStopsAfterRelease,
//     TestWatchdogCannotSaveAPausedHolder. Against the real server: none (the
//     live client renews the same way; no row isolates it).
//   - Fencing token from INCR <key>:fence, monotonic only while the instance
//     keeps its data. Modelled. Shown by: backends/redis:
//     TestFencingTokensAndReentrancy, TestPersistenceDecidesWhatSurvivesACrash;
//     scenario kleppmann-gc-pause redis-fixed. Against the real server: live:
//     kleppmann-gc-pause redis-fixed row.
//   - Reentrancy: none, a client-side counter, or a server-side hash (Redisson).
//     Modelled. Shown by: backends/redis: TestFencingTokensAndReentrancy.
//     Against the real server: reentrancy=server refused: live:
//     TestOptionsWithoutALiveFormAreNamed.
//   - The wait budget is measured on the client's monotonic clock; on its wall
//     clock a jump back fools it. Modelled. Shown by: backends/redis:
//     TestAcquireWaitsWithinItsBudget, TestWallClockBudgetIsFooledByAJumpBack.
//     Against the real server: none.
//   - The lease a client believes in counts from when it sent the SET, not from
//     the reply. Modelled. Shown by: harness:
//     TestClientLeasesCountFromTheRequest (redis, redis-replicated). Against the
//     real server: none.
//   - A timed-out request is indeterminate (the SET may have run); a refusal
//     (READONLY, restart delay) is certain. Modelled. Shown by: backends/redis:
//     TestUnreachableServerGivesUnknown. Against the real server:
//     backends/redis/live: TestOutcomesOfFailedRequests.
//   - Persistence none / appendfsync everysec / always: a crash loses what was
//     not fsync'd. Modelled (AOF fsync policy; RDB snapshots, AOF rewrite and
//     appendfsync no are not modelled). Shown by: backends/redis:
//     TestPersistenceDecidesWhatSurvivesACrash, TestEverySecLosesTheLastSecond.
//     Against the real server: live: redlock-restart fixed-fsync row
//     (redis-server --appendonly yes --appendfsync always).
//   - Restart delay: a restarted instance stays unavailable for a while
//     (antirez's remedy for locks lost in a restart). Modelled as a refusal
//     window; an operator's procedure, not a Redis feature. Shown by:
//     backends/redis: TestReplicaRefusesCommandsAndRestartDelayRefusesToo.
//     Against the real server: live: redlock-restart fixed-delay row (the server
//     is started that much later).
//   - Loading at start-up: redis-server answers -LOADING while it reads its AOF.
//     Not modelled (a restarted instance has its data at once). Shown by: none.
//     Against the real server: none.
//   - maxmemory eviction: under an allkeys-* policy a lock key can be evicted
//     before its TTL. Not modelled (no memory limit). Shown by: none. Against
//     the real server: none.
//   - Redis Cluster: hash slots, MOVED/ASK redirects, cluster failover. Not
//     modelled. Shown by: none. Against the real server: none.
//   - Replication is asynchronous: the primary answers before any replica has
//     the write; replicas apply in offset order, resync partially from a backlog
//     or fully. Modelled. Shown by: backends/redis:
//     TestReplicationIsAsynchronousAndWaitCountsReplicas,
//     TestPrimaryKeepsNoBacklogUntilAReplicaSyncs. Against the real server:
//     live: TestAReplicationLinkCutLosesAnAcknowledgedWrite.
//   - TTLs replicate as absolute times (PXAT, Redis 7), so a promoted replica
//     expires keys on its own wall clock. Modelled. Shown by: no dedicated test.
//     Against the real server: none.
//   - Replicas refuse client writes (READONLY); a client asks the Sentinel for
//     the primary after a timeout or READONLY. Modelled. Shown by:
//     backends/redis: TestReplicaRefusesCommandsAndRestartDelayRefusesToo,
//     TestFailoverPromotesAReplicaAndClientsFollow. Against the real server:
//     live: redis-failover rows (go-redis's Sentinel client).
//   - Failover: after down-after of silence on the Sentinel's own clock, the
//     reachable replica with the highest offset is promoted in a new epoch; the
//     old primary, heard of again, is demoted and loses what it had not
//     replicated. Modelled (one monitor). Shown by: backends/redis:
//     TestFailoverPromotesAReplicaAndClientsFollow; scenario redis-failover;
//     harness: TestGrantRecordSeesKnownBreaches. Against the real server: live:
//     redis-failover unsafe row (real redis-sentinel).
//   - WAIT n after SET reduces the loss on failover and does not remove it; WAIT
//     short of n releases and fails the acquire. Modelled. Shown by:
//     backends/redis: TestWaitKeepsTheGrantThroughAFailover,
//     TestWaitShortOfReplicasReleasesAndFails; scenario redis-failover
//     fixed-wait, unsafe-wait. Against the real server: live: redis-failover
//     fixed-wait and unsafe-wait rows (LOCKLAB_LIVE_MEASURE=1),
//     TestAReplicationLinkCutLosesAnAcknowledgedWrite.
//   - A primary restarted without persistence before down-after stays primary,
//     empty, and its replicas resync from it: every lock is gone. Modelled.
//     Shown by: backends/redis:
//     TestPrimaryBackBeforeDownAfterWithoutPersistenceLosesEverything. Against
//     the real server: none.
//   - Sentinel quorum: several Sentinels agree the primary is down (ODOWN),
//     elect a leader, honour failover-timeout and replica-priority. Not modelled
//     (one monitor decides alone, on offset only). Shown by: none. Against the
//     real server: none (live runs one redis-sentinel, so a quorum is not
//     exercised there either).
//   - min-replicas-to-write / min-replicas-max-lag: a primary refuses writes
//     without enough connected replicas. Not modelled. Shown by: none. Against
//     the real server: none.
//   - Ground truth: every INVALID lease or mutex verdict is backed by the
//     servers' own record of grants. Checked. Shown by: harness:
//     TestLockVerdictsAgreeWithTheServers (redis, redis-replicated). Against the
//     real server: none.
//
// Not checked live, though live mode could: the watchdog under a pause
// (kleppmann-gc-pause with watchdog=true): redis-server and the live client have
// all it needs; a primary that crashes and restarts without persistence before
// down-after, its replicas resynchronising from it empty: redis-server and
// redis-sentinel can show it; appendfsync everysec losing at most the last
// second on a crash (a SIGKILL of redis-server).
package redis
