package userlive_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	zkl "github.com/locklab/locklab/backends/zookeeper/live"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/proc"
	locklive "github.com/locklab/locklab/live"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/internal/locktest"
)

// requireZooKeeper skips under -short and when the JVM or ZooKeeper's jar
// is missing (naming the Debian package).
func requireZooKeeper(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a live run starts a real ZooKeeper and takes real time")
	}
	_, err := zkl.Java()
	var missing *proc.MissingError
	if errors.As(err, &missing) {
		t.Skip(err)
	}
	require.NoError(t, err)
}

// liveScale runs the scenarios at 0.3 of their time, as the built-in
// ZooKeeper's cross-validation does (session timeout 3 s, tick 30 ms, the
// holder paused 4.5 s).
const liveScale = 0.3

// TestAUsersZooKeeperLockRunsLiveWithTheSimulatedVerdicts: the user's
// raw-API lock, unchanged, on real ZooKeeper with a real *zk.Conn per
// client, gets the verdicts the simulator gives on the same schedule. On
// the holder pause (client 1 paused past its session right after its read
// under the lock) the unfenced lock loses an update (critical-sections
// INVALID) and the fenced one does not; with no faults both are valid.
func TestAUsersZooKeeperLockRunsLiveWithTheSimulatedVerdicts(t *testing.T) {
	requireZooKeeper(t)
	tests := []struct {
		name   string
		fenced bool
		pause  bool
		want   models.Result
	}{
		{"test-zk-live-unfenced-pause", false, true, models.Invalid},
		{"test-zk-live-fenced-pause", true, true, models.Valid},
		{"test-zk-live-unfenced-none", false, false, models.Valid},
		{"test-zk-live-fenced-none", true, false, models.Valid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			locktest.RegisterZooKeeperRaw(t, tc.name, tc.fenced)
			test := scenario.Test{System: tc.name, Clients: 2, Seed: 1, Time: 30 * time.Second}
			if tc.pause {
				test.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "read", userlock.HolderPause))
			}
			if tc.fenced {
				test = scenario.Fenced(test)
			}

			simulated, err := harness.Run(test)
			require.NoError(t, err)
			simCS := verdict(simulated, "critical-sections")
			require.NotEmpty(t, simCS.Check, "critical-sections ran in the simulator")

			// Real time races (a loaded machine's JVM may expire the paused
			// session late): up to 3 tries, as the live package's own
			// cross-validation allows, for every live verdict to agree.
			var live scenario.Result
			var wall time.Duration
			for try := 1; try <= 3; try++ {
				start := time.Now()
				live, err = locklive.Run(context.Background(), test, locklive.Config{Scale: liveScale})
				wall = time.Since(start)
				require.NoError(t, err)
				disagree := disagreements(simulated, live)
				if len(disagree) == 0 {
					break
				}
				t.Logf("try %d: live disagrees with the simulator: %s", try, strings.Join(disagree, "; "))
			}
			liveCS := verdict(live, "critical-sections")
			require.NotEmpty(t, liveCS.Check, "critical-sections ran live")

			t.Logf("%s: simulated %s (%s); live %s in %s wall (%s)", tc.name, simCS.Result, simCS.Reason, liveCS.Result,
				wall.Round(time.Millisecond), liveCS.Reason)
			assert.Equal(t, tc.want, simCS.Result, "simulated: %s", simCS.Reason)
			assert.Equal(t, simCS.Result, liveCS.Result, "live disagrees with the simulator: %s", liveCS.Reason)
			for _, v := range live.Verdicts {
				if sv := verdict(simulated, v.Check); sv.Check != "" {
					assert.Equal(t, sv.Result, v.Result, "check %s: simulated %q, live %q", v.Check, sv.Reason, v.Reason)
				}
			}
			assert.Equal(t, []string{}, live.SystemFigures["lock_misconduct"], "the lock behaved live")
			skipped := slices.IndexFunc(live.Skipped, func(s models.Skipped) bool { return s.Check == userlock.ConductCheck })
			assert.GreaterOrEqual(t, skipped, 0, "lock-conduct is named as skipped live: %+v", live.Skipped)
			t.Logf("live story:\n%s", expiries(live))
			if tc.pause {
				assert.Contains(t, story(live), "session-expired", "the observer saw client 1's session expire during its pause")
				// At least client 1's: after it resumes, its client may lose
				// the session it opened next too (the observer counts what
				// vanished while the client made no call), so not exactly one.
				assert.GreaterOrEqual(t, live.SystemFigures["sessions_expired"], 1)
			}
		})
	}
}

func verdict(r scenario.Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{}
}

func story(r scenario.Result) string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "%s %v %s\n", e.F, e.Targets, e.Detail)
	}
	return b.String()
}

func expiries(r scenario.Result) string {
	var b strings.Builder
	for _, e := range r.Events {
		if e.Process == history.NemesisProcess {
			fmt.Fprintf(&b, "%v %s %s %v %s\n", time.Duration(e.Time), e.Type, e.F, e.Targets, e.Detail)
		}
	}
	return b.String()
}

// disagreements are the checks that ran in both runs with other results.
func disagreements(simulated, live scenario.Result) []string {
	var out []string
	for _, v := range live.Verdicts {
		if sv := verdict(simulated, v.Check); sv.Check != "" && sv.Result != v.Result {
			out = append(out, fmt.Sprintf("%s: simulated %s, live %s (%s)", v.Check, sv.Result, v.Result, v.Reason))
		}
	}
	return out
}
