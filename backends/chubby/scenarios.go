package chubby

import (
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("chubby", chubbyScenarios)
}

// chubbyScenarios are Chubby's: its baseline, lock-delay against a pause
// longer and shorter than it, and Kleppmann's pair without lock-delay.
func chubbyScenarios() []scenario.Scenario {
	cb := func(opts ...string) scenario.Test {
		return scenario.Test{System: "chubby", Clients: 2, Seed: 1, Time: 30 * time.Second, SystemOptions: scenario.WithOpts(nil, opts...)}
	}
	gcPause := cb("lock-delay", "0s")
	gcPause.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second))
	netDelay := cb("lock-delay", "0s")
	netDelay.Schedule = scenario.Schedule(scenario.DelayNextWrite("c1", 15*time.Second))
	lockDelay := func(delay string) scenario.Test {
		t := cb("lock-delay", delay, "lease", "6s")
		t.Time = 50 * time.Second
		t.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "read", 30*time.Second))
		return t
	}
	delayStarted := scenario.StoryMentions("session-expired", "lock-delay started")
	// checkGap: client 1 pauses 15 s 1 ms after it sent its write; the storage's
	// CheckSequencer answer (current: client 1 still holds) is delayed 20 s
	// on its way back; client 1's session expires (no lock-delay), client 2
	// takes the lock and writes; then client 1's checked write lands.
	pauseAtWrite := nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(15 * time.Second),
		After: &nemesis.Trigger{Node: "c1", F: "write", Type: "invoke", Delay: nemesis.Duration(time.Millisecond)}}
	checkGap := cb("lock-delay", "0s")
	checkGap.Time = 40 * time.Second
	checkGap.Storage = storage.Check
	checkGap.Schedule = scenario.Schedule(pauseAtWrite, nemesis.Fault{Kind: nemesis.Delay, From: []string{"master"}, To: []string{"storage"},
		Amount: nemesis.Duration(20 * time.Second), Match: "chubby.Response", Count: 1, After: scenario.After("c1", "read")})
	lateWrite := scenario.Fenced(cb("lock-delay", "0s"))
	lateWrite.Time = 40 * time.Second
	lateWrite.Schedule = scenario.Schedule(pauseAtWrite, scenario.DelayNextWrite("c1", 20*time.Second))
	return []scenario.Scenario{
		{
			Name: "baseline-chubby",
			Doc:  "a 5-replica Chubby cell, defaults, no faults: every check valid, acquires succeed",
			Variants: []scenario.Variant{{Name: "fixed", Doc: "no faults", Test: scenario.Test{System: "chubby", Seed: 1},
				Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("fencing-tokens", models.Valid).And("liveness", models.Valid),
				Assert: scenario.AllOf(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic)}},
		},
		{
			Name: "kleppmann-gc-pause",
			Variants: []scenario.Variant{
				{Name: "chubby-unsafe", Kind: scenario.KindGCPause, Doc: "Chubby without lock-delay, unfenced storage: client 1's session expires during its pause, client 2 takes the lock, client 1's stale write lands",
					Test: gcPause, Expect: scenario.Expect(models.Invalid, models.Invalid)},
				{Name: "chubby-fixed", Doc: "Chubby without lock-delay, storage fenced by the sequencer's generation: client 1's stale write is rejected",
					Test: scenario.Fenced(gcPause), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.WritesRejected(1)},
			},
		},
		{
			Name: "kleppmann-network-delay",
			Variants: []scenario.Variant{
				{Name: "chubby-unsafe", Kind: scenario.KindDelayedWrite, Doc: "Chubby, unfenced storage: client 1's write outlives its hold in the network (it released cleanly: lock-delay does not apply)",
					Test: netDelay, Expect: scenario.Expect(models.Invalid, models.Valid)},
				{Name: "chubby-fixed", Doc: "Chubby, storage fenced by generation: the late write is rejected",
					Test: scenario.Fenced(netDelay), Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
			},
		},
		{
			Name: "chubby-check-sequencer",
			Doc: "client 1 pauses as it writes; the storage asks the master whether its sequencer is current (CheckSequencer), " +
				"and the answer, yes, takes 20 s to come back; meanwhile client 1's session expires and client 2 takes the lock and writes",
			Variants: []scenario.Variant{
				{Name: "unsafe", NoHunt: "no two clients hold at once (the stale write passes a check answered before client 2's grant): the violation kinds, read from overlaps, do not cover it", Doc: "storage check mode: the check passed before client 2's grant, so client 1's write lands after client 2's — the check and the write are not atomic",
					Test: checkGap, Expect: scenario.Expect(models.Invalid, models.Valid)},
				{Name: "fixed", Doc: "storage fenced by the sequencer's generation, client 1's write delayed 20 s: the storage compares generations itself, atomically with the write, and rejects it",
					Test: lateWrite, Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
			},
		},
		{
			Name: "chubby-lock-delay",
			Doc:  "client 1 holds the lock and pauses 30 s; its session lease (6 s here, so that random pauses of at most 15 s can outlast lease and lock-delay) runs out on the master, which starts the lock-delay; client 2 tries to acquire; client 1 resumes and writes",
			Variants: []scenario.Variant{
				{Name: "unsafe", Kind: scenario.KindSessionExpiry, Doc: "lock-delay 2s, shorter than the pause: client 2 gets the lock while client 1 sleeps, and client 1's stale write lands",
					Test: lockDelay("2s"), Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: delayStarted},
				{Name: "fixed", Doc: "lock-delay 1m (the default), longer than the pause: nobody gets the lock before client 1 has written, so the write is not stale",
					Test: lockDelay("1m"), Expect: scenario.Expect(models.Valid, models.Valid), Assert: delayStarted},
				{Name: "fixed-sequencer", Doc: "lock-delay 2s, storage fenced by the sequencer's generation: client 2 gets the lock, client 1's write is rejected",
					Test: scenario.Fenced(lockDelay("2s")), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.AllOf(delayStarted, scenario.WritesRejected(1))},
			},
		},
	}
}
