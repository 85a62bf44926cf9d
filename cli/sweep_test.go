package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/sweep"
)

// TestMain lets a test run the test binary as the locklab command
// (LOCKLAB_AS_CLI=1), so that a test can kill a real process.
func TestMain(m *testing.M) {
	if os.Getenv("LOCKLAB_AS_CLI") == "1" {
		os.Exit(execute(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// smallSweep is a grid of short runs: the redis designs without faults and
// under pauses.
var smallSweep = []string{"sweep", "--system", "redis", "--columns", "none,pause", "--seeds", "7..8", "--time", "10s",
	"--keep", "none", "--progress=false"}

var sweepOutputs = []string{sweep.RecordsFile, sweep.MatrixJSON, sweep.MatrixCSV, sweep.MatrixHTML}

func sameSweepOutputs(t *testing.T, want, got string) {
	t.Helper()
	for _, f := range sweepOutputs {
		a, err := os.ReadFile(filepath.Join(want, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(got, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs", f)
	}
}

// TestSweepKilledThreeTimesEndsAsAnUninterruptedOne runs the command as a
// process, SIGKILLs it three times after a random number of finished runs
// (sometimes in the middle of a journal write), starts it again with the same
// arguments each time, and compares the end with an uninterrupted sweep.
func TestSweepKilledThreeTimesEndsAsAnUninterruptedOne(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process several times")
	}
	whole := filepath.Join(t.TempDir(), "whole")
	code, _, stderr := capture(t, append(smallSweep, "--out", whole)...)
	require.Equal(t, judge.ExitValid, code, stderr)
	m, err := sweep.ReadManifest(whole)
	require.NoError(t, err)
	total := m.Grid.NumRuns()

	dir := filepath.Join(t.TempDir(), "killed")
	args := append(smallSweep, "--out", dir, "-j", "2")
	rng := rand.New(rand.NewPCG(1, 2))
	for kill := range 3 {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "LOCKLAB_AS_CLI=1")
		require.NoError(t, cmd.Start())
		before := journalLines(dir)
		target := before + 1 + rng.IntN(max(1, (total-before)/4))
		for journalLines(dir) < target {
			time.Sleep(2 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		t.Logf("kill %d after %d of %d runs", kill+1, journalLines(dir), total)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOCKLAB_AS_CLI=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "recorded before")
	sameSweepOutputs(t, whole, dir)
}

// journalLines counts the complete lines of dir's journal.
func journalLines(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, sweep.JournalFile))
	return bytes.Count(b, []byte("\n"))
}

func TestSweepUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--seeds", "0"}, "--seeds"},
		{[]string{"sweep", "--seeds", "9..3"}, "--seeds"},
		{[]string{"sweep", "--columns", "meteor"}, `unknown fault family "meteor"`},
		{[]string{"sweep", "--system", "mongo"}, `--system: unknown system "mongo"`},
		{[]string{"sweep", "--system", "Redlock"}, `did you mean "redlock"?`},
		{[]string{"sweep", "--columns", "Pause"}, `unknown fault family "Pause" — did you mean "pause"?`},
		{[]string{"sweep", "--keep", "some"}, "--keep"},
		{[]string{"sweep", "--shard", "4/4"}, "--shard"},
		{[]string{"sweep", "--preset", "huge"}, "--preset"},
		{[]string{"sweep", "--resume", "/nonexistent"}, "sweep directory"},
		{[]string{"merge", "--out", "x"}, "merge"},
	} {
		t.Run(tc.args[1]+" "+tc.args[2], func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestSweepRefusesADirectoryOfAnotherGrid(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	args := []string{"sweep", "--system", "control", "--columns", "none", "--seeds", "1", "--time", "2s", "--progress=false", "--out", dir}
	code, _, stderr := capture(t, args...)
	require.Equal(t, judge.ExitValid, code, stderr)
	code, _, stderr = capture(t, append(args, "--time", "3s")...)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "another grid")
}

// TestASecondSweepOfTheSameDirectoryIsRefused starts a sweep as a process and,
// while it runs, the same sweep again: the second is refused with the usage
// code, naming the first's pid, and leaves the journal alone. Once the first
// is killed, the same command takes the directory over and finishes it as an
// uninterrupted sweep would.
func TestASecondSweepOfTheSameDirectoryIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a process")
	}
	args := []string{"sweep", "--system", "redis", "--columns", "none,pause,random", "--seeds", "1..12", "--time", "60s",
		"--keep", "none", "--progress=false", "-j", "1"}
	dir := filepath.Join(t.TempDir(), "s")
	first := exec.Command(os.Args[0], append(args, "--out", dir)...)
	first.Env = append(os.Environ(), "LOCKLAB_AS_CLI=1")
	require.NoError(t, first.Start())
	defer func() { _ = first.Process.Kill(); _ = first.Wait() }()
	for journalLines(dir) < 1 {
		time.Sleep(2 * time.Millisecond)
	}
	code, _, stderr := capture(t, append(args, "--out", dir)...)
	assert.Equal(t, judge.ExitUsage, code, stderr)
	assert.Contains(t, stderr, fmt.Sprintf("process %d is writing it", first.Process.Pid))
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()

	code, stdout, stderr := capture(t, append(args, "--out", dir)...)
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "recorded before", "the killed sweep's lock is taken over")
	whole := filepath.Join(t.TempDir(), "whole")
	code, _, stderr = capture(t, append(args, "--out", whole)...)
	require.Equal(t, judge.ExitValid, code, stderr)
	sameSweepOutputs(t, whole, dir)
}

// TestADamagedJournalExitsWithTheRemedy: a journal line that is not a record
// ends the sweep with the failure code and the command that repairs it.
func TestADamagedJournalExitsWithTheRemedy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	args := []string{"sweep", "--system", "control", "--columns", "none", "--seeds", "2", "--time", "2s", "--progress=false", "--out", dir}
	code, _, stderr := capture(t, args...)
	require.Equal(t, judge.ExitValid, code, stderr)
	journal := filepath.Join(dir, sweep.JournalFile)
	b, err := os.ReadFile(journal)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(journal, append([]byte("not a record\n"), b...), 0o644))
	code, _, stderr = capture(t, args...)
	assert.Equal(t, judge.ExitCrash, code)
	assert.Contains(t, stderr, "line 1: not JSON")
	assert.Contains(t, stderr, "sed -i '1d' "+journal)
}

// TestDefaultOutputDirectoriesAreIgnoredByGit: what the README's commands
// write with their default output directories (run directories, sweep
// directories) is ignored by git, so that it does not mark every build made
// afterwards "+dirty".
func TestDefaultOutputDirectoriesAreIgnoredByGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, ".gitignore")); err != nil {
		t.Skip("not in the repository")
	}
	for _, path := range []string{
		filepath.Join(defaultSweepsDir, "0123456789abcdef", sweep.JournalFile),
		filepath.Join(defaultSweepsDir, "0123456789abcdef", sweep.LockFile),
		filepath.Join("runs", "redis-fenced-counter-unfenced-none-seed1", "history.jsonl"),
	} {
		t.Run(path, func(t *testing.T) {
			cmd := exec.Command(git, "-C", root, "check-ignore", "-q", "--no-index", path)
			err := cmd.Run()
			assert.NoError(t, err, "%s is not ignored by %s", path, filepath.Join(root, ".gitignore"))
		})
	}
}
