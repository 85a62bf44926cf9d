package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

// storeRuns lists the run directories of name in the store, oldest first.
func storeRuns(t *testing.T, name string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(reports.StoreDir, name))
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(reports.StoreDir, name, e.Name()))
		}
	}
	return dirs
}

// storedCommand is the replay command results.json of dir records.
func storedCommand(t *testing.T, dir string) string {
	t.Helper()
	var res reports.Results
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	return res.Command
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// Without --out, a run goes to a new directory of the store: two runs of the
// same seed keep two directories, runs/latest (and runs/<name>/latest)
// point at the second, runs/index.html lists both, and the replay command
// results.json records runs the same test into a third directory with the
// same history and results, byte for byte.
func TestTwoRunsOfASeedKeepTwoDirectoriesAndReplay(t *testing.T) {
	t.Chdir(t.TempDir())
	const name = "redis-fenced-counter-unfenced-pause-seed7"
	args := []string{"run", "--system", "redis", "--nemesis", "pause", "--seed", "7", "--time", "20s"}
	for range 2 {
		code, stdout, stderr := capture(t, args...)
		require.NotEqual(t, judge.ExitUsage, code, stderr)
		assert.NotContains(t, strings.SplitN(stdout, "\n", 2)[0], "--out", "a run of the store replays into a new directory")
	}
	dirs := storeRuns(t, name)
	require.Len(t, dirs, 2, "the second run keeps the first")
	assert.NotEqual(t, dirs[0], dirs[1])

	target, err := os.Readlink(filepath.Join(reports.StoreDir, reports.LatestLink))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(name, filepath.Base(dirs[1])), target)
	target, err = os.Readlink(filepath.Join(reports.StoreDir, name, reports.LatestLink))
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(dirs[1]), target)

	index := string(readFile(t, filepath.Join(reports.StoreDir, reports.IndexFile)))
	for _, d := range dirs {
		rel := name + "/" + filepath.Base(d)
		assert.Contains(t, index, `data-dir="`+rel+`"`)
		assert.Contains(t, index, `href="`+rel+`/report.html"`)
	}
	assert.Contains(t, index, `class="run latest" data-dir="`+name+"/"+filepath.Base(dirs[1])+`"`)

	// Same seed, same files: the path of the run is in no deterministic file.
	for _, f := range []string{reports.HistoryFile, reports.ResultsFile, reports.ReportFile} {
		assert.True(t, bytes.Equal(readFile(t, filepath.Join(dirs[0], f)), readFile(t, filepath.Join(dirs[1], f))), f)
	}

	command := storedCommand(t, dirs[0])
	require.True(t, strings.HasPrefix(command, "locklab run "), command)
	capture(t, strings.Fields(strings.TrimPrefix(command, "locklab "))...)
	dirs = storeRuns(t, name)
	require.Len(t, dirs, 3, "the replay is a third run")
	for _, f := range []string{reports.HistoryFile, reports.ResultsFile} {
		assert.True(t, bytes.Equal(readFile(t, filepath.Join(dirs[0], f)), readFile(t, filepath.Join(dirs[2], f))),
			"the replay command reproduces %s byte for byte", f)
	}
	assert.FileExists(t, filepath.Join(reports.StoreDir, reports.LatestLink, reports.HistoryFile))

	// shrink runs/latest writes beside the run latest names, not beside the link.
	code, stdout, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--nemesis", "random", "--seed", "63")
	require.Equal(t, judge.ExitInvalid, code, stdout+stderr)
	code, stdout, stderr = capture(t, "shrink", filepath.Join(reports.StoreDir, reports.LatestLink))
	require.Equal(t, judge.ExitValid, code, stdout+stderr)
	shrunk := storeRuns(t, "redis-fenced-counter-unfenced-random-seed63")
	require.Len(t, shrunk, 2)
	assert.Equal(t, shrunk[0]+"-shrunk", shrunk[1])
	target, err = os.Readlink(filepath.Join(reports.StoreDir, reports.LatestLink))
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(shrunk[1]), filepath.Base(target), "the shrunk run is the latest")
}

// A schedule file's run replays from the copy in its run directory of the
// store, into a new directory.
func TestAStoredScheduleRunReplays(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.WriteFile("gc.json", []byte(`{"faults": [
  {"kind": "pause", "targets": ["c1"], "duration": "15s", "after": {"node": "c1", "f": "read"}}
]}`), 0o644))
	code, stdout, _ := capture(t, "run", "--nemesis-file", "gc.json", "--seed", "1", "--time", "30s")
	require.Equal(t, judge.ExitInvalid, code, stdout)
	dirs := storeRuns(t, "redis-fenced-counter-unfenced-gc-seed1")
	require.Len(t, dirs, 1)
	command := storedCommand(t, dirs[0])
	assert.Contains(t, command, "--nemesis-file "+filepath.Join(dirs[0], reports.ScheduleFile))
	require.NoError(t, os.Remove("gc.json"), "the replay needs only the run directory")

	code2, stdout2, stderr2 := capture(t, strings.Fields(strings.TrimPrefix(command, "locklab "))...)
	require.Equal(t, code, code2, stdout2+stderr2)
	replays := storeRuns(t, "redis-fenced-counter-unfenced-schedule-seed1")
	require.Len(t, replays, 1)
	assert.True(t, bytes.Equal(readFile(t, filepath.Join(dirs[0], reports.HistoryFile)),
		readFile(t, filepath.Join(replays[0], reports.HistoryFile))))
}

// report --index writes the index page again; a store that is not a
// directory is a usage error naming it.
func TestReportIndex(t *testing.T) {
	t.Chdir(t.TempDir())
	capture(t, "run", "--seed", "1", "--time", "5s")
	require.NoError(t, os.Remove(filepath.Join(reports.StoreDir, reports.IndexFile)))
	code, stdout, stderr := capture(t, "report", "--index")
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Equal(t, "index: runs/index.html (1 run)\n", stdout)
	assert.FileExists(t, filepath.Join(reports.StoreDir, reports.IndexFile))

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"report", "--index", "nowhere"}, "report --index: nowhere is not a directory"},
		{[]string{"report", "--index", "a", "b"}, "report --index takes at most one directory"},
		{[]string{"report", "--index", "--screenshot"}, "--index and --screenshot exclude each other"},
		{[]string{"report"}, "report needs a run directory (or --index"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
