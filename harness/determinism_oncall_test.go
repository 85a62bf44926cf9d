package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/scenario"
)

// TestDeterminismOfTheOnCallWorkload: the on-call workload under random
// faults, on Redis and on the database (rows in the database, pair
// versions), gives byte-identical histories for the same seed and different
// ones for another seed.
func TestDeterminismOfTheOnCallWorkload(t *testing.T) {
	for _, tc := range []scenario.Test{
		{System: "redis", Workload: "oncall", Clients: 3, Time: 20 * time.Second, Nemesis: "random"},
		{System: "database", Workload: "oncall", Clients: 3, Time: 20 * time.Second, Nemesis: "random",
			SystemOptions: map[string]string{"mode": "optimistic", "versions": "pair"}},
	} {
		t.Run(tc.System, func(t *testing.T) {
			a, b, c := tc, tc, tc
			a.Seed, b.Seed, c.Seed = 7, 7, 8
			ha, hb, hc := historyBytes(t, run(t, a)), historyBytes(t, run(t, b)), historyBytes(t, run(t, c))
			require.Greater(t, bytes.Count(ha, []byte("oncall/d")), 10)
			assert.True(t, bytes.Equal(ha, hb), "the same seed must give a byte-identical history")
			assert.False(t, bytes.Equal(ha, hc), "another seed must give another history")
		})
	}
}
