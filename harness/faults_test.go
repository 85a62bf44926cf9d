package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// TestTallyFaultsWarnsWhenNoFaultFired: a run that asked for faults and saw
// none says why in one sentence, so does a --nemesis list one of whose kinds
// never fired; a run whose faults fired, a swarm that left a kind out, and a
// run that asked for none say nothing.
func TestTallyFaultsWarnsWhenNoFaultFired(t *testing.T) {
	pause := func(at time.Duration) nemesis.Fault {
		return nemesis.Fault{Kind: nemesis.Pause, At: nemesis.Duration(at), Duration: nemesis.Duration(time.Second), Targets: []string{"c1"}}
	}
	triggered := pause(time.Second)
	triggered.After = &nemesis.Trigger{Node: "c1", F: "renew"}
	crash := nemesis.Fault{Kind: nemesis.Crash, At: nemesis.Duration(2 * time.Second), Targets: []string{"redis"}}
	jump := nemesis.Fault{Kind: nemesis.ClockJump, At: nemesis.Duration(3 * time.Second), Targets: []string{"redis"}}
	schedule := func(fs ...nemesis.Fault) *nemesis.Schedule { return &nemesis.Schedule{Faults: fs} }
	cases := []struct {
		name string
		test scenario.Test
		// schedule is what ran; fired the indexes of its faults that fired.
		schedule nemesis.Schedule
		fired    []int
		// noneFired, missing and warning are what the tally says.
		noneFired bool
		missing   []string
		warning   string
	}{
		{name: "a random pause nemesis that drew nothing",
			test:      scenario.Test{Nemesis: "pause", Time: 10 * time.Second},
			noneFired: true,
			warning:   "no fault fired: the random pause nemesis drew none in 10s, so the verdicts judge a run without faults"},
		{name: "the swarm nemesis that drew nothing in a minute",
			test:      scenario.Test{Nemesis: "random"},
			noneFired: true,
			warning:   "no fault fired: the random nemesis drew none in 1m, so the verdicts judge a run without faults"},
		{name: "every kind, drawn without swarm, that drew nothing",
			test:      scenario.Test{Nemesis: "all", Time: 5 * time.Second},
			noneFired: true,
			warning:   "no fault fired: the random nemesis drew none in 5s, so the verdicts judge a run without faults"},
		{name: "a schedule whose two faults were due after the end",
			test:      scenario.Test{Time: 10 * time.Second, Schedule: schedule(pause(20*time.Second), pause(30*time.Second))},
			schedule:  *schedule(pause(20*time.Second), pause(30*time.Second)),
			noneFired: true,
			warning:   "2 faults scheduled, none fired (both due after the run ended), so the verdicts judge a run without faults"},
		{name: "a schedule whose one fault waited for a trigger",
			test:      scenario.Test{Time: 10 * time.Second, Schedule: schedule(triggered)},
			schedule:  *schedule(triggered),
			noneFired: true,
			warning: "1 fault scheduled, it did not fire (waiting for a trigger that did not come in time), " +
				"so the verdicts judge a run without faults"},
		{name: "three faults that missed three ways",
			test:      scenario.Test{Time: 10 * time.Second, Schedule: schedule(pause(time.Second), triggered, pause(20*time.Second))},
			schedule:  *schedule(pause(time.Second), triggered, pause(20*time.Second)),
			noneFired: true,
			warning: "3 faults scheduled, none fired (1 due after the run ended, 1 waiting for a trigger that did not come in time, " +
				"1 without effect when it started), so the verdicts judge a run without faults"},
		{name: "a --nemesis list that drew no crash",
			test:     scenario.Test{Nemesis: "pause,crash", Time: 10 * time.Second},
			schedule: *schedule(pause(time.Second), pause(5*time.Second)), fired: []int{0, 1},
			missing: []string{"crash"},
			warning: "--nemesis pause,crash drew no crash, so the verdicts say nothing about crash"},
		{name: "a --nemesis list whose crash did not fire and that drew no clock fault",
			test:     scenario.Test{Nemesis: "pause,crash,clock", Time: 10 * time.Second},
			schedule: *schedule(pause(time.Second), crash), fired: []int{0},
			missing: []string{"crash", "clock"},
			warning: "--nemesis pause,crash,clock fired no crash (1 scheduled, without effect when it started) and drew no clock, " +
				"so the verdicts say nothing about crash or clock"},
		{name: "clock is satisfied by either clock kind",
			test:     scenario.Test{Nemesis: "pause,clock", Time: 10 * time.Second},
			schedule: *schedule(pause(time.Second), jump), fired: []int{0, 1}},
		{name: "a swarm that left kinds out",
			test:     scenario.Test{Nemesis: "random", Time: 10 * time.Second},
			schedule: *schedule(pause(time.Second)), fired: []int{0}},
		{name: "faults that fired",
			test:     scenario.Test{Nemesis: "pause", Time: 10 * time.Second},
			schedule: *schedule(pause(time.Second), pause(5*time.Second)), fired: []int{1}},
		{name: "no fault asked for",
			test: scenario.Test{Time: 10 * time.Second}},
		{name: "an empty schedule given",
			test: scenario.Test{Time: 10 * time.Second, Schedule: schedule()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var outcomes []nemesis.Outcome
			for i, f := range tc.schedule.Faults {
				outcomes = append(outcomes, nemesis.Outcome{Fault: i, Kind: f.Kind})
			}
			for _, i := range tc.fired {
				outcomes[i].Fired = true
			}
			f := judge.TallyFaults(tc.test, tc.schedule, outcomes, tc.test.WithDefaults().Time)
			assert.Equal(t, tc.noneFired, f.NoneFired, "none fired")
			assert.Equal(t, tc.missing, f.Missing, "missing")
			assert.Equal(t, tc.warning, f.Warning)
			assert.Equal(t, len(tc.fired), f.TotalFired())
		})
	}
}

// TestRunsSayWhichFaultsFired: the simulated runs of the issue (redis, a
// random pause nemesis, 10 s) that drew no pause say so, one that drew two
// counts them scheduled and fired; the history is not touched.
func TestRunsSayWhichFaultsFired(t *testing.T) {
	cases := []struct {
		seed      uint64
		fired     map[string]int
		noneFired bool
	}{
		{seed: 1, fired: map[string]int{}, noneFired: true},
		{seed: 2, fired: map[string]int{}, noneFired: true},
		{seed: 3, fired: map[string]int{}, noneFired: true},
		{seed: 4, fired: map[string]int{"pause": 2}},
	}
	for _, tc := range cases {
		r, err := Run(scenario.Test{System: "redis", Nemesis: "pause", Time: 10 * time.Second, Seed: tc.seed})
		require.NoError(t, err)
		f := judge.FaultsOf(r)
		assert.Equal(t, tc.fired, f.Fired, "seed %d", tc.seed)
		assert.Equal(t, tc.fired, f.Scheduled, "seed %d: every fault drawn fired", tc.seed)
		assert.Equal(t, tc.noneFired, f.NoneFired, "seed %d", tc.seed)
		rep := judge.Report(r, "locklab run")
		require.NotNil(t, rep.Faults)
		assert.Equal(t, f.Warning, rep.FaultWarning(), "seed %d: the report says it", tc.seed)
	}
}

// TestDrewNoFaultIsSaidBeforeARun: a random nemesis whose schedule is empty
// is said before the run; a schedule with faults, a given schedule and no
// nemesis are not.
func TestDrewNoFaultIsSaidBeforeARun(t *testing.T) {
	assert.Equal(t, "the random pause nemesis drew no fault in 10s: this run will see none, so its verdicts will judge the system "+
		"without faults (another --seed or a longer --time draws some)",
		judge.DrewNoFault(scenario.Test{Nemesis: "pause", Time: 10 * time.Second}, nemesis.Schedule{}))
	assert.Empty(t, judge.DrewNoFault(scenario.Test{Nemesis: "pause"}, nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause}}}))
	assert.Empty(t, judge.DrewNoFault(scenario.Test{Schedule: &nemesis.Schedule{}}, nemesis.Schedule{}))
	assert.NotEmpty(t, judge.DrewNoFault(scenario.Test{Nemesis: "pause", Schedule: &nemesis.Schedule{}}, nemesis.Schedule{}),
		"a random draw made explicit before the run (a scaled live run)")
	assert.Empty(t, judge.DrewNoFault(scenario.Test{}, nemesis.Schedule{}))
}
