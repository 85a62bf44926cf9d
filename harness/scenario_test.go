package harness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// TestCatalog runs every variant of every scenario and asserts its
// expectations: each scenario is a Go test, in its unsafe and its fixed form.
func TestCatalog(t *testing.T) {
	cat := scenario.Catalog()
	require.NotEmpty(t, cat)
	for _, s := range cat {
		t.Run(s.Name, func(t *testing.T) {
			require.NotEmpty(t, s.Variants)
			require.NotEmpty(t, s.Doc)
			for _, v := range s.Variants {
				t.Run(v.Name, func(t *testing.T) {
					t.Parallel()
					out, err := Repro(v)
					require.NoError(t, err)
					assert.True(t, out.Match(), "mismatches:\n%s", strings.Join(out.Mismatches, "\n"))
				})
			}
		})
	}
}

func TestCatalogNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenario.Catalog() {
		assert.False(t, seen[s.Name], "duplicate scenario %s", s.Name)
		seen[s.Name] = true
		vs := map[string]bool{}
		for _, v := range s.Variants {
			assert.False(t, vs[v.Name], "%s: duplicate variant %s", s.Name, v.Name)
			vs[v.Name] = true
		}
	}
}

func TestReproReportsMismatches(t *testing.T) {
	s, err := scenario.Find("baseline-redis")
	require.NoError(t, err)
	v, err := s.FindVariant("")
	require.NoError(t, err)
	v.Expect = map[string]models.Result{"mutual-exclusion": models.Invalid, "fencing-tokens": models.Valid}
	out, err := Repro(v)
	require.NoError(t, err)
	assert.False(t, out.Match())
	assert.Len(t, out.Mismatches, 2, "a wrong expectation, and a check that cannot decide (no tokens) is not valid")
	v.Expect = map[string]models.Result{"no-such-check": models.Valid}
	_, err = Repro(v)
	assert.ErrorContains(t, err, `unknown check "no-such-check"`)
	_, err = scenario.Find("nope")
	assert.ErrorContains(t, err, `unknown scenario "nope"`)
	_, err = scenario.Find("kleppman-gc-pause")
	assert.EqualError(t, err, `unknown scenario "kleppman-gc-pause" — did you mean "kleppmann-gc-pause"?`)
	_, err = s.FindVariant("weird")
	assert.ErrorContains(t, err, `no variant "weird"`)
}
