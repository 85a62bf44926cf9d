package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/nemesis"
)

// everyFaultDatabase exercises every fault primitive on the database.
var everyFaultDatabase = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(8 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "read"}},
	{Kind: nemesis.Partition, Targets: []string{"db"}, At: nemesis.Duration(10 * time.Second), Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Delay, From: []string{"c2"}, To: []string{"db"}, At: nemesis.Duration(13 * time.Second), Amount: nemesis.Duration(time.Second), Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.ClockJump, Targets: []string{"c3"}, At: nemesis.Duration(16 * time.Second), Amount: nemesis.Duration(20 * time.Second)},
	{Kind: nemesis.ClockDrift, Targets: []string{"db"}, At: nemesis.Duration(18 * time.Second), Drift: 0.3, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Crash, Targets: []string{"db"}, At: nemesis.Duration(24 * time.Second), Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.Crash, Targets: []string{"c4"}, At: nemesis.Duration(27 * time.Second), Duration: nemesis.Duration(time.Second)},
}}

// TestDeterminismOfTheDatabase: every mode under every fault primitive, and
// under random faults, gives byte-identical histories for the same seed and
// different ones for another seed.
func TestDeterminismOfTheDatabase(t *testing.T) {
	for _, mode := range []string{"unique-row", "for-update", "advisory", "optimistic"} {
		for _, nem := range []string{"every fault", "random"} {
			t.Run(mode+", "+nem, func(t *testing.T) {
				tc := Test{System: "database", Time: 35 * time.Second, SystemOptions: map[string]string{"mode": mode, "resource": "db"}}
				if nem == "random" {
					tc.Nemesis = "random"
				} else {
					tc.Schedule = &everyFaultDatabase
				}
				a, b, c := tc, tc, tc
				a.Seed, b.Seed, c.Seed = 7, 7, 8
				ha, hb, hc := historyBytes(t, run(t, a)), historyBytes(t, run(t, b)), historyBytes(t, run(t, c))
				require.Greater(t, bytes.Count(ha, []byte("\n")), 10)
				assert.True(t, bytes.Equal(ha, hb), "the same seed must give a byte-identical history")
				assert.False(t, bytes.Equal(ha, hc), "another seed must give another history")
			})
		}
	}
	r := run(t, Test{System: "database", Time: 35 * time.Second, Schedule: &everyFaultDatabase, Seed: 7})
	for _, k := range nemesis.Kinds {
		assert.Positive(t, r.Summary.Faults[string(k)], "fault %s never started", k)
	}
}
