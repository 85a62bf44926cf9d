package harness

import (
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// redlockScenarios settle the points of the Kleppmann–antirez debate on
// Redlock by experiment.
func redlockScenarios() []Scenario {
	gcPause := Test{System: "redlock", Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: schedule(pauseAfter("c1", "read", 15*time.Second))}
	netDelay := Test{System: "redlock", Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: schedule(delayNextWrite("c1", 15*time.Second))}
	external := []string{"token", "external"}
	return []Scenario{
		{
			Name: "kleppmann-gc-pause",
			Variants: []Variant{
				{Name: "redlock-unsafe", Doc: "Redlock, unfenced storage: the majority and the validity check cannot see a pause after acquire returned", Kind: KindGCPause,
					Test: gcPause, Expect: expect(models.Invalid, models.Invalid).And("lease", models.Valid).And("fencing-tokens", models.Invalid)},
				{Name: "redlock-fixed", MatrixNote: "fencing writes only: besides this stale write, which the storage rejects, the matrix finds a stale holder whose write lands after the new holder read and before it wrote (the storage has not seen the newer token yet): a lost update that fencing reads prevents (the fenced+reads row)", Doc: "Redlock plus tokens from an external monotonic counter (token=external), fenced storage: the stale write is rejected — Redlock's own values could not do it",
					Test: fenced(gcPause, external...), Expect: expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: writesRejected(1)},
			},
		},
		{
			Name: "kleppmann-network-delay",
			Variants: []Variant{
				{Name: "redlock-unsafe", Doc: "Redlock, unfenced storage: the late write lands after the lease", Kind: KindDelayedWrite,
					Test: netDelay, Expect: expect(models.Invalid, models.Valid).And("fencing-tokens", models.Invalid)},
				{Name: "redlock-fixed", Doc: "Redlock plus external monotonic tokens, fenced storage: the late write is rejected",
					Test: fenced(netDelay, external...), Expect: expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
			},
		},
		redlockClockJump(),
		redlockGCPause(),
		redlockRestart(),
	}
}

// redlockRestart: client 1's grant rests on redis-a, b, c (d and e are
// unreachable for it); right after it, redis-c crashes and restarts 100 ms
// later without persistence, forgetting client 1's key; client 2 gets c, d, e.
func redlockRestart() Scenario {
	base := Test{System: "redlock", Clients: 2, Seed: 1, Time: 20 * time.Second,
		WorkloadOptions: map[string]string{"hold": "1s"},
		Schedule: schedule(
			nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"redis-d", "redis-e"}},
			nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"redis-c"}, Duration: nemesis.Duration(100 * time.Millisecond), After: after("c1", "acquire")},
		)}
	delayed := base
	delayed.SystemOptions = map[string]string{"restart-delay": "10s"}
	persisted := base
	persisted.SystemOptions = map[string]string{"persistence": "always"}
	return Scenario{
		Name: "redlock-restart",
		Doc:  "client 1 locks redis-a, b, c (d and e unreachable for it); redis-c crashes and restarts empty; client 2 locks c, d, e",
		Variants: []Variant{
			{Name: "unsafe", Doc: "no persistence, no restart delay: the restarted instance grants the key again at once", Kind: KindRestartRegrant,
				Test: base, Expect: expect(models.Invalid, models.Invalid).And("lease", models.Invalid), Assert: storyMentions("crash on redis-c", "granted by redis-c,redis-d,redis-e")},
			{Name: "fixed-delay", Doc: "restart-delay=10s (one TTL, antirez's remedy): the restarted instance refuses requests until every key it could have had has expired",
				Test: delayed, Expect: expect(models.Valid, models.Valid).And("lease", models.Valid)},
			{Name: "fixed-fsync", Doc: "persistence=always (fsync every write): the key survives the restart",
				Test: persisted, Expect: expect(models.Valid, models.Valid).And("lease", models.Valid)},
		},
	}
}

// redlockClockJump: client 1 cannot reach redis-d and redis-e, so its grant
// rests on a, b, c alone; right after it, redis-c's wall clock jumps 20 s
// forward and expires client 1's key there; client 2 gets c, d, e. Clients
// hold the lock 1 s.
func redlockClockJump() Scenario {
	base := Test{System: "redlock", Clients: 2, Seed: 1, Time: 20 * time.Second,
		WorkloadOptions: map[string]string{"hold": "1s"},
		Schedule: schedule(
			nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"redis-d", "redis-e"}},
			nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"redis-c"}, Amount: nemesis.Duration(20 * time.Second), After: after("c1", "acquire")},
		)}
	mono := base
	mono.SystemOptions = map[string]string{"expiry-clock": "mono"}
	lucky := fenced(base)
	lucky.Seed = 2 // a draw where the write of the stale holder gets through (4 of seeds 1-12)
	return Scenario{
		Name: "redlock-clock-jump",
		Doc:  "client 1 locks redis-a, b, c (d and e unreachable for it); redis-c's wall clock jumps past the TTL; client 2 locks c, d, e: two majorities at once",
		Variants: []Variant{
			{Name: "unsafe", Doc: "instances expire keys on their wall clocks (as Redis does), unfenced storage", Kind: KindClockJump,
				Test: base, Expect: expect(models.Invalid, models.Invalid).And("lease", models.Invalid).And("fencing-tokens", models.Invalid),
				Assert: storyMentions("clock-jump", "redis-c", "granted by redis-c,redis-d,redis-e")},
			{Name: "fenced-random-value", Doc: "fenced storage with Redlock's own token, the random value: still invalid. Both holders read before either wrote, and each write carried the highest value seen so far; " +
				"had the draw given client 2 the smaller value, the storage would have refused the rightful holder instead — the values are not ordered (the story counts how often they went down)",
				Test: lucky, Expect: expect(models.Invalid, models.Invalid).And("fencing-tokens", models.Invalid),
				Assert: storyMentions("not ordered")},
			{Name: "fixed", Doc: "instances expire keys on their monotonic clocks (expiry-clock=mono, antirez's remedy): the jump changes nothing",
				Test: mono, Expect: expect(models.Valid, models.Valid).And("lease", models.Valid)},
		},
	}
}

// redlockGCPause: client 1 pauses for 15 s (TTL 10 s) either after its acquire
// returned, or after sending its SETs and before reading the replies.
func redlockGCPause() Scenario {
	after := Test{System: "redlock", Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: schedule(pauseAfter("c1", "read", 15*time.Second))}
	// Client 2 starts cut off for 50 ms, so that client 1's first SETs meet no
	// competition; client 1 pauses 100 µs after invoking its first acquire:
	// the SETs are on their way, the replies not yet read.
	alone := nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"c2"}, Duration: nemesis.Duration(50 * time.Millisecond)}
	midAcquire := nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(15 * time.Second),
		After: &nemesis.Trigger{Node: "c1", F: "acquire", Type: "invoke", Delay: nemesis.Duration(100 * time.Microsecond)}}
	before := after
	before.Schedule = schedule(alone, midAcquire)
	wall := before
	wall.SystemOptions = map[string]string{"elapsed-clock": "wall"}
	wall.WorkloadOptions = map[string]string{"hold": "1s"} // long sections: the overlap corrupts the counter
	wall.Schedule = schedule(alone, midAcquire,
		nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c1"}, Amount: nemesis.Duration(-15 * time.Second),
			After: &nemesis.Trigger{Node: "c1", F: "acquire", Type: "invoke", Delay: nemesis.Duration(15 * time.Second)}})
	return Scenario{
		Name: "redlock-gc-pause",
		Doc:  "client 1 pauses for longer than the TTL, before or after Redlock's validity check; client 2 acquires meanwhile",
		Variants: []Variant{
			{Name: "unsafe", Doc: "the pause comes after acquire returned (after the check): nothing can see it; unfenced storage", Kind: KindGCPause,
				Test: after, Expect: expect(models.Invalid, models.Invalid).And("fencing-tokens", models.Invalid)},
			{Name: "fixed", MatrixNote: "fencing writes only: besides this stale write, which the storage rejects, the matrix finds a stale holder whose write lands after the new holder read and before it wrote (the storage has not seen the newer token yet): a lost update that fencing reads prevents (the fenced+reads row)", Doc: "the same pause, with tokens from an external monotonic counter and fenced storage: the stale write is rejected",
				Test: fenced(after, "token", "external"), Expect: expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: writesRejected(1)},
			{Name: "pause-before-check", MatrixNote: "its faults are of several kinds (the random column), where the same design also meets a pause after the validity check, which no check catches (kleppmann-gc-pause/redlock-unsafe)", Doc: "the pause comes after the SETs were sent and before the replies are read: elapsed on the monotonic clock includes it, no validity is left, client 1 gives up (antirez's point)",
				Test: before, Expect: expect(models.Valid, models.Valid).And("lease", models.Valid), Assert: storyMentions("no validity left")},
			{Name: "unsafe-wall-clock", Doc: "the same pause measured on the wall clock, which steps back 15 s as the pause ends: the check is fooled", Kind: KindHolderClock,
				Test: wall, Expect: expect(models.Invalid, models.Invalid).And("lease", models.Invalid)},
		},
	}
}

// redlockBaselineScenarios are Redlock without faults: every check valid.
func redlockBaselineScenarios() []Scenario {
	return []Scenario{
		{
			Name: "baseline-redlock",
			Doc:  "Redlock over 5 instances, defaults, no faults: every check valid, acquires succeed",
			Variants: []Variant{{
				Name:   "fixed",
				Doc:    "no faults",
				Test:   Test{System: "redlock", Seed: 1},
				Expect: expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid),
				Assert: scenario.AcquireSuccessAbove(0.99),
			}},
		},
	}
}
