// Package proctest sets up what a test of real server processes needs: a
// scratch directory, a process group logging under it, closed when the test
// ends, and free loopback ports.
package proctest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/proc"
)

// Group returns a temporary directory, a process group whose logs are under
// its logs/ (closed, its processes stopped, when the test ends) and n free
// loopback ports.
func Group(t testing.TB, n int) (dir string, g *proc.Group, ports []int) {
	t.Helper()
	dir = t.TempDir()
	g, err := proc.NewGroup(filepath.Join(dir, "logs"))
	require.NoError(t, err)
	t.Cleanup(g.Close)
	ports, err = proc.FreePorts(n)
	require.NoError(t, err)
	return dir, g, ports
}
