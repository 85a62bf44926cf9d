package userlock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/sweep"
)

// TestTheMatrixSearchFindsTheLostUpdateOfAUserLockThatFencesWritesOnly: a
// user's lock that declares fencing tokens, over storage that fences writes
// alone, loses an update under one pause that ends between the new
// holder's read and its write; the systematic search of the pause family
// places that pause, as it does for every built-in design.
func TestTheMatrixSearchFindsTheLostUpdateOfAUserLockThatFencesWritesOnly(t *testing.T) {
	registerRedis(t, fixedRedisLock)
	p, err := sweep.FindMatrixPreset("matrix")
	require.NoError(t, err)
	row := sweep.NewSearchedRow("a user's Redis lock with tokens", sweep.Config{System: fixedRedisLock.Name, Storage: storage.Fenced}, "")
	c := sweep.SearchConfig{Preset: p.Name, Rows: []sweep.SearchedRow{row}, Columns: sweep.SearchColumns(), Budget: 1,
		Time: sweep.Duration(p.Time), Clients: p.Clients, CostRuns: p.CostRuns, ShrinkRuns: p.ShrinkRuns}
	cell, _, err := sweep.SearchCell(c, row, "pause", sweep.CellOptions{})
	require.NoError(t, err)
	require.Equal(t, sweep.VerdictCorrupted, cell.Verdict, cell.Evidence.Line)
	require.NotNil(t, cell.Evidence.Placements)
	f := cell.Findings[0]
	assert.LessOrEqual(t, f.RunsTo, cell.Evidence.Placements.Ran, "found by a placement")
	assert.Len(t, f.Faults, 1, "one pause: %v", f.Faults)
	assert.Contains(t, f.Story, "lost update")
	assert.Contains(t, f.Story, "the fence let both writes through")
	t.Logf("%s\n  %v\n  %s", f.Story, f.Faults, f.Replay)
}
