//go:build unix

package sweep

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestASweepDirectoryIsLocked: while another process holds a directory's lock
// a sweep of it is refused, naming that process; a lock file left by a
// process that is gone is taken over.
func TestASweepDirectoryIsLocked(t *testing.T) {
	g := smallGrid(t)
	for _, tc := range []struct {
		name string
		// holder is the pid another open file holding the lock wrote, 0 for
		// a lock file nobody holds.
		holder int
		// pidInFile is what the lock file holds before.
		pidInFile string
		refused   string
	}{
		{"held by another process: refused, naming it", 4242, "4242\n", "process 4242 is writing it"},
		{"held, the holder's pid not written yet", 4242, "", "another process is writing it"},
		{"left by a process that is gone: taken over", 0, "4242\n", ""},
		{"left empty: taken over", 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			path := filepath.Join(dir, LockFile)
			require.NoError(t, os.WriteFile(path, []byte(tc.pidInFile), 0o644))
			if tc.holder != 0 {
				// Another open file holds the lock, as another process would.
				f, err := os.OpenFile(path, os.O_RDWR, 0)
				require.NoError(t, err)
				defer f.Close()
				ok, err := tryLock(f)
				require.NoError(t, err)
				require.True(t, ok)
			}
			_, err := Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
			if tc.refused != "" {
				var le *LockedError
				require.ErrorAs(t, err, &le)
				assert.Contains(t, err.Error(), tc.refused)
				_, err = os.Stat(filepath.Join(dir, ManifestFile))
				assert.ErrorIs(t, err, os.ErrNotExist, "a refused sweep writes nothing")
				return
			}
			require.ErrorIs(t, err, ErrStopped)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b), "the lock file names its holder")
		})
	}
}

// TestLockDirIsSharedWithinAProcess: a command that locks a directory around
// Sweep and Finish is not refused by them.
func TestLockDirIsSharedWithinAProcess(t *testing.T) {
	g := smallGrid(t)
	g.Seeds, g.Columns = 1, []string{"none"}
	dir := filepath.Join(t.TempDir(), "s")
	unlock, err := LockDir(dir)
	require.NoError(t, err)
	_, err = Sweep(g, Options{Dir: dir, Jobs: 1, Keep: KeepNone})
	require.NoError(t, err)
	_, err = Finish(dir, KeepNone, 1)
	require.NoError(t, err)
	// Held still: another open file cannot take it.
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	ok, err := tryLock(f)
	require.NoError(t, err)
	assert.False(t, ok, "held until the outer unlock")
	unlock()
	ok, err = tryLock(f)
	require.NoError(t, err)
	assert.True(t, ok, "released by the outer unlock")
}
