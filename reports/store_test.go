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
