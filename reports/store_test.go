package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
)

// Two runs of one name that start in the same millisecond get two
// directories; neither replaces the other.
func TestNewStoreRunNeverSharesADirectory(t *testing.T) {
	store := t.TempDir()
	start := time.Date(2026, 11, 27, 16, 1, 2, 345e6, time.UTC)
	first, moved, err := NewStoreRun(store, "redis-seed7", start)
	require.NoError(t, err)
	assert.Empty(t, moved)
	second, _, err := NewStoreRun(store, "redis-seed7", start)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(store, "redis-seed7", "20261127T160102.345Z"), first)
	assert.Equal(t, first+"-2", second)
	for _, d := range []string{first, second} {
		st, err := os.Stat(d)
		require.NoError(t, err)
		assert.True(t, st.IsDir())
	}
}

// A run directory written before the store kept every run (runs/<name>
// itself) is moved into the store under its modification time, so that
// the next run keeps it.
func TestNewStoreRunMovesARunDirectoryFromBefore(t *testing.T) {
	store := t.TempDir()
	old := filepath.Join(store, "redis-seed7")
	require.NoError(t, WriteDir(old, sampleRun(models.Valid)))
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, os.Chtimes(filepath.Join(old, ResultsFile), when, when))

	dir, moved, err := NewStoreRun(store, "redis-seed7", when.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(old, "20260102T030405.000Z"), moved)
	assert.FileExists(t, filepath.Join(moved, ResultsFile))
	assert.Equal(t, filepath.Join(old, "20260102T040405.000Z"), dir)
}

func TestStoreTimeReadsTheDirectoryName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"20261127T160102.345Z", true},
		{"20261127T160102.345Z-2", true},
		{"20261127T160102.345Z-shrunk", false},
		{"redis-fenced-counter-unfenced-pause-seed7", false},
		{"unsafe", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := storeTime(tc.name)
			assert.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, time.Date(2026, 11, 27, 16, 1, 2, 345e6, time.UTC), got)
			}
		})
	}
}

// RecordRun points runs/latest and runs/<name>/latest at the run just
// written and writes the index, which lists every run directory of the
// store, newest first, each with its verdict, faults and report link;
// symbolic links and hidden directories (writes in progress) are not runs.
func TestRecordRunPointsLatestAndWritesTheIndex(t *testing.T) {
	store := t.TempDir()
	var dirs []string
	for i, fenced := range []bool{false, true} {
		dir, _, err := NewStoreRun(store, "redis-seed7", time.Date(2026, 11, 27, 16, 0, i, 0, time.UTC))
		require.NoError(t, err)
		require.NoError(t, WriteDir(dir, GCPauseRun(fenced)))
		n, err := RecordRun(store, dir)
		require.NoError(t, err)
		assert.Equal(t, i+1, n)
		dirs = append(dirs, dir)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(store, ".redis-seed7.new-123"), 0o755))
	require.NoError(t, WriteDir(filepath.Join(store, "repro", "redis-failover", "unsafe"), sampleRun(models.Unknown)))

	target, err := os.Readlink(filepath.Join(store, LatestLink))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("redis-seed7", "20261127T160001.000Z"), target)
	target, err = os.Readlink(filepath.Join(store, "redis-seed7", LatestLink))
	require.NoError(t, err)
	assert.Equal(t, "20261127T160001.000Z", target)
	assert.FileExists(t, filepath.Join(store, LatestLink, ResultsFile), "latest opens as the run directory")

	entries, err := ScanStore(store)
	require.NoError(t, err)
	var listed []string
	for _, e := range entries {
		listed = append(listed, e.Dir)
	}
	assert.ElementsMatch(t, []string{"redis-seed7/20261127T160001.000Z", "redis-seed7/20261127T160000.000Z",
		"repro/redis-failover/unsafe"}, listed)
	byDir := map[string]IndexEntry{}
	for _, e := range entries {
		byDir[e.Dir] = e
	}
	first := byDir["redis-seed7/20261127T160000.000Z"]
	assert.Equal(t, "invalid", first.Overall)
	assert.Equal(t, "redis", first.System)
	assert.Equal(t, "fenced-counter", first.Workload)
	assert.Equal(t, []string{"1 pause"}, first.Faults)
	assert.Equal(t, "redis-seed7/20261127T160000.000Z/report.html", first.Report)
	assert.Equal(t, []string{"critical-sections", "mutual-exclusion"}, first.Failed)
	assert.Equal(t, []string{"mutual-exclusion"}, byDir["redis-seed7/20261127T160001.000Z"].Failed,
		"fenced, the stale write is rejected: only the overlap is reported")
	assert.True(t, entries[0].Started.After(entries[1].Started) || entries[0].Dir == "repro/redis-failover/unsafe", "newest first")

	n, err := WriteIndex(store)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	page, err := os.ReadFile(filepath.Join(store, IndexFile))
	require.NoError(t, err)
	for _, want := range []string{
		`data-dir="redis-seed7/20261127T160000.000Z" data-verdict="invalid"`,
		`class="run latest" data-dir="redis-seed7/20261127T160001.000Z"`,
		`href="redis-seed7/20261127T160000.000Z/report.html"`,
		`<span class="fault">1 pause</span>`,
		`3 runs: 2 invalid, 1 unknown`,
	} {
		assert.Contains(t, string(page), want)
	}
	assert.NotContains(t, string(page), ".new-", "a write in progress is not a run")
	assert.Equal(t, 1, strings.Count(string(page), `data-dir="redis-seed7/20261127T160001.000Z"`), "latest is not listed twice")
}

// A directory outside the store is not recorded: no link, no index.
func TestRecordRunLeavesADirectoryOutsideTheStore(t *testing.T) {
	store, elsewhere := t.TempDir(), t.TempDir()
	n, err := RecordRun(store, filepath.Join(elsewhere, "r"))
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.NoFileExists(t, filepath.Join(store, IndexFile))
	_, err = os.Lstat(filepath.Join(store, LatestLink))
	assert.True(t, os.IsNotExist(err))
}

// TestIndexTellsExpectedVerdictsFromSurprises: a run whose verdicts are what
// its scenario expects (an INVALID fixed variant among them) is listed as
// expected, not as a failure; one that is not is marked a surprise; a run
// of no scenario keeps its verdict's colour; the header tallies each.
func TestIndexTellsExpectedVerdictsFromSurprises(t *testing.T) {
	at := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
	fixed := IndexEntry{Dir: "repro/kleppmann-gc-pause/redis-fixed", Started: at, Overall: "invalid", ExitCode: ExitDataSafe,
		Failed:   []string{"mutual-exclusion"},
		Expected: &Expected{Scenario: "kleppmann-gc-pause", Variant: "redis-fixed", Match: true}}
	surprise := IndexEntry{Dir: "repro/redis-failover/fixed-wait", Started: at, Overall: "invalid", ExitCode: 1,
		Expected: &Expected{Scenario: "redis-failover", Variant: "fixed-wait", Mismatches: []string{"critical-sections: expected valid, got invalid"}}}
	plain := IndexEntry{Dir: "redis-seed7/x", Started: at, Overall: "invalid", ExitCode: 1}
	var b strings.Builder
	require.NoError(t, RenderIndex(&b, []IndexEntry{fixed, surprise, plain}, ""))
	page := b.String()
	for _, want := range []string{
		"3 runs: 1 not as its scenario expects (1 invalid); 1 as its scenario expects (1 invalid); 1 of no scenario (1 invalid)",
		`data-dir="repro/kleppmann-gc-pause/redis-fixed" data-verdict="invalid" data-expected="yes"`,
		`<span class="badge expected">INVALID</span><span class="said">as kleppmann-gc-pause/redis-fixed expects</span>` +
			`<span class="said">the lock broke, the data is safe (exit 5)</span>`,
		`class="run surprise" data-dir="repro/redis-failover/fixed-wait" data-verdict="invalid" data-expected="no"`,
		`<span class="badge invalid">INVALID</span><span class="said surprise">NOT as redis-failover/fixed-wait expects</span>`,
		`data-dir="redis-seed7/x" data-verdict="invalid"><td class="when">`,
	} {
		assert.Contains(t, strings.ReplaceAll(page, "\n  ", ""), want)
	}
	b.Reset()
	require.NoError(t, RenderIndex(&b, []IndexEntry{plain}, ""))
	assert.Contains(t, b.String(), "1 run: 1 invalid ·", "a store of no scenario's runs is tallied as before")
}

// TestOverallLineSaysWhatTheRunMeans: the summary's last line says exit 5's
// meaning and whether the run is as its scenario expects.
func TestOverallLineSaysWhatTheRunMeans(t *testing.T) {
	tests := []struct {
		name string
		run  Run
		want string
	}{
		{"plain", Run{Overall: models.Invalid, ExitCode: 1}, "overall: INVALID (exit 1)"},
		{"expected", Run{Overall: models.Invalid, ExitCode: 1, Expected: &Expected{Scenario: "s", Variant: "unsafe", Match: true}},
			"overall: INVALID (exit 1), as scenario s/unsafe expects"},
		{"surprise", Run{Overall: models.Valid, ExitCode: 0, Expected: &Expected{Scenario: "s", Variant: "unsafe",
			Mismatches: []string{"lease: expected invalid, got valid"}}},
			"overall: VALID (exit 0), NOT as scenario s/unsafe expects: lease: expected invalid, got valid"},
		{"data safe", Run{Overall: models.Invalid, ExitCode: ExitDataSafe},
			"overall: INVALID (exit 5): the lock broke, the data is safe: two clients believed they held the lock at once, " +
				"but fenced storage refused every stale write (critical-sections and fencing-tokens valid)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, OverallLine(tc.run))
		})
	}
}
