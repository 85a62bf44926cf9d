package userlock

import (
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

// HolderPause is how long the scenarios pause a holder: longer than the
// leases of most locks (a lock whose lease is longer will not break in them;
// explore's random faults are not bound to it).
const HolderPause = 15 * time.Second

// SlowRelease is how long the slow-release scenario delays each request of
// client 1's release: a check then a delete in two requests straddles the
// end of a 5 s lease taken just before, and each request still answers
// within go-redis's 3 s read timeout.
const SlowRelease = 2800 * time.Millisecond

// Scenarios are the counterexamples locklab stages against every user's
// lock, as the scenario named after it (`locklab repro NAME --all`); each
// unsafe one is a hunt for explore (NAME/VARIANT). What they show is the
// verdict on the lock: none is expected in advance, except what the lock
// claims (Spec.Tokens: with fenced storage the paused holder's write is
// refused).
func (s Spec) Scenarios() []scenario.Scenario {
	base := scenario.Test{System: s.Name, Clients: 2, Seed: 1, Time: 30 * time.Second}
	pause := base
	pause.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "read", HolderPause))
	delay := base
	delay.Schedule = scenario.Schedule(scenario.DelayNextWrite("c1", HolderPause))
	slow := base
	slow.Clients, slow.Time = 3, 20*time.Second
	slow.WorkloadOptions = map[string]string{"hold": "1500ms"}
	slow.Schedule = scenario.Schedule(nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"servers"},
		Amount: nemesis.Duration(SlowRelease), Duration: nemesis.Duration(3 * SlowRelease), After: scenario.After("c1", "write")})
	pauseKind := scenario.KindGCPause
	if s.sessions {
		pauseKind = scenario.KindSessionExpiry // the client knows no deadline: its session expires during the pause
	}
	variants := []scenario.Variant{
		{Name: "gc-pause", Kind: pauseKind, Test: pause,
			Doc: "client 1 pauses (a GC) right after it read under the lock, for 15 s; client 2 takes the lock and writes; client 1 resumes and writes to unfenced storage"},
		{Name: "delayed-write", Kind: scenario.KindDelayedWrite, Test: delay,
			Doc: "client 1's write to the storage is delayed 15 s in the network; the lock passes on meanwhile"},
		{Name: "slow-release", Kind: scenario.KindNonOwnerRelease, Test: slow,
			Doc: "everything client 1 sends the servers after its write is delayed 2.8 s, its release included; " +
				"a release that checks and deletes in two requests (GET, then DEL) deletes the next holder's lock when the lease is about 5 s"},
	}
	if s.Tokens {
		variants = append(variants,
			scenario.Variant{Name: "gc-pause-fenced", Test: scenario.Fenced(pause),
				Doc:    "the GC pause with fenced storage: the lock declares fencing tokens, so client 1's stale write must be refused",
				Expect: scenario.Expectations{"critical-sections": models.Valid, "fencing-tokens": models.Valid}},
			scenario.Variant{Name: "delayed-write-fenced", Test: scenario.Fenced(delay),
				Doc:    "the delayed write with fenced storage: it must be refused when it lands",
				Expect: scenario.Expectations{"critical-sections": models.Valid, "fencing-tokens": models.Valid}})
	}
	return []scenario.Scenario{{Name: s.Name, Doc: "locklab's counterexamples staged against " + s.Name, Variants: variants}}
}

// RegisterSystem adds the system of a user's lock (made with System) to the
// registry and its staged scenarios (Scenarios) to the catalog: what each
// service's Register does, for a service package apart (useretcd).
func (s Spec) RegisterSystem(sys system.System) {
	system.Register(sys)
	scenario.Register(sys.Name, s.Scenarios)
}
