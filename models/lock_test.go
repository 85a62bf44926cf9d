package models

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeaseExplanationNamesTheGrant: when a grant breaks the contract, the
// explanation names that grant, and no release is blamed for a lock it did
// not release (issue 10, item 3).
func TestLeaseExplanationNamesTheGrant(t *testing.T) {
	tests := []struct {
		fixture   string
		short     string   // the verdict's reason names this grant
		blameless []string // no explanation line blames these releases
	}{
		{"lease-grant-breaks-contract", "c5 was granted the lock while c2 held it and its lease had not run out",
			[]string{"c5's release", "c2's release", "released c2's lock"}},
		{"lease-granted-early", "c2 was granted the lock while c1 held it and its lease had not run out",
			[]string{"c1's release", "c2's release"}},
		{"lease-concurrent-grants", "c3 and c4 were both granted the lock, each before the other's lease could have run out",
			[]string{"c4's release", "released c3's lock"}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			fx := loadFixture(t, "testdata/histories/"+tc.fixture+".txtar")
			v := Run(LockService{Leases: true}, fx.events)
			require.Equal(t, Invalid, v.Result, v.Reason)
			assert.Contains(t, v.Reason, tc.short)
			require.NotNil(t, v.Counterexample)
			text := strings.Join(v.Counterexample.Explanation, "\n")
			assert.Contains(t, text, "broke the contract")
			for _, b := range tc.blameless {
				assert.NotContains(t, v.Reason+"\n"+text, b)
			}
		})
	}
}
