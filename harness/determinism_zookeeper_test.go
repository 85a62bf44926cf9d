package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/nemesis"
)

// everyFaultZooKeeper exercises every fault primitive on an ensemble, its
// roles (leader, followers, the server a client is connected to) included.
var everyFaultZooKeeper = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(12 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "read"}},
	{Kind: nemesis.Partition, Targets: []string{"leader"}, At: nemesis.Duration(3 * time.Second), Duration: nemesis.Duration(4 * time.Second)},
	{Kind: nemesis.Crash, Targets: []string{"server-of:c2"}, At: nemesis.Duration(9 * time.Second), Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Pause, Targets: []string{"leader"}, At: nemesis.Duration(13 * time.Second), Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.ClockJump, Targets: []string{"followers"}, At: nemesis.Duration(17 * time.Second), Amount: nemesis.Duration(20 * time.Second)},
	{Kind: nemesis.ClockDrift, Targets: []string{"leader"}, At: nemesis.Duration(19 * time.Second), Drift: 0.3, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Delay, From: []string{"c3"}, To: []string{"storage"}, At: nemesis.Duration(22 * time.Second), Amount: nemesis.Duration(3 * time.Second), Duration: nemesis.Duration(4 * time.Second)},
	{Kind: nemesis.Partition, Groups: [][]string{{"c4", "server-of:c4"}, {"servers-but:c4"}}, At: nemesis.Duration(27 * time.Second), Duration: nemesis.Duration(12 * time.Second)},
}}

// TestDeterminismOfZooKeeper: an ensemble under every fault primitive (each
// kind alone is the conformance suite's job) and under random faults gives
// byte-identical histories for the same seed and different ones for another.
func TestDeterminismOfZooKeeper(t *testing.T) {
	tests := []struct {
		name string
		test Test
	}{
		{"every fault", Test{System: "zookeeper", Time: 45 * time.Second, Schedule: &everyFaultZooKeeper}},
		{"random faults, 5 servers", Test{System: "zookeeper", Time: 40 * time.Second, Nemesis: "random",
			SystemOptions: map[string]string{"servers": "5", "herd": "true", "token": "sequence"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := tc.test, tc.test, tc.test
			a.Seed, b.Seed, c.Seed = 7, 7, 8
			ha, hb, hc := historyBytes(t, run(t, a)), historyBytes(t, run(t, b)), historyBytes(t, run(t, c))
			require.Greater(t, bytes.Count(ha, []byte("\n")), 100)
			assert.True(t, bytes.Equal(ha, hb), "the same seed must give a byte-identical history")
			assert.False(t, bytes.Equal(ha, hc), "another seed must give another history")
		})
	}
	r := run(t, Test{System: "zookeeper", Time: 45 * time.Second, Schedule: &everyFaultZooKeeper, Seed: 7})
	for _, k := range nemesis.Kinds {
		assert.Positive(t, r.Summary.Faults[string(k)], "fault %s never started", k)
	}
	for _, o := range r.FaultOutcomes {
		assert.True(t, o.Fired, "fault %d did not fire: %s", o.Fault, o.DidNotFire)
	}
	assert.Positive(t, r.Summary.Faults["session-expired"], "c4 cut off with its server for longer than the session timeout")
}
