package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

func historyBytes(t *testing.T, r scenario.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, history.Write(&b, r.Events))
	return b.Bytes()
}

func run(t *testing.T, tc scenario.Test) scenario.Result {
	t.Helper()
	r, err := Run(tc)
	require.NoError(t, err)
	return r
}

func verdict(r scenario.Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{}
}

// everyFault exercises every fault primitive on a redis run.
var everyFault = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(12 * time.Second),
		After: &nemesis.Trigger{Node: "c1", F: "read"}},
	{Kind: nemesis.Pause, At: nemesis.Duration(3 * time.Second), Targets: []string{"redis"}, Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.Partition, At: nemesis.Duration(5 * time.Second), Targets: []string{"c2"}, Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Partition, At: nemesis.Duration(8 * time.Second), Groups: [][]string{{"c3", "redis"}, {"c4", "c5"}}, Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Partition, At: nemesis.Duration(11 * time.Second), From: []string{"redis"}, To: []string{"c3"}, Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.ClockJump, At: nemesis.Duration(14 * time.Second), Targets: []string{"redis"}, Amount: nemesis.Duration(20 * time.Second)},
	{Kind: nemesis.ClockDrift, At: nemesis.Duration(16 * time.Second), Targets: []string{"c4"}, Drift: 0.3, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Crash, At: nemesis.Duration(20 * time.Second), Targets: []string{"redis"}, Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.Delay, At: nemesis.Duration(24 * time.Second), From: []string{"c5"}, To: []string{"storage"}, Amount: nemesis.Duration(3 * time.Second), Duration: nemesis.Duration(4 * time.Second)},
}}

func TestDeterminism(t *testing.T) {
	tests := []struct {
		name string
		test scenario.Test
	}{
		{"every fault primitive", scenario.Test{System: "redis", Time: 40 * time.Second, Schedule: &everyFault,
			SystemOptions: map[string]string{"watchdog": "true", "fencing": "true", "persistence": "everysec"}}},
		{"random faults, swarm", scenario.Test{System: "redis", Time: 40 * time.Second, Nemesis: "random"}},
		{"random pauses", scenario.Test{System: "redis", Time: 40 * time.Second, Nemesis: "pause"}},
		{"control lock", scenario.Test{System: "control", Time: 5 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := tc.test, tc.test, tc.test
			a.Seed, b.Seed, c.Seed = 7, 7, 8
			ha, hb, hc := historyBytes(t, run(t, a)), historyBytes(t, run(t, b)), historyBytes(t, run(t, c))
			require.Greater(t, bytes.Count(ha, []byte("\n")), 100)
			assert.True(t, bytes.Equal(ha, hb), "the same seed must give a byte-identical history")
			assert.False(t, bytes.Equal(ha, hc), "another seed must give another history")
		})
	}
	// The schedule's faults all happened.
	r := run(t, scenario.Test{System: "redis", Time: 40 * time.Second, Schedule: &everyFault, Seed: 7})
	for _, k := range nemesis.Kinds {
		assert.Positive(t, r.Summary.Faults[string(k)], "fault %s never started", k)
	}
}

// gcPause is Kleppmann's schedule: pause client 1 right after it read the
// counter under the lock, for longer than the lease (10 s).
var gcPause = nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"},
	Duration: nemesis.Duration(15 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "read"}}}}

func TestGCPausePair(t *testing.T) {
	unfenced := run(t, scenario.Test{System: "redis", Seed: 1, Time: 30 * time.Second, Schedule: &gcPause})
	assert.Equal(t, models.Invalid, verdict(unfenced, "critical-sections").Result, verdict(unfenced, "critical-sections").Reason)
	me := verdict(unfenced, "mutual-exclusion")
	require.Equal(t, models.Invalid, me.Result)
	assert.Contains(t, me.Counterexample.Explanation[0], "c1 held")
	assert.Contains(t, me.Counterexample.Explanation[0], "after its lease deadline")
	assert.Equal(t, judge.ExitInvalid, judge.ExitCode(unfenced.Verdicts))

	fenced := run(t, scenario.Test{System: "redis", Seed: 1, Time: 30 * time.Second, Schedule: &gcPause,
		Storage: "fenced", SystemOptions: map[string]string{"fencing": "true"}})
	cs := verdict(fenced, "critical-sections")
	assert.Equal(t, models.Valid, cs.Result, cs.Reason)
	assert.Equal(t, 1.0, cs.Stats["write-rejected"], "client 1's stale write is rejected")
	assert.Equal(t, models.Invalid, verdict(fenced, "mutual-exclusion").Result, "the lock itself cannot prevent the overlap")
}

func TestNoFaultsEveryCheckValid(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r := run(t, scenario.Test{System: "redis", Seed: seed})
		for _, v := range r.Verdicts {
			assert.Equal(t, models.Valid, v.Result, "seed %d %s: %s", seed, v.Check, v.Reason)
		}
		assert.Greater(t, r.Summary.AcquireSuccess, 0.99)
		assert.Equal(t, judge.ExitValid, judge.ExitCode(r.Verdicts))
	}
}

func TestControlLockIsInvalid(t *testing.T) {
	r := run(t, scenario.Test{System: "control", Seed: 1, Time: 10 * time.Second})
	assert.Equal(t, models.Invalid, verdict(r, "critical-sections").Result)
	assert.Equal(t, models.Invalid, verdict(r, "mutual-exclusion").Result)
}

func TestBadTestsAreRejectedBeforeRunning(t *testing.T) {
	tests := []struct {
		name string
		test scenario.Test
		want string
	}{
		{"unknown system", scenario.Test{System: "mongo"}, `unknown system "mongo"`},
		{"a system's name mistyped", scenario.Test{System: "Redis"}, `unknown system "Redis" — did you mean "redis"?`},
		{"unknown workload", scenario.Test{Workload: "bank"}, `unknown workload "bank"`},
		{"a workload's name mistyped", scenario.Test{Workload: "fenced-countr"}, `unknown workload "fenced-countr" — did you mean "fenced-counter"?`},
		{"bad option", scenario.Test{SystemOptions: map[string]string{"ttl": "soon"}}, `redis option ttl="soon"`},
		{"unknown option", scenario.Test{SystemOptions: map[string]string{"colour": "red"}}, `no option "colour"`},
		{"fenced without tokens", scenario.Test{Storage: "fenced"}, "grants no fencing tokens"},
		{"bad storage", scenario.Test{Storage: "paper"}, `unknown storage mode "paper"`},
		{"bad nemesis", scenario.Test{Nemesis: "meteor"}, `unknown fault kind "meteor"`},
		{"a fault kind mistyped", scenario.Test{Nemesis: "pause,clok"}, `nemesis: unknown fault kind "clok" — did you mean "clock"?`},
		{"unknown check", scenario.Test{Checks: []string{"vibes"}}, `unknown check "vibes"`},
		{"schedule names a ghost", scenario.Test{Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause,
			Targets: []string{"c9"}, Duration: 1}}}}, `unknown node "c9"`},
		{"zero clients", scenario.Test{Clients: -1}, "clients"},
		{"negative step budget", scenario.Test{CheckSteps: -5}, "check_steps: -5 is not a step budget"},
		{"negative time budget", scenario.Test{CheckBudget: -time.Second}, "check_budget: -1s is negative"},
		{"fenced reads without fenced storage", scenario.Test{FenceReads: true}, "fence_reads: only a fenced storage fences reads"},
		{"another system's audit", scenario.Test{Checks: []string{"+raft-audit"}}, `check "raft-audit" audits the servers of raftkv; system redis has no such servers`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(tc.test)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestArgsRoundTripTheTest(t *testing.T) {
	tc := scenario.Test{System: "redis", Seed: 3, Nemesis: "pause,clock", Storage: "fenced",
		SystemOptions: map[string]string{"fencing": "true", "ttl": "5s"}, WorkloadOptions: map[string]string{"hold": "1s"}}
	assert.Equal(t, []string{"--system", "redis", "--workload", "fenced-counter", "--clients", "5", "--time", "1m0s",
		"--seed", "3", "--storage", "fenced", "--nemesis", "pause,clock", "-o", "fencing=true", "-o", "ttl=5s", "-w", "hold=1s"},
		tc.WithDefaults().Args())
}

// BenchmarkRun60s is one 60-second simulated run of redis with 5 clients and
// random pauses, checks included; the sim-x metric is simulated time over
// wall time.
func BenchmarkRun60s(b *testing.B) {
	var simulated time.Duration
	for i := range b.N {
		r, err := Run(scenario.Test{System: "redis", Seed: uint64(i), Nemesis: "pause"})
		if err != nil {
			b.Fatal(err)
		}
		simulated += r.Test.Time
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-x")
}
