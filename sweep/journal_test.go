package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestASweepRemovesWhatAKilledOneLeft: the run directories a killed sweep was
// writing or swapping and its temporary files are removed when the sweep
// starts again; kept run directories stay.
func TestASweepRemovesWhatAKilledOneLeft(t *testing.T) {
	g := smallGrid(t)
	dir := filepath.Join(t.TempDir(), "s")
	_, err := Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
	require.ErrorIs(t, err, ErrStopped)
	runs := filepath.Join(dir, RunsDir)
	left := []string{
		filepath.Join(runs, ".abc-pause-seed7.new-123456", "history.jsonl"),
		filepath.Join(runs, ".abc-pause-seed8.old-99", "report.html"),
		filepath.Join(dir, ".records.jsonl.tmp-42"),
	}
	kept := filepath.Join(runs, "abc-pause-seed7", "results.json")
	for _, f := range append(left, kept) {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	}
	_, err = Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
	require.ErrorIs(t, err, ErrStopped)
	for _, f := range left {
		_, err := os.Stat(filepath.Dir(f))
		if filepath.Dir(f) == dir {
			_, err = os.Stat(f)
		}
		assert.ErrorIs(t, err, os.ErrNotExist, "%s is removed", f)
	}
	assert.FileExists(t, kept)
}
