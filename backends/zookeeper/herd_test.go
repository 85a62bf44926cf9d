package zookeeper

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/scenario"
)

// TestHerdCurves: messages per acquisition at 5, 10, 20 and 40 waiters. With
// herd every release wakes every waiter, so the cost grows with the waiters;
// watching only the predecessor keeps it flat.
func TestHerdCurves(t *testing.T) {
	waiters := []int{5, 10, 20, 40}
	curve := func(herd bool) []float64 {
		var out []float64
		for _, n := range waiters {
			r, err := harness.Run(zkHerdTest(n, herd))
			require.NoError(t, err)
			require.Positive(t, r.Summary.Ops["acquire"].OK)
			out = append(out, scenario.MessagesPerAcquisition(r))
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
