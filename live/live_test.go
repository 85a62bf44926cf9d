package live

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// TestMain checks that no goroutine outlives the tests, except internal/proc's
// starter (one goroutine locked to its thread for the harness's lifetime,
// so that the servers' parent-death signal holds).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, procStarter) }

var procStarter = goleak.IgnoreTopFunction("github.com/locklab/locklab/internal/proc.startLocked.func1.1")

// realTime skips a test under -short: it runs live, in real time, and may
// start real servers (go test -short runs none).
func realTime(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a live run takes real time (and may start real servers)")
	}
}

// crossValidation marks one of the four cross-validation tests (hashicorp/raft;
// Redis and Redlock; etcd and ZooKeeper; PostgreSQL): they run in parallel with
// each other, after every other test of the package, each on its own ports
// and directories, so that the package's real time is the longest of them
// rather than their sum. Their rows cannot check for leaked goroutines one by
// one (a parallel test's goroutines are not its own alone): TestMain checks
// that none is left once every test has ended, and the tests that stop runs
// and servers check it one by one.
func crossValidation(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// noLeak checks, after the test, that no goroutine it started survives (the
// live cluster's, the clients', the faults' timers).
func noLeak(t *testing.T) {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts, procStarter) })
}

// scale runs the scenarios at a tenth of their time: hashicorp/raft's
// timeouts, the lease, the workload and the faults all shrink together.
const scale = 0.1

// crossValidated are the scenarios whose simulated and live verdicts must agree.
var crossValidated = []struct {
	scenario, variant string
	options           map[string]string
}{
	{"kleppmann-gc-pause", "raftkv-unsafe", nil},
	{"kleppmann-gc-pause", "raftkv-fixed", nil},
	{"raftkv-leader-partition", "fixed", nil},
	{"raftkv-leader-partition", "unfenced", nil},
	// The takeover must happen within the 2 s (scaled: 200 ms) between the
	// cut of n1 and the holder's write: hashicorp/raft's election, which
	// takes [1, 2) heartbeat timeouts plus a pre-vote round, is shortened
	// so that it fits with a margin.
	{"raftkv-leader-clock-ahead", "unsafe", fastElection},
	{"raftkv-leader-clock-ahead", "fixed", fastElection},
}

var fastElection = map[string]string{"heartbeat-timeout": "40ms", "election-timeout": "40ms", "leader-lease-timeout": "20ms"}

// TestSimulatedAndLiveVerdictsAgree runs each variant in the simulator and
// live on hashicorp/raft, and compares the verdicts of every check the
// variant names with each other and with the expectation. (The variants'
// assertions measure times and are not scaled; repro --live at scale 1 runs
// them.)
func TestSimulatedAndLiveVerdictsAgree(t *testing.T) {
	crossValidation(t)
	for _, tc := range crossValidated {
		t.Run(tc.scenario+"/"+tc.variant, func(t *testing.T) {
			realTime(t)
			s, err := scenario.Find(tc.scenario)
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			simulated, err := harness.Repro(v)
			require.NoError(t, err)
			real, err := Repro(context.Background(), v, Config{Scale: scale, Options: tc.options})
			require.NoError(t, err)
			for check, want := range v.Expect {
				sim, lv := verdict(simulated.Result, check), verdict(real.Result, check)
				assert.Equal(t, string(want), sim, "%s simulated", check)
				assert.Equal(t, sim, lv, "%s: simulated %s, live %s (%s)", check, sim, lv, reason(real.Result, check))
				t.Logf("| %s | %s | %s | %s | %s |", tc.scenario, tc.variant, check, sim, lv)
			}
			for _, o := range real.Result.FaultOutcomes {
				assert.True(t, o.Fired, "live faults[%d] (%s) did not fire: %s", o.Fault, o.Kind, o.DidNotFire)
			}
		})
	}
}

func verdict(r scenario.Result, check string) string {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return string(v.Result)
		}
	}
	return "not run"
}

func reason(r scenario.Result, check string) string {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v.Reason
		}
	}
	return ""
}

func TestUnsupportedFaultsAreRefusedBeforeTheRun(t *testing.T) {
	noLeak(t)
	for _, tc := range []struct {
		name  string
		fault nemesis.Fault
		want  string
		// notLive: a fault live cannot perform (live.ErrNotLive: repro
		// --live --all and the conformance suite skip its variant), not a
		// mistake in the schedule.
		notLive bool
	}{
		{"clock drift", nemesis.Fault{Kind: nemesis.ClockDrift, Targets: []string{"n1"}, Drift: 0.1}, "clock-drift cannot run live", true},
		{"crash of a client", nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"c1"}}, "c1 cannot crash live", true},
		{"crash of the storage", nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"storage"}}, "storage cannot crash live", true},
		{"unknown node", nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"n9"}, Duration: nemesis.Duration(time.Second)}, `unknown node "n9"`, false},
		{"unknown message", nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"storage"},
			Amount: nemesis.Duration(time.Second), Match: "redis.SetNX"}, `"redis.SetNX" is not a message type`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(scenario.Test{System: "raftkv", Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{tc.fault}}}, Config{})
			require.ErrorContains(t, err, tc.want)
			assert.Equal(t, tc.notLive, errors.Is(err, ErrNotLive), "%v", err)
		})
	}
	_, err := Prepare(scenario.Test{System: "chubby"}, Config{})
	require.ErrorContains(t, err, "has no live form yet")
	_, err = Prepare(scenario.Test{System: "raftkv", Nemesis: "clock-drift"}, Config{})
	require.ErrorContains(t, err, "clock-drift cannot run live")
}

// TestARunStopsOnCancelAndLeavesNothingBehind interrupts a run (Ctrl-C)
// mid-way: it returns at once with what was recorded, and every goroutine
// it started is gone.
func TestARunStopsOnCancelAndLeavesNothingBehind(t *testing.T) {
	realTime(t)
	noLeak(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, scenario.Test{System: "raftkv", Seed: 3, Time: time.Minute, Nemesis: "pause,partition,crash"}, Config{Scale: scale})
	require.ErrorIs(t, err, ErrInterrupted)
	assert.Less(t, time.Since(start), 5*time.Second, "the 6 s run stops when cancelled")
	assert.NotEmpty(t, res.Events, "the history up to the interruption is kept and judged")
	assert.NotEmpty(t, res.Verdicts)
}

// TestRandomFaultsOnHashicorpRaftKeepTheLockSafe: with fencing, no random
// fault (pauses, partitions, crashes with restarts, clock jumps, delays)
// breaks the data.
func TestRandomFaultsOnHashicorpRaftKeepTheLockSafe(t *testing.T) {
	realTime(t)
	noLeak(t)
	res, err := Run(context.Background(), scenario.Test{System: "raftkv", Seed: 11, Time: 30 * time.Second,
		Nemesis: "pause,partition,crash,clock-jump,delay", Storage: "fenced", FenceReads: true}, Config{Scale: scale})
	require.NoError(t, err)
	for _, v := range res.Verdicts {
		if v.Check == "critical-sections" || v.Check == "fencing-tokens" {
			assert.Equal(t, "valid", string(v.Result), "%s: %s", v.Check, v.Reason)
		}
	}
	l := res.SystemFigures["live"].(map[string]any)
	assert.Contains(t, l["replayable"], "not replayable byte for byte")
}

// TestDelayedWriteToTheStorage delays client 1's write to the in-process
// storage server beyond the lease (Kleppmann's network delay, on raftkv):
// unfenced, the late write lands over newer data; fenced, it is rejected.
// The simulated run of the same test gives the same verdict.
func TestDelayedWriteToTheStorage(t *testing.T) {
	for _, tc := range []struct {
		storage string
		want    string
	}{{"unfenced", "invalid"}, {"fenced", "valid"}} {
		t.Run(tc.storage, func(t *testing.T) {
			realTime(t)
			noLeak(t)
			delay := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"storage"},
				Match: "storage.WriteReq", Amount: nemesis.Duration(15 * time.Second), Count: 1,
				After: &nemesis.Trigger{Node: "c1", F: "read"}}}}
			test := scenario.Test{System: "raftkv", Clients: 2, Seed: 1, Time: 50 * time.Second, Schedule: &delay,
				Storage: storage.Mode(tc.storage), FenceReads: tc.storage == "fenced",
				// Short sections, long thinking: the late write lands between
				// sections and the next read sees it (one that lands inside a
				// section and is overwritten before any read cannot be told
				// from a write that never landed).
				WorkloadOptions: map[string]string{"hold": "10ms", "think": "1s"}}
			sim, err := harness.Run(test)
			require.NoError(t, err)
			assert.Equal(t, tc.want, verdict(sim, "critical-sections"), "simulated: %s", reason(sim, "critical-sections"))
			// A live run is real time: on a loaded machine the late write can
			// land where no read sees it. Up to three tries, each logged.
			var real scenario.Result
			for try := 1; try <= 3; try++ {
				real, err = Run(context.Background(), test, Config{Scale: scale})
				require.NoError(t, err)
				if verdict(real, "critical-sections") == tc.want {
					break
				}
				t.Logf("live try %d: critical-sections %s: %s", try, verdict(real, "critical-sections"), reason(real, "critical-sections"))
			}
			assert.Equal(t, tc.want, verdict(real, "critical-sections"), "live: %s", reason(real, "critical-sections"))
			require.Len(t, real.FaultOutcomes, 1)
			assert.True(t, real.FaultOutcomes[0].Fired, real.FaultOutcomes[0].DidNotFire)
		})
	}
}
