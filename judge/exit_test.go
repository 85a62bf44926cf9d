package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/models"
)

// TestExitCodeOfAFencedDesign: a broken lock whose data stayed safe (fenced
// storage: critical-sections and fencing-tokens valid) exits 5, not 1; a
// broken lock without the fencing check, or with a data check invalid or a
// liveness failure beside it, exits as before.
func TestExitCodeOfAFencedDesign(t *testing.T) {
	V, I, U := models.Valid, models.Invalid, models.Unknown
	vd := func(check string, r models.Result) models.Verdict {
		return models.Verdict{Check: check, Result: r, Liveness: check == "liveness"}
	}
	tests := []struct {
		name     string
		verdicts []models.Verdict
		want     int
	}{
		{"all valid", []models.Verdict{vd("critical-sections", V), vd("mutual-exclusion", V)}, ExitValid},
		{"lock broke, data safe", []models.Verdict{vd("critical-sections", V), vd("mutual-exclusion", I), vd("lease", V),
			vd("fencing-tokens", V), vd("liveness", V)}, ExitDataSafe},
		{"lease broke, data safe", []models.Verdict{vd("critical-sections", V), vd("mutual-exclusion", V), vd("lease", I),
			vd("fencing-tokens", V)}, ExitDataSafe},
		{"unfenced: no fencing check", []models.Verdict{vd("critical-sections", V), vd("mutual-exclusion", I)}, ExitInvalid},
		{"data lost", []models.Verdict{vd("critical-sections", I), vd("mutual-exclusion", I), vd("fencing-tokens", V)}, ExitInvalid},
		{"tokens went backwards", []models.Verdict{vd("critical-sections", V), vd("mutual-exclusion", I), vd("fencing-tokens", I)}, ExitInvalid},
		{"data check undecided", []models.Verdict{vd("critical-sections", U), vd("mutual-exclusion", I), vd("fencing-tokens", V)}, ExitInvalid},
		{"and a liveness failure", []models.Verdict{vd("critical-sections", V), vd("mutual-exclusion", I), vd("fencing-tokens", V),
			vd("liveness", I)}, ExitInvalid},
		{"liveness only", []models.Verdict{vd("critical-sections", V), vd("liveness", I)}, ExitUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ExitCode(tc.verdicts))
		})
	}
}
