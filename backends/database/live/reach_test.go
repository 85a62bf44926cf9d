package databaselive

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// When locklab runs as root, PostgreSQL runs as postgres, which must pass
// through every directory above its data directory: a private (0700)
// directory on the way is named before any server starts; a directory not
// made yet is made searchable by locklab and is no obstacle.
func TestCheckReachableNamesThePrivateDirectory(t *testing.T) {
	if RunUser() == "" {
		t.Skip("not root: PostgreSQL runs as locklab's own user, which reaches any directory locklab can")
	}
	// Not t.TempDir: the directory it makes the test's directories in is 0700.
	base, err := os.MkdirTemp("", "locklab-reach-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	private := filepath.Join(base, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o755))

	tests := []struct {
		name, dir, want string
	}{
		{"a private directory", filepath.Join(private, "runs"), "directory " + private + " (mode 0700) is not searchable by others"},
		{"below a private directory", filepath.Join(private, "a", "b"), "directory " + private + " (mode 0700)"},
		{"an open directory", filepath.Join(open, "runs"), ""},
		{"directories not made yet", filepath.Join(open, "x", "y", "z"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReachable(tc.dir)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "PostgreSQL runs as the user postgres")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
