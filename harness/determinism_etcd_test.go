package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/nemesis"
)

// everyFaultEtcd exercises every fault primitive on an etcd cluster, its
// roles included.
var everyFaultEtcd = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(12 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "read"}},
	{Kind: nemesis.Partition, Targets: []string{"leader"}, At: nemesis.Duration(3 * time.Second), Duration: nemesis.Duration(4 * time.Second)},
	{Kind: nemesis.Delay, From: []string{"c2"}, To: []string{"servers"}, At: nemesis.Duration(8 * time.Second), Amount: nemesis.Duration(2 * time.Second),
		Match: "etcd.KeepAlive", Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.Pause, Targets: []string{"leader"}, At: nemesis.Duration(12 * time.Second), Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.ClockJump, Targets: []string{"followers"}, At: nemesis.Duration(16 * time.Second), Amount: nemesis.Duration(20 * time.Second)},
	{Kind: nemesis.ClockDrift, Targets: []string{"etcd2"}, At: nemesis.Duration(18 * time.Second), Drift: 0.3, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Crash, Targets: []string{"leader"}, At: nemesis.Duration(22 * time.Second), Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Crash, Targets: []string{"c3"}, At: nemesis.Duration(26 * time.Second), Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Partition, Groups: [][]string{{"etcd1", "c2"}, {"etcd2", "etcd3"}}, At: nemesis.Duration(30 * time.Second), Duration: nemesis.Duration(3 * time.Second)},
}}

// TestDeterminismOfEtcd: etcd under every fault primitive, under random
// faults, with each lock and with the guarded write, gives byte-identical
// histories for the same seed and different ones for another seed.
func TestDeterminismOfEtcd(t *testing.T) {
	tests := []struct {
		name string
		test Test
	}{
		{"mutex, every fault", Test{System: "etcd", Time: 40 * time.Second, Schedule: &everyFaultEtcd}},
		{"txn lock and the guarded write, every fault", Test{System: "etcd", Time: 40 * time.Second, Schedule: &everyFaultEtcd,
			SystemOptions: map[string]string{"lock": "txn", "resource": "etcd", "leader-change-extends": "false"}}},
		{"5 members, random faults", Test{System: "etcd", Time: 40 * time.Second, Nemesis: "random",
			SystemOptions: map[string]string{"members": "5", "reads": "serializable", "unlock": "guarded", "unlock-retry": "1s"}}},
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
	r := run(t, Test{System: "etcd", Time: 40 * time.Second, Schedule: &everyFaultEtcd, Seed: 7})
	for _, k := range nemesis.Kinds {
		assert.Positive(t, r.Summary.Faults[string(k)], "fault %s never started", k)
	}
	for _, o := range r.FaultOutcomes {
		assert.True(t, o.Fired, "faults[%d] (%s): %s", o.Fault, o.Kind, o.DidNotFire)
	}
}
