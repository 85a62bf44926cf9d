package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/system"
)

// capture runs the CLI and returns its exit code, stdout and stderr.
func capture(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	oldOut, oldErr := os.Stdout, os.Stderr
	ro, wo, _ := os.Pipe()
	re, we, _ := os.Pipe()
	os.Stdout, os.Stderr = wo, we
	outC, errC := make(chan string), make(chan string)
	go func() { b, _ := io.ReadAll(ro); outC <- string(b) }()
	go func() { b, _ := io.ReadAll(re); errC <- string(b) }()
	code := execute(args)
	wo.Close()
	we.Close()
	os.Stdout, os.Stderr = oldOut, oldErr
	return code, <-outC, <-errC
}

func TestUsageErrorsExitWithTheUsageCode(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--system", "mongo"}, `unknown system "mongo"`},
		{[]string{"run", "--clients", "many"}, `--clients "many": want a whole number`},
		{[]string{"run", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"run", "-o", "ttl"}, `--opt "ttl": want key=value`},
		{[]string{"run", "-o", "ttl=forever"}, `redis option ttl="forever"`},
		{[]string{"run", "--storage", "fenced"}, "grants no fencing tokens"},
		{[]string{"run", "--nemesis", "meteor"}, `unknown fault kind "meteor"`},
		{[]string{"run", "--cuts", "tcp"}, `--cuts "tcp": want drop or hold`},
		{[]string{"run", "--nemesis-file", "/nonexistent.json"}, "read schedule"},
		{[]string{"run", "extra"}, "unknown command"},
		{[]string{"frobnicate"}, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestRunWritesARunDirectoryAndReplays(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	code, stdout, _ := capture(t, "run", "--system", "redis", "--nemesis", "pause", "--seed", "7", "--time", "60s", "--out", out)
	assert.Equal(t, judge.ExitInvalid, code, stdout)
	first := strings.SplitN(stdout, "\n", 2)[0]
	assert.True(t, strings.HasPrefix(first, "seed 7: locklab run "), first)
	assert.Contains(t, stdout, "critical-sections  INVALID")
	for _, f := range []string{reports.HistoryFile, reports.ResultsFile, reports.ScheduleFile, reports.SummaryFile} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	var res reports.Results
	b, err := os.ReadFile(filepath.Join(out, reports.ResultsFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, uint64(7), res.Seed)
	assert.Equal(t, judge.ExitInvalid, res.ExitCode)
	var ran []string
	for _, v := range res.Verdicts {
		ran = append(ran, v.Check)
	}
	assert.Equal(t, []string{"critical-sections", "mutual-exclusion", "lease", "liveness"}, ran,
		"by default every check that applies runs (no tokens: no fencing check; leases: no mutex check)")
	assert.Contains(t, string(b), `"reason": "the lock grants no fencing tokens"`, "results.json says why a check was left out")
	assert.FileExists(t, filepath.Join(out, "porcupine-critical-sections.html"))
	assert.Equal(t, "porcupine-critical-sections.html", res.Files["porcupine:critical-sections"])
	hist1, _ := os.ReadFile(filepath.Join(out, reports.HistoryFile))

	// The printed command replays the run exactly.
	args := strings.Fields(strings.TrimPrefix(first, "seed 7: locklab "))
	out2 := filepath.Join(dir, "replay")
	for i, a := range args {
		if a == "--out" {
			args[i+1] = out2
		}
	}
	code2, _, _ := capture(t, args...)
	assert.Equal(t, code, code2)
	hist2, _ := os.ReadFile(filepath.Join(out2, reports.HistoryFile))
	assert.True(t, bytes.Equal(hist1, hist2), "the replay command must reproduce the history byte for byte")
}

func TestHandEditedScheduleReproducesACounterexample(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "gc.json")
	require.NoError(t, os.WriteFile(sched, []byte(`{"faults": [
  {"kind": "pause", "targets": ["c1"], "duration": "15s", "after": {"node": "c1", "f": "read"}}
]}`), 0o644))
	code, stdout, _ := capture(t, "run", "--nemesis-file", sched, "--seed", "1", "--time", "30s", "--out", filepath.Join(dir, "r"))
	assert.Equal(t, judge.ExitInvalid, code, stdout)
	assert.Contains(t, stdout, "During the pause of c1 from ")
	assert.Contains(t, stdout, "--nemesis-file "+filepath.Join(dir, "r", "schedule.json"))

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"faults": [{"kind": "pause", "targets": ["c1"]}]}`), 0o644))
	code, _, stderr := capture(t, "run", "--nemesis-file", bad)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, bad+`:1: faults[0] (pause): field "duration"`)
}

// TestDroppingCutsReplay: a run whose partitions drop what they catch
// (--cuts drop) says so in its replay command, which reproduces it byte for
// byte; the default (hold) is not written.
func TestDroppingCutsReplay(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	_, stdout, _ := capture(t, "run", "--system", "zookeeper", "--cuts", "drop", "--nemesis", "partition", "--seed", "3", "--time", "20s", "--out", out)
	first := strings.SplitN(stdout, "\n", 2)[0]
	require.Contains(t, first, " --cuts drop ", first)
	hist1, err := os.ReadFile(filepath.Join(out, reports.HistoryFile))
	require.NoError(t, err)
	args := strings.Fields(strings.TrimPrefix(first, "seed 3: locklab "))
	out2 := filepath.Join(dir, "replay")
	for i, a := range args {
		if a == "--out" {
			args[i+1] = out2
		}
	}
	capture(t, args...)
	hist2, err := os.ReadFile(filepath.Join(out2, reports.HistoryFile))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(hist1, hist2), "the replay command must reproduce the history byte for byte")

	_, stdout, _ = capture(t, "run", "--system", "zookeeper", "--nemesis", "partition", "--seed", "3", "--time", "20s", "--out", filepath.Join(dir, "hold"))
	assert.NotContains(t, strings.SplitN(stdout, "\n", 2)[0], "--cuts")
}

func TestValidRunExitsZero(t *testing.T) {
	code, stdout, _ := capture(t, "run", "--seed", "1", "--time", "20s", "--out", filepath.Join(t.TempDir(), "r"))
	assert.Equal(t, judge.ExitValid, code, stdout)
	assert.Contains(t, stdout, "overall: VALID (exit 0)")
}

// TestRootHelpNamesEverySystemAndLiveMode: the root help names every
// registered system, and live mode with every live system, each on a line
// within the listings' width.
func TestRootHelpNamesEverySystemAndLiveMode(t *testing.T) {
	code, stdout, _ := capture(t, "--help")
	require.Equal(t, judge.ExitValid, code)
	for _, s := range system.Names() {
		assert.Regexp(t, `(?m)^  `+s+` +\S`, stdout, "the system %s is named", s)
	}
	long, _, _ := strings.Cut(stdout, "\nUsage:")
	_, liveMode, found := strings.Cut(long, "Live mode (run --live, repro --live)")
	require.True(t, found, long)
	for _, s := range live.Systems() {
		assert.Regexp(t, `(?m)^  `+s+` +\S`, liveMode, "the live system %s is named", s)
	}
	for _, l := range strings.Split(long, "\n") {
		assert.LessOrEqual(t, len([]rune(l)), termWidth, l)
	}
}

// TestRunVerbosePrintsTheStory: run -v (as repro -v) prints the story of the
// run after its verdicts.
func TestRunVerbosePrintsTheStory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := capture(t, "run", "-v", "--system", "redis", "--nemesis", "pause", "--seed", "7", "--time", "20s", "--out", out)
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "\nstory:\n  At 1.591s: pause on redis — pause for 8.925s.\n")
	_, stdout, _ = capture(t, "run", "--system", "redis", "--nemesis", "pause", "--seed", "7", "--time", "20s", "--out", out)
	assert.NotContains(t, stdout, "\nstory:\n")
}

// TestAFencedDesignWhoseLockBrokeExitsFive: Redis with fencing tokens on
// fenced storage, seed 7: a paused client still believed it held the lock
// (mutual-exclusion invalid), but the storage refused its stale write
// (critical-sections and fencing-tokens valid): exit 5, said on the overall
// line; unfenced, the same run loses an update and exits 1.
func TestAFencedDesignWhoseLockBrokeExitsFive(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := capture(t, "run", "--system", "redis", "-o", "fencing=true", "--storage", "fenced", "--nemesis", "pause",
		"--seed", "7", "--out", filepath.Join(dir, "fenced"))
	require.Equal(t, judge.ExitDataSafe, code, stderr)
	assert.Contains(t, stdout, "\noverall: INVALID (exit 5): the lock broke, the data is safe: two clients believed they held the lock at once, "+
		"but fenced storage refused every stale write (critical-sections and fencing-tokens valid)\n")
	code, _, stderr = capture(t, "run", "--system", "redis", "--nemesis", "pause", "--seed", "7", "--out", filepath.Join(dir, "unfenced"))
	require.Equal(t, judge.ExitInvalid, code, stderr)
}

// TestResultsCarryTheStoragesRecordOfWrites: results.json carries the
// storage's record of applied writes beside the servers' grants, so the late
// write of seed 7 (c4's, at 35.444 s, after its lease ran out at 34.301 s)
// can be confirmed by hand.
func TestResultsCarryTheStoragesRecordOfWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, _, stderr := capture(t, "run", "--system", "redis", "--nemesis", "pause", "--seed", "7", "--out", dir)
	require.Equal(t, judge.ExitInvalid, code, stderr)
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Writes        []reports.AppliedWrite `json:"applied_writes"`
		ServersRecord reports.ServersRecord  `json:"servers_record"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.Len(t, res.Writes, 189, "every write the history shows applied")
	require.NotEmpty(t, res.ServersRecord.Grants)
	var late []reports.AppliedWrite
	for _, w := range res.Writes {
		if w.Client == "c4" && w.At > 35e9 && w.At < 35.5e9 {
			late = append(late, w)
		}
	}
	require.Len(t, late, 1)
	assert.Equal(t, int64(47), late[0].Value)
	assert.True(t, late[0].Committed)
	require.NotNil(t, late[0].Read)
	assert.Equal(t, int64(46), *late[0].Read)
}
