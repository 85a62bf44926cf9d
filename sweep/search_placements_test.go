package sweep

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/storage"
)

// TestEveryWriteOnlyFenceLosesAnUpdateUnderOnePause: fencing the writes
// alone does not protect a read-modify-write (a paused holder's stale write
// lands between the new holder's read and its write, and the fence lets
// both through). The systematic search of the pause family finds that lost
// update in every design of the default matrix that fences writes only,
// with one pause.
func TestEveryWriteOnlyFenceLosesAnUpdateUnderOnePause(t *testing.T) {
	if testing.Short() {
		t.Skip("searches a cell per write-only fenced design")
	}
	defer TuneGC()()
	rows, err := DesignRows()
	require.NoError(t, err)
	n := 0
	for _, row := range rows {
		if row.Config.Storage != storage.Fenced || row.Config.FenceReads {
			continue
		}
		n++
		t.Run(row.Design, func(t *testing.T) {
			c := defaultSettings(t, row)
			c.Budget = 1
			cell, _, err := SearchCell(c, row, "pause", CellOptions{NoShrink: true})
			require.NoError(t, err)
			require.Equal(t, VerdictCorrupted, cell.Verdict, cell.Evidence.Line)
			pl := cell.Evidence.Placements
			require.NotNil(t, pl)
			f := cell.Findings[0]
			assert.LessOrEqual(t, f.RunsTo, pl.Ran, "found by a placement, not by chance")
			assert.Len(t, f.Faults, 1, "one pause: %v", f.Faults)
			assert.Contains(t, f.Story, "lost update")
			assert.True(t, strings.HasPrefix(cell.Evidence.Line, "data corrupted by pause placed systematically"), cell.Evidence.Line)
			t.Logf("%s: %s\n  %v", row.Flags, f.Story, f.Faults)
		})
	}
	assert.GreaterOrEqual(t, n, 7, "the default matrix's write-only fenced designs")
}
