package live

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/internal/proc/proctest"
)

// TestAServerWhosePortWasTakenIsNotServing: another ensemble's server that
// took a server's client port (between FreePorts and the start) answers srvr
// on it while the server itself exits; the server is not serving, and the
// error says the process exited first (so Start tries again on fresh ports).
func TestAServerWhosePortWasTakenIsNotServing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	java, err := Java()
	if err != nil {
		t.Skip(err)
	}
	dir, g, ports := proctest.Group(t, 1)
	e := &Ensemble{opts: zookeeper.DefaultOptions(), group: proc.NewMembers("zookeeper", "server", g)}
	mk := func(name string) *server {
		sdir := filepath.Join(dir, name)
		require.NoError(t, writeConfig(sdir, 1, ports[0], e.opts, nil))
		return e.add(java, name, sdir, ports[0])
	}
	other := mk("other")
	require.NoError(t, e.group.Start(other.Member))
	require.NoError(t, other.waitServing(context.Background(), 30*time.Second), "the process that takes the port")
	ours := mk("ours")
	require.NoError(t, e.group.Start(ours.Member))
	err = ours.waitServing(context.Background(), 30*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before it was ready")
	assert.Contains(t, err.Error(), "answered by another process")
}
