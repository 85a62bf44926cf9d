package harness

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
)

// TestHerdCurves: messages per acquisition at 5, 10, 20 and 40 waiters. With
// herd every release wakes every waiter, so the cost grows with the waiters;
// watching only the predecessor keeps it flat.
func TestHerdCurves(t *testing.T) {
	waiters := []int{5, 10, 20, 40}
	curve := func(herd bool) []float64 {
		var out []float64
		for _, n := range waiters {
			r := run(t, zkHerdTest(n, herd))
			require.Positive(t, r.Summary.Ops["acquire"].OK)
			out = append(out, MessagesPerAcquisition(r))
		}
		return out
	}
	herd, pred := curve(true), curve(false)
	t.Logf("waiters:             %v", waiters)
	t.Logf("herd:                %.1f", herd)
	t.Logf("predecessor watch:   %.1f", pred)
	for i := range waiters {
		assert.Greater(t, herd[i], pred[i], "%d waiters: the herd costs more", waiters[i])
	}
	assert.Greater(t, herd[3]/herd[0], 3.0, "the herd grows with the waiters")
	assert.Less(t, pred[3]/pred[0], 1.5, "the predecessor watch stays flat")
}

// BenchmarkZooKeeperRun60s is one 60-second simulated run of a 3-server
// ensemble with 5 clients and random faults (swarm), checks included; sim-x
// is simulated time over wall time.
func BenchmarkZooKeeperRun60s(b *testing.B) {
	var simulated time.Duration
	for i := range b.N {
		r, err := Run(Test{System: "zookeeper", Seed: uint64(i), Nemesis: "random"})
		if err != nil {
			b.Fatal(err)
		}
		simulated += r.Test.Time
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-x")
}

// TestZooKeeperFencedSweep runs LOCKLAB_ZK_SWEEP seeds (default: skipped) of
// zookeeper with random faults, fenced storage and czxid tokens: critical
// sections and fencing must be valid on every seed.
func TestZooKeeperFencedSweep(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LOCKLAB_ZK_SWEEP"))
	if n <= 0 {
		t.Skip("set LOCKLAB_ZK_SWEEP=500 to run the sweep")
	}
	bad := 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r, err := Run(Test{System: "zookeeper", Seed: seed, Nemesis: "random", Storage: "fenced",
			SystemOptions: map[string]string{"token": "czxid"}})
		require.NoError(t, err)
		for _, c := range []string{"critical-sections", "fencing-tokens"} {
			if v := verdict(r, c); v.Result != models.Valid {
				bad++
				t.Errorf("seed %d: %s %s: %s", seed, c, v.Result, v.Reason)
			}
		}
	}
	t.Logf("%d seeds, %d verdicts not valid", n, bad)
}
