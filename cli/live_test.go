package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

func TestLiveUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--scale", "0.5"}, "--scale needs --live"},
		{[]string{"run", "--live", "--scale", "0"}, "--scale 0: want a factor"},
		{[]string{"run", "--live", "--system", "chubby"}, `system "chubby" has no live form yet`},
		{[]string{"run", "--live", "--system", "redlock", "-o", "token=incr"}, "redlock option token=incr has no live form"},
		{[]string{"run", "--live", "--system", "raftkv", "-o", "tick=10ms"}, "raftkv option tick is not available live"},
		{[]string{"run", "--live", "--system", "raftkv", "--nemesis", "clock-drift"}, "clock-drift cannot run live"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestRunLiveWritesAMarkedRunDirectory runs raftkv live for a second (scaled
// from 10 s) with random pauses and checks the run directory says it was
// live (a pause past the lease may make the verdicts invalid: either is fine).
func TestRunLiveWritesAMarkedRunDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a live run takes real time")
	}
	leaks := goleak.IgnoreCurrent()
	defer goleak.VerifyNone(t, leaks) // no goroutine of the stopped cluster survives
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := capture(t, "run", "--live", "--scale", "0.1", "--system", "raftkv", "-o", "fsync=always",
		"--time", "10s", "--seed", "5", "--out", dir)
	require.Equal(t, judge.ExitUsage, code, "a simulated-only option is refused: %s", stderr)
	code, stdout, stderr = capture(t, "run", "--live", "--scale", "0.1", "--system", "raftkv", "--storage", "fenced",
		"-o", "watchdog=true", "--time", "10s", "--seed", "5", "--nemesis", "pause", "--out", dir)
	require.Contains(t, []int{judge.ExitValid, judge.ExitInvalid}, code, "verdicts, not an error: stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stdout, "seed 5 (live): locklab run --live --system raftkv")
	assert.Equal(t, 1, strings.Count(stdout, "not replayable byte for byte"), "the live banner is printed once: %s", stdout)
	assert.Contains(t, stdout, "hashicorp/raft v1.8.0")
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var results struct {
		Extra map[string]any `json:"extra"`
	}
	require.NoError(t, json.Unmarshal(b, &results))
	assert.Contains(t, results.Extra, "live")
	html, err := os.ReadFile(filepath.Join(dir, reports.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(html), "not replayable byte for byte", "report.html says the run was live")
}
