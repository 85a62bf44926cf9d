package redlock

import (
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("redlock", redlockBaselineScenarios)
	scenario.Register("redlock", redlockScenarios)
}

// redlockScenarios settle the points of the Kleppmann–antirez debate on
// Redlock by experiment.
func redlockScenarios() []scenario.Scenario {
	gcPause, netDelay := scenario.GCPauseTest("redlock"), scenario.NetworkDelayTest("redlock")
	external := []string{"token", "external"}
	return []scenario.Scenario{
		{
			Name: "kleppmann-gc-pause",
			Variants: []scenario.Variant{
				{Name: "redlock-unsafe", Doc: "Redlock, unfenced storage: the majority and the validity check cannot see a pause after acquire returned", Kind: scenario.KindGCPause,
					Test: gcPause, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Valid).And("fencing-tokens", models.Invalid)},
				{Name: "redlock-fixed", MatrixNote: scenario.FencedWritesNote, Doc: "Redlock plus tokens from an external monotonic counter (token=external), fenced storage: the stale write is rejected — Redlock's own values could not do it",
					Test: scenario.Fenced(gcPause, external...), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.WritesRejected(1)},
			},
		},
		{
			Name: "kleppmann-network-delay",
			Variants: []scenario.Variant{
				{Name: "redlock-unsafe", Doc: "Redlock, unfenced storage: the late write lands after the lease", Kind: scenario.KindDelayedWrite,
					Test: netDelay, Expect: scenario.Expect(models.Invalid, models.Valid).And("fencing-tokens", models.Invalid)},
				{Name: "redlock-fixed", Doc: "Redlock plus external monotonic tokens, fenced storage: the late write is rejected",
					Test: scenario.Fenced(netDelay, external...), Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
			},
		},
		redlockClockJump(),
		redlockGCPause(),
		redlockRestart(),
	}
}

// minorityLoss is the stage of redlock-restart and redlock-clock-jump on
// system (a Redlock over at least five instances): two clients for 20 s,
// each holding the lock 1 s; client 1 cannot reach redis-d and redis-e, so
// its grant rests on redis-a, b and c alone, and right after it lossOfC
// makes redis-c forget client 1's key.
func minorityLoss(system string, lossOfC nemesis.Fault) scenario.Test {
	lossOfC.After = scenario.After("c1", "acquire")
	return scenario.Test{System: system, Clients: 2, Seed: 1, Time: 20 * time.Second,
		WorkloadOptions: map[string]string{"hold": "1s"},
		Schedule: scenario.Schedule(
			nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"redis-d", "redis-e"}},
			lossOfC,
		)}
}

// RestartStage is redlock-restart's stage on system: right after client 1's
// grant, redis-c crashes and restarts 100 ms later.
func RestartStage(system string) scenario.Test {
	return minorityLoss(system, nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"redis-c"}, Duration: nemesis.Duration(100 * time.Millisecond)})
}

// ClockJumpStage is redlock-clock-jump's stage on system (Kleppmann's
// counterexample): right after client 1's grant, redis-c's wall clock jumps
// 20 s forward.
func ClockJumpStage(system string) scenario.Test {
	return minorityLoss(system, nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"redis-c"}, Amount: nemesis.Duration(20 * time.Second)})
}

// redlockRestart: client 1's grant rests on redis-a, b, c (d and e are
// unreachable for it); right after it, redis-c crashes and restarts 100 ms
// later without persistence, forgetting client 1's key; client 2 gets c, d, e.
func redlockRestart() scenario.Scenario {
	base := RestartStage("redlock")
	delayed := base
	delayed.SystemOptions = map[string]string{"restart-delay": "10s"}
	persisted := base
	persisted.SystemOptions = map[string]string{"persistence": "always"}
	return scenario.Scenario{
		Name: "redlock-restart",
		Doc:  "client 1 locks redis-a, b, c (d and e unreachable for it); redis-c crashes and restarts empty; client 2 locks c, d, e",
		Variants: []scenario.Variant{
			{Name: "unsafe", Doc: "no persistence, no restart delay: the restarted instance grants the key again at once", Kind: scenario.KindRestartRegrant,
				Test: base, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid), Assert: scenario.StoryMentions("crash on redis-c", "granted by redis-c,redis-d,redis-e")},
			{Name: "fixed-delay", Doc: "restart-delay=10s (one TTL, antirez's remedy): the restarted instance refuses requests until every key it could have had has expired",
				Test: delayed, Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)},
			{Name: "fixed-fsync", Doc: "persistence=always (fsync every write): the key survives the restart",
				Test: persisted, Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)},
		},
	}
}

// redlockClockJump: client 1 cannot reach redis-d and redis-e, so its grant
// rests on a, b, c alone; right after it, redis-c's wall clock jumps 20 s
// forward and expires client 1's key there; client 2 gets c, d, e. Clients
// hold the lock 1 s.
func redlockClockJump() scenario.Scenario {
	base := ClockJumpStage("redlock")
	mono := base
	mono.SystemOptions = map[string]string{"expiry-clock": "mono"}
	lucky := scenario.Fenced(base)
	lucky.Seed = 2 // a draw where the write of the stale holder gets through (4 of seeds 1-12)
	return scenario.Scenario{
		Name: "redlock-clock-jump",
		Doc:  "client 1 locks redis-a, b, c (d and e unreachable for it); redis-c's wall clock jumps past the TTL; client 2 locks c, d, e: two majorities at once",
		Variants: []scenario.Variant{
			{Name: "unsafe", Doc: "instances expire keys on their wall clocks (as Redis does), unfenced storage", Kind: scenario.KindClockJump,
				Test: base, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid).And("fencing-tokens", models.Invalid),
				Assert: scenario.StoryMentions("clock-jump", "redis-c", "granted by redis-c,redis-d,redis-e")},
			{Name: "fenced-random-value", Doc: "fenced storage with Redlock's own token, the random value: still invalid. Both holders read before either wrote, and each write carried the highest value seen so far; " +
				"had the draw given client 2 the smaller value, the storage would have refused the rightful holder instead — the values are not ordered (the story counts how often they went down)",
				Test: lucky, Expect: scenario.Expect(models.Invalid, models.Invalid).And("fencing-tokens", models.Invalid),
				Assert: scenario.StoryMentions("not ordered")},
			{Name: "fixed", Doc: "instances expire keys on their monotonic clocks (expiry-clock=mono, antirez's remedy): the jump changes nothing",
				Test: mono, Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)},
		},
	}
}

// redlockGCPause: client 1 pauses for 15 s (TTL 10 s) either after its acquire
// returned, or after sending its SETs and before reading the replies.
func redlockGCPause() scenario.Scenario {
	after := scenario.GCPauseTest("redlock")
	// Client 2 starts cut off for 50 ms, so that client 1's first SETs meet no
	// competition; client 1 pauses 100 µs after invoking its first acquire:
	// the SETs are on their way, the replies not yet read.
	alone := nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"c2"}, Duration: nemesis.Duration(50 * time.Millisecond)}
	midAcquire := nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(15 * time.Second),
		After: &nemesis.Trigger{Node: "c1", F: "acquire", Type: "invoke", Delay: nemesis.Duration(100 * time.Microsecond)}}
	before := after
	before.Schedule = scenario.Schedule(alone, midAcquire)
	wall := before
	wall.SystemOptions = map[string]string{"elapsed-clock": "wall"}
	wall.WorkloadOptions = map[string]string{"hold": "1s"} // long sections: the overlap corrupts the counter
	wall.Schedule = scenario.Schedule(alone, midAcquire,
		nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c1"}, Amount: nemesis.Duration(-15 * time.Second),
			After: &nemesis.Trigger{Node: "c1", F: "acquire", Type: "invoke", Delay: nemesis.Duration(15 * time.Second)}})
	return scenario.Scenario{
		Name: "redlock-gc-pause",
		Doc:  "client 1 pauses for longer than the TTL, before or after Redlock's validity check; client 2 acquires meanwhile",
		Variants: []scenario.Variant{
			{Name: "unsafe", Doc: "the pause comes after acquire returned (after the check): nothing can see it; unfenced storage", Kind: scenario.KindGCPause,
				Test: after, Expect: scenario.Expect(models.Invalid, models.Invalid).And("fencing-tokens", models.Invalid)},
			{Name: "fixed", MatrixNote: scenario.FencedWritesNote, Doc: "the same pause, with tokens from an external monotonic counter and fenced storage: the stale write is rejected",
				Test: scenario.Fenced(after, "token", "external"), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.WritesRejected(1)},
			{Name: "pause-before-check", MatrixNote: "its faults are of several kinds (the random column), where the same design also meets a pause after the validity check, which no check catches (kleppmann-gc-pause/redlock-unsafe)", Doc: "the pause comes after the SETs were sent and before the replies are read: elapsed on the monotonic clock includes it, no validity is left, client 1 gives up (antirez's point)",
				Test: before, Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid), Assert: scenario.StoryMentions("no validity left")},
			{Name: "unsafe-wall-clock", Doc: "the same pause measured on the wall clock, which steps back 15 s as the pause ends: the check is fooled", Kind: scenario.KindHolderClock,
				Test: wall, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid)},
		},
	}
}

// redlockBaselineScenarios are Redlock without faults: every check valid.
func redlockBaselineScenarios() []scenario.Scenario {
	return []scenario.Scenario{scenario.Baseline("redlock", "Redlock over 5 instances, defaults, no faults: every check valid, acquires succeed",
		scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid), scenario.AcquireSuccessAbove(0.99))}
}
