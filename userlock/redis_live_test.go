package userlock_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	userlive "github.com/locklab/locklab/userlock/live"
)

// TestTheSameRedisLockRunsLiveOnRedisServer: the fixed lock, registered
// with RegisterRedis, runs unchanged against a real redis-server through a
// *goredis.Client.
func TestTheSameRedisLockRunsLiveOnRedisServer(t *testing.T) {
	needRedisServer(t, "starts a real redis-server")
	l := fixedRedisLock
	l.Name = "test-redis-fixed-live"
	userlive.RegisterRedis(l) // once per test binary: a live form cannot be unregistered
	r, err := live.Run(context.Background(), scenario.Test{System: l.Name, Workload: "fenced-counter", Clients: 2, Seed: 1,
		Time: 3 * time.Second}, live.Config{})
	require.NoError(t, err)
	require.NotEmpty(t, r.Events)
	v := verdict(r, "critical-sections")
	assert.Equal(t, models.Valid, v.Result, v.Reason)
}

// needRedisServer skips a test that starts real redis-servers (saying so
// in starts) under -short, or where redis-server is not installed.
func needRedisServer(t *testing.T, starts string) {
	t.Helper()
	if testing.Short() {
		t.Skip(starts)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not found: install the Debian package redis-server")
	}
}
