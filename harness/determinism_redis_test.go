package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/nemesis"
)

// everyFaultReplicated exercises every fault primitive, named roles included,
// on a primary with two replicas and the monitor.
var everyFaultReplicated = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Delay, From: []string{"redis"}, To: []string{"replicas"}, Amount: nemesis.Duration(5 * time.Millisecond)},
	{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(12 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "read"}},
	{Kind: nemesis.Partition, Targets: []string{"primary"}, At: nemesis.Duration(3 * time.Second), Duration: nemesis.Duration(4 * time.Second)},
	{Kind: nemesis.Pause, Targets: []string{"primary"}, At: nemesis.Duration(12 * time.Second), Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.ClockJump, Targets: []string{"replicas"}, At: nemesis.Duration(16 * time.Second), Amount: nemesis.Duration(20 * time.Second)},
	{Kind: nemesis.ClockDrift, Targets: []string{"sentinel"}, At: nemesis.Duration(18 * time.Second), Drift: 0.3, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Crash, Targets: []string{"primary"}, At: nemesis.Duration(22 * time.Second), Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.Partition, Groups: [][]string{{"redis", "c2"}, {"replica1", "replica2", "sentinel"}}, At: nemesis.Duration(30 * time.Second), Duration: nemesis.Duration(3 * time.Second)},
}}

// everyFaultRedlock exercises every fault primitive on Redlock's instances.
var everyFaultRedlock = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"redis-d", "redis-e"}, Duration: nemesis.Duration(10 * time.Second)},
	{Kind: nemesis.ClockJump, Targets: []string{"redis-c"}, Amount: nemesis.Duration(20 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "acquire"}},
	{Kind: nemesis.Pause, Targets: []string{"c2"}, Duration: nemesis.Duration(12 * time.Second), After: &nemesis.Trigger{Node: "c2", F: "acquire", Type: "invoke", Nth: 3, Delay: 100_000}},
	{Kind: nemesis.Crash, Targets: []string{"redis-a"}, At: nemesis.Duration(14 * time.Second), Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.ClockDrift, Targets: []string{"redis-b"}, At: nemesis.Duration(16 * time.Second), Drift: 0.5, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Delay, From: []string{"c3"}, To: []string{"storage"}, At: nemesis.Duration(20 * time.Second), Amount: nemesis.Duration(3 * time.Second), Duration: nemesis.Duration(4 * time.Second)},
	{Kind: nemesis.Partition, Targets: []string{"instances"}, At: nemesis.Duration(26 * time.Second), Duration: nemesis.Duration(2 * time.Second)},
}}

// TestDeterminismOfTheRedisFamily: replicated Redis and Redlock, under every
// fault primitive and under random faults, give byte-identical histories for
// the same seed and different ones for another seed.
func TestDeterminismOfTheRedisFamily(t *testing.T) {
	replicated := map[string]string{"replicas": "2", "wait": "1", "down-after": "2s", "persistence": "everysec"}
	tests := []struct {
		name string
		test Test
	}{
		{"replicated redis, every fault", Test{System: "redis", Time: 40 * time.Second, Schedule: &everyFaultReplicated, SystemOptions: replicated}},
		{"replicated redis, random faults", Test{System: "redis", Time: 40 * time.Second, Nemesis: "random", SystemOptions: map[string]string{"replicas": "2"}}},
		{"redlock, every fault", Test{System: "redlock", Time: 40 * time.Second, Schedule: &everyFaultRedlock,
			SystemOptions: map[string]string{"token": "incr", "restart-delay": "2s"}}},
		{"redlock, random faults", Test{System: "redlock", Time: 40 * time.Second, Nemesis: "random",
			SystemOptions: map[string]string{"fanout": "sequential", "elapsed-clock": "wall"}}},
		{"stock", Test{System: "redis", Workload: "stock", Time: 20 * time.Second, Nemesis: "pause"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := tc.test, tc.test, tc.test
			a.Seed, b.Seed, c.Seed = 7, 7, 8
			ha, hb, hc := historyBytes(t, run(t, a)), historyBytes(t, run(t, b)), historyBytes(t, run(t, c))
			require.Greater(t, bytes.Count(ha, []byte("\n")), 10)
			assert.True(t, bytes.Equal(ha, hb), "the same seed must give a byte-identical history")
			assert.False(t, bytes.Equal(ha, hc), "another seed must give another history")
		})
	}
	// The schedules' faults all happened, and the replicated one failed over.
	r := run(t, Test{System: "redis", Time: 40 * time.Second, Schedule: &everyFaultReplicated, SystemOptions: replicated, Seed: 7})
	for _, k := range nemesis.Kinds {
		assert.Positive(t, r.Summary.Faults[string(k)], "fault %s never started", k)
	}
	assert.Positive(t, r.Summary.Faults["failover"])
	r = run(t, Test{System: "redlock", Time: 40 * time.Second, Schedule: &everyFaultRedlock, Seed: 7})
	for _, k := range nemesis.Kinds {
		assert.Positive(t, r.Summary.Faults[string(k)], "fault %s never started", k)
	}
}
