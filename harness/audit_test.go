package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// TestRaftAuditIsAVerdict: raftkv's own invariants come back as the
// raft-audit verdict. A disk that loses unsynced writes breaks Raft (raft
// itself panics on the lost entries): the node goes down, the audit says
// invalid, and the run does not crash.
func TestRaftAuditIsAVerdict(t *testing.T) {
	for _, tc := range []struct {
		fsync string
		want  models.Result
	}{{"always", models.Valid}, {"interval", models.Invalid}} {
		t.Run(tc.fsync, func(t *testing.T) {
			r, err := Run(scenario.Test{System: "raftkv", Seed: 5, Nemesis: "crash", SystemOptions: map[string]string{"fsync": tc.fsync}})
			require.NoError(t, err)
			v := verdict(r, "raft-audit")
			assert.Equal(t, tc.want, v.Result, v.Reason)
			assert.Contains(t, r.SystemFigures, "elections")
		})
	}
}
