package live

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// TestADelayBetweenAClientAndRedisFires: a delay of everything client 1
// sends the lock's own server (its link's proxy holds the bytes) fires, and
// client 1's next call to Redis takes at least the delay, as in the
// simulator; the other client's calls do not.
func TestADelayBetweenAClientAndRedisFires(t *testing.T) {
	needRedis(t)
	noLeakRedis(t)
	const delay = 1500 * time.Millisecond
	sched := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"servers"},
		Amount: nemesis.Duration(delay), Duration: nemesis.Duration(2 * delay), After: scenario.After("c1", "write")}}}
	test := scenario.Test{System: "redis", Clients: 2, Seed: 1, Time: 8 * time.Second, Schedule: &sched}
	r, err := Run(context.Background(), test, Config{})
	require.NoError(t, err)
	require.Len(t, r.FaultOutcomes, 1)
	assert.True(t, r.FaultOutcomes[0].Fired, r.FaultOutcomes[0].DidNotFire)
	assertDelayedCall(t, r.Events, "c1", delay)
}

// assertDelayedCall asserts that client's first lock call (a release or
// an acquire) after the delay started took at least delay, or ended
// unknown.
func assertDelayedCall(t *testing.T, events []history.Event, client string, delay time.Duration) {
	t.Helper()
	started := int64(-1)
	invoked := map[int]history.Event{}
	for _, e := range events {
		if e.Process == history.NemesisProcess && e.Type == history.Start && e.F == string(nemesis.Delay) {
			started = e.Time
		}
		if started < 0 || e.Node != client || (e.F != history.FRelease && e.F != history.FAcquire) {
			continue
		}
		if e.Type == history.Invoke {
			if e.Time >= started {
				invoked[e.Process] = e
			}
			continue
		}
		inv, ok := invoked[e.Process]
		if !ok {
			continue
		}
		took := time.Duration(e.Time - inv.Time)
		assert.True(t, took >= delay*9/10 || e.Type == history.Info, "%s's %s after the delay started took %v (want ≥ %v): %v", client, e.F, took, delay, e)
		return
	}
	require.GreaterOrEqual(t, started, int64(0), "the delay started")
	t.Fatalf("no %s call after the delay started", client)
}
