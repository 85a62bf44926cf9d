package kubernetes_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/scenario"
)

// TestAReleaseWithAnOldObservationIsARemovalInTheRecord: in
// kubernetes-release-on-cancel/unsafe, c1's ReleaseOnCancel clears the
// Lease c2 holds; the API servers' record shows it as c2's lock removed by
// c1 (a broken promise), and the fixed variant's record shows no breach.
func TestAReleaseWithAnOldObservationIsARemovalInTheRecord(t *testing.T) {
	tests := []struct {
		variant string
		removal bool
	}{
		{"unsafe", true},
		{"fixed", false},
	}
	for _, tc := range tests {
		t.Run(tc.variant, func(t *testing.T) {
			s, err := scenario.Find("kubernetes-release-on-cancel")
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			p, err := harness.Prepare(v.Test)
			require.NoError(t, err)
			p.RecordGrants()
			_, err = p.Run()
			require.NoError(t, err)
			breaches := p.Deployment.Grants.Breaches()
			if !tc.removal {
				assert.Empty(t, breaches)
				return
			}
			require.NotEmpty(t, breaches)
			b := breaches[0]
			assert.True(t, b.Removal, "a removal, not an overlap: %v", b)
			assert.Regexp(t, "^c2_", b.Held.Owner)
			assert.Equal(t, "c1", b.Other.Client, "removed by c1: %v", b)
		})
	}
}
