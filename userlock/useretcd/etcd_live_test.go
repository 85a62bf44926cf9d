package useretcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	etcdlive "github.com/locklab/locklab/backends/etcd/live"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	userlive "github.com/locklab/locklab/userlock/live"
)

// TestAnEtcdKVLockRunsLiveUnchanged: the same user's lock, registered with
// RegisterEtcd, runs live against real etcd servers with a real
// *clientv3.Client: its critical sections are atomic without faults.
func TestAnEtcdKVLockRunsLiveUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd cluster (-short)")
	}
	if _, err := etcdlive.Binary(); err != nil {
		t.Skipf("needs etcd-server: %v", err)
	}
	l := kvLockSpec
	l.Name = "test-etcd-kvlock-live"
	userlive.RegisterEtcd(l) // for the life of the test binary: a live form cannot be unregistered
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := live.Run(ctx, scenario.Test{System: l.Name, Clients: 2, Seed: 1, Time: 5 * time.Second}, live.Config{})
	require.NoError(t, err)
	v := verdict(r, "critical-sections")
	require.NotEmpty(t, v.Check)
	assert.Equal(t, models.Valid, v.Result, v.Reason)
	assert.Greater(t, len(r.Events), 20, "the clients took the lock live")
}
