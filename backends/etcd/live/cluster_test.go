package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/internal/proc/proctest"
)

// TestAMemberWhosePortWasTakenIsNotReady: another cluster's etcd that took a
// member's client port (between FreePorts and the start) answers healthy on
// it while the member itself exits; the member is not ready, and the error
// says the process exited first (so a deployment's retry starts it again).
func TestAMemberWhosePortWasTakenIsNotReady(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	bin, err := Binary()
	if err != nil {
		t.Skip(err)
	}
	dir, g, ports := proctest.Group(t, 3)
	c := &Cluster{opts: etcd.DefaultOptions(), group: proc.NewMembers("etcd", "member", g), dir: dir}
	mk := func(name string, peerPort int) *member {
		peer := fmt.Sprintf("127.0.0.1:%d", peerPort)
		return c.add(bin, name, fmt.Sprintf("127.0.0.1:%d", ports[0]), peer, name+"=http://"+peer)
	}
	other := mk("other", ports[1])
	require.NoError(t, c.group.Start(other.Member))
	require.NoError(t, c.waitHealthy(context.Background(), other, 20*time.Second), "the process that takes the port")
	ours := mk("ours", ports[2])
	require.NoError(t, c.group.Start(ours.Member))
	err = c.waitHealthy(context.Background(), ours, 20*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before it was ready")
	assert.Contains(t, err.Error(), "answered by another process")
}
