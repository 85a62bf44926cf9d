package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
)

// readResults reads what a run directory's results.json says of the run.
func readResults(t *testing.T, dir string) (command string, verdicts map[string]string, extra map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Command  string `json:"command"`
		Verdicts []struct {
			Check  string `json:"check"`
			Result string `json:"result"`
		} `json:"verdicts"`
		Extra map[string]any `json:"extra"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	verdicts = map[string]string{}
	for _, v := range res.Verdicts {
		verdicts[v.Check] = v.Result
	}
	return res.Command, verdicts, res.Extra
}

// TestShrinkedScheduleReplaysTheFailure: a random run with 17 faults fails
// mutual exclusion (a gc-pause); shrink reduces it to one pause, writes the
// minimal run directory, and its schedule.json, replayed with
// `run --nemesis-file`, fails the same check again.
func TestShrinkedScheduleReplaysTheFailure(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "r63")
	code, _, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--nemesis", "random", "--seed", "63", "--out", failing)
	require.Equal(t, judge.ExitInvalid, code, stderr)

	code, stdout, stderr := capture(t, "shrink", failing)
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Regexp(t, `(?m)^shrunk 17 faults to 1 in \d+ runs \(\d+\.\d s\)$`, stdout)
	assert.Contains(t, stdout, "shrinking "+failing+": mutual-exclusion invalid, gc-pause violation")
	assert.Contains(t, stdout, "At 20.000s: pause on c1")
	shrunk := failing + "-shrunk"
	s, err := nemesis.ReadFile(filepath.Join(shrunk, reports.ScheduleFile))
	require.NoError(t, err)
	require.Len(t, s.Faults, 1)
	assert.Equal(t, nemesis.Pause, s.Faults[0].Kind)
	assert.FileExists(t, filepath.Join(shrunk, "story.txt"))
	assert.FileExists(t, filepath.Join(shrunk, reports.ReportFile))
	command, verdicts, extra := readResults(t, shrunk)
	assert.Equal(t, "invalid", verdicts["mutual-exclusion"])
	assert.Equal(t, 17.0, extra["shrink"].(map[string]any)["faults_before"])

	// The recorded command replays the minimal run from its schedule.json.
	args := strings.Fields(command)
	require.Equal(t, []string{"locklab", "run"}, args[:2])
	assert.Contains(t, args, "--nemesis-file")
	replay := filepath.Join(dir, "replay")
	args = append(args[1:len(args)-2], "--out", replay)
	code, _, stderr = capture(t, args...)
	require.Equal(t, judge.ExitInvalid, code, stderr)
	_, again, _ := readResults(t, replay)
	assert.Equal(t, "invalid", again["mutual-exclusion"])
}

func TestShrinkRefusesWhatItCannotShrink(t *testing.T) {
	dir := t.TempDir()
	passing := filepath.Join(dir, "ok")
	code, _, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--time", "5s", "--seed", "1", "--out", passing)
	require.Equal(t, judge.ExitValid, code, stderr)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"shrink", passing}, "the run fails no check: nothing to shrink"},
		{[]string{"shrink", filepath.Join(dir, "nowhere")}, filepath.Join(dir, "nowhere") + ": no such directory"},
		{[]string{"shrink"}, "shrink needs the run directory of a failing run (as 'locklab run --out DIR' writes it)"},
		{[]string{"shrink", passing, "--max-runs", "0"}, "--max-runs 0"},
		{[]string{"shrink", passing, "--kind", "nope"}, `--kind "nope": want one of gc-pause, clock-jump`},
		{[]string{"shrink", passing, "--kind", "gc-pause"}, "the run fails no check: nothing to shrink"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestRunShrinkWritesTheMinimalRunBeside: run --shrink shrinks a failing run
// into <out>-shrunk and keeps the run's own exit code.
func TestRunShrinkWritesTheMinimalRunBeside(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--nemesis", "random", "--seed", "63", "--out", out, "--shrink")
	assert.Equal(t, judge.ExitInvalid, code, stderr)
	assert.Regexp(t, `(?m)^shrunk 17 faults to 1 in \d+ runs`, stdout)
	assert.FileExists(t, filepath.Join(out+"-shrunk", reports.ScheduleFile))
}

// TestShrinkSaysWhatMakesARunDirectory: shrink on what is not a run
// directory says what it is and which file is missing.
func TestShrinkSaysWhatMakesARunDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	noSchedule := filepath.Join(dir, "r")
	code, _, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--time", "5s", "--seed", "1", "--nemesis", "pause", "--out", noSchedule)
	require.Contains(t, []int{judge.ExitValid, judge.ExitInvalid}, code, stderr)
	require.NoError(t, os.Remove(filepath.Join(noSchedule, reports.ScheduleFile)))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", []string{"shrink"}, "shrink needs the run directory of a failing run (as 'locklab run --out DIR' writes it)"},
		{"two", []string{"shrink", empty, file}, "shrink takes one run directory, got 2: " + empty + " " + file},
		{"no such directory", []string{"shrink", filepath.Join(dir, "nowhere")}, filepath.Join(dir, "nowhere") + ": no such directory"},
		{"a file", []string{"shrink", file}, file + " is a file, not a run directory: shrink reads the directory a run wrote"},
		{"no results.json", []string{"shrink", empty}, empty + " is not a run directory: it has no results.json (a run directory, " +
			"as 'locklab run' writes it, holds results.json, history.jsonl and, when faults ran, schedule.json)"},
		{"no schedule.json", []string{"shrink", noSchedule}, noSchedule + " is not a whole run directory: its results.json says " +
			"faults ran, but it has no schedule.json, the faults that ran"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Equal(t, "locklab: "+tc.want+"\nSee 'locklab shrink --help'.\n", stderr)
		})
	}
}

// markRunLive makes a stored run directory read as a live run's: its
// results.json gets the live figures a live run records.
func markRunLive(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, reports.ResultsFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var res map[string]any
	require.NoError(t, json.Unmarshal(b, &res))
	res["extra"].(map[string]any)["live"] = map[string]any{"replayable": "no"}
	b, err = json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestShrinkSaysALiveRunIsShrunkInTheSimulator: shrink on a live run says
// that it searches in the simulator, and when the simulated replay fails
// nothing, says that the live failure did not reproduce there.
func TestShrinkSaysALiveRunIsShrunkInTheSimulator(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, "live-fail")
	code, _, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--nemesis", "random", "--seed", "63", "--out", failing)
	require.Equal(t, judge.ExitInvalid, code, stderr)
	markRunLive(t, failing)
	code, stdout, stderr := capture(t, "shrink", failing)
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.True(t, strings.HasPrefix(stdout, failing+" is a live run: shrink searches in the simulator"), stdout)

	passing := filepath.Join(dir, "live-ok")
	code, _, stderr = capture(t, "run", "--system", "redis", "--clients", "2", "--time", "5s", "--seed", "1", "--out", passing)
	require.Equal(t, judge.ExitValid, code, stderr)
	markRunLive(t, passing)
	code, _, stderr = capture(t, "shrink", passing)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, passing+": a live run, and its simulated replay, the run shrink searches from, fails no check: "+
		"nothing to shrink in the simulator (the live failure did not reproduce there)")
}
