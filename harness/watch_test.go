package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// TestWatchedRunRecordsWhatAPlainRunRecords: a run that reports progress and
// estimates its history after its first seconds records, event for event,
// the history of the same world run in one go without an observer.
func TestWatchedRunRecordsWhatAPlainRunRecords(t *testing.T) {
	for _, system := range []string{"redis", "raftkv"} {
		t.Run(system, func(t *testing.T) {
			test := scenario.Test{System: system, Nemesis: "random", Seed: 3, Time: 30 * time.Second}
			require.Less(t, pilotSpan(test.Time), test.Time, "the run is estimated part way")
			watched, err := Prepare(test)
			require.NoError(t, err)
			var reports []Progress
			res, err := watched.RunWatched(Watch{Progress: func(p Progress) { reports = append(reports, p) }})
			require.NoError(t, err)

			plain, err := Prepare(test)
			require.NoError(t, err)
			plain.World.RunUntil(test.Time)
			plain.World.Close()
			require.Equal(t, plain.Log.Events(), res.Events)
			assert.Equal(t, plain.World.Processed(), res.KernelEvents)

			require.NotEmpty(t, reports)
			for i := 1; i < len(reports); i++ {
				require.LessOrEqual(t, reports[i-1].Simulated, reports[i].Simulated)
				require.LessOrEqual(t, reports[i-1].HistoryEvents, reports[i].HistoryEvents)
			}
			last := reports[len(reports)-1]
			assert.True(t, last.Done)
			assert.Equal(t, Progress{Simulated: test.Time, Total: test.Time, KernelEvents: res.KernelEvents,
				HistoryEvents: len(res.Events), Done: true}, last)
		})
	}
}

// TestRunsBeyondTheHistoryLimitStop: a run whose history, extrapolated from
// its first minute, would pass the limit is refused; one too short to
// extrapolate stops when its history passes the limit. Both say by how much
// and how to raise the limit, and neither is a crash.
func TestRunsBeyondTheHistoryLimitStop(t *testing.T) {
	tests := []struct {
		name    string
		test    scenario.Test
		phrases []string
	}{
		{"10000 h is refused after its first minute", scenario.Test{Time: 10000 * time.Hour},
			[]string{"10000h0m0s of simulated time would record about 2.5 billion history events", "in the first 1m0s",
				"TB of memory", "the limit is 1,000,000 events", "--max-history-events"}},
		{"a raised limit is used", scenario.Test{Time: 10000 * time.Hour, MaxHistoryEvents: 2_000_000},
			[]string{"the limit is 2,000,000 events"}},
		{"a short run stops at the limit", scenario.Test{Time: 9 * time.Second, MaxHistoryEvents: 200},
			[]string{"the history passed the limit of 200 events at", "of 9s simulated", "--max-history-events"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.test.Seed = 1
			_, err := Run(tc.test)
			require.ErrorIs(t, err, ErrTooLarge)
			assert.NotErrorIs(t, err, ErrCrash)
			for _, p := range tc.phrases {
				assert.Contains(t, err.Error(), p)
			}
		})
	}
}

// TestStarvingRunIsLivenessInvalid: 20 clients holding the lock for 1 s each
// and waiting at most 1 s for it starve (about 5% of the acquires succeed):
// the run says so, and the limits a user sets reach the check and the replay
// command.
func TestStarvingRunIsLivenessInvalid(t *testing.T) {
	test := scenario.Test{Clients: 20, Time: 20 * time.Second, Seed: 1,
		WorkloadOptions: map[string]string{"hold": "1s", "wait": "1s"}}
	liveness := func(r scenario.Result) models.Verdict {
		for _, v := range r.Verdicts {
			if v.Check == "liveness" {
				return v
			}
		}
		t.Fatal("no liveness verdict")
		return models.Verdict{}
	}
	r, err := Run(test)
	require.NoError(t, err)
	v := liveness(r)
	assert.Equal(t, models.Invalid, v.Result, v.Reason)
	assert.Regexp(t, `^only \d\.\d% of \d+ acquire attempts succeeded \(at least 50\.0% required\); \d+ of 20 clients never acquired the lock`, v.Reason)
	assert.Equal(t, judge.ExitUnknown, judge.ExitCode(r.Verdicts), "a liveness failure exits 3")

	test.Liveness = scenario.Liveness{MinSuccess: history.Ptr(0.05), MinAttempts: 20, StallMax: time.Minute, RecoveryMax: time.Minute}
	r, err = Run(test)
	require.NoError(t, err)
	v = liveness(r)
	assert.Equal(t, models.Valid, v.Result, v.Reason)
	assert.Contains(t, v.Reason, "(at least 5.0% required); longest stall")
	assert.Contains(t, v.Reason, "(limit 1m0s)")
	assert.Subset(t, test.Args(), []string{"--liveness-min-success", "0.05", "--liveness-min-attempts", "20",
		"--liveness-max-stall", "1m0s", "--liveness-max-recovery", "1m0s"})
}

func TestLivenessLimitsAndHistoryBoundAreValidated(t *testing.T) {
	tests := []struct {
		test scenario.Test
		want string
	}{
		{scenario.Test{Liveness: scenario.Liveness{MinSuccess: history.Ptr(1.5)}}, "liveness min success: must be between 0 and 1, got 1.5"},
		{scenario.Test{Liveness: scenario.Liveness{MinAttempts: -1}}, "liveness min attempts"},
		{scenario.Test{Liveness: scenario.Liveness{StallMax: -time.Second}}, "liveness max stall: must be positive"},
		{scenario.Test{Liveness: scenario.Liveness{RecoveryMax: -time.Second}}, "liveness max recovery: must be positive"},
		{scenario.Test{MaxHistoryEvents: -1}, "max history events: must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			require.ErrorContains(t, tc.test.WithDefaults().Validate(), tc.want)
		})
	}
	assert.Subset(t, scenario.Test{MaxHistoryEvents: 5}.WithDefaults().Args(), []string{"--max-history-events", "5"})
	assert.NotContains(t, fmt.Sprint(scenario.Test{}.WithDefaults().Args()), "liveness")
}
