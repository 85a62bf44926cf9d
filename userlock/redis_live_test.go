package userlock_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
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

// TestALiveDelayToAUserLocksRedisFires: the slow-release scenario's delay
// of everything client 1 sends the servers (a user's lock, live) fires:
// its link's proxy holds the bytes, and client 1's release takes the delay.
func TestALiveDelayToAUserLocksRedisFires(t *testing.T) {
	needRedisServer(t, "starts a real redis-server")
	l := setnxRedisLock
	l.Name = "test-redis-setnx-live"
	userlive.RegisterRedis(l) // once per test binary: a live form cannot be unregistered
	test := variantOf(t, l.Scenarios(), "slow-release")
	r, err := live.Run(context.Background(), test, live.Config{Scale: 0.5})
	require.NoError(t, err)
	require.Len(t, r.FaultOutcomes, 1)
	assert.True(t, r.FaultOutcomes[0].Fired, r.FaultOutcomes[0].DidNotFire)
	started := int64(-1)
	for _, e := range r.Events {
		if e.Process == history.NemesisProcess && e.Type == history.Start {
			started = e.Time
		}
		if started >= 0 && e.Node == "c1" && e.F == history.FRelease && e.Type != history.Invoke {
			t.Logf("c1's release after the delay started: %v", e)
			break
		}
	}
	require.GreaterOrEqual(t, started, int64(0), "the delay started")
}
