package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCatalogOrdersFamiliesByTheRegistry: a scenario several systems add
// variants to starts with its home's variants (the family that gives its
// Doc), then the others' in the order of the system registry (by name; one
// system's in the order it registered them), whatever order the packages
// registered in.
func TestCatalogOrdersFamiliesByTheRegistry(t *testing.T) {
	family := func(name, doc string, variants ...string) func() []Scenario {
		return func() []Scenario {
			s := Scenario{Name: name, Doc: doc}
			for _, v := range variants {
				s.Variants = append(s.Variants, Variant{Name: v})
			}
			return []Scenario{s}
		}
	}
	type reg struct {
		system string
		fn     func() []Scenario
	}
	tests := []struct {
		name      string
		regs      []reg
		wantDoc   string
		wantNames []string
	}{
		{"home first, then by system name", []reg{
			{"zeta", family("shared", "", "zeta-unsafe")},
			{"mid", family("shared", "the story", "mid-unsafe", "mid-fixed")},
			{"alpha", family("shared", "", "alpha-unsafe")},
		}, "the story", []string{"mid-unsafe", "mid-fixed", "alpha-unsafe", "zeta-unsafe"}},
		{"one system's families in registration order", []reg{
			{"beta", family("shared", "", "beta-second")},
			{"alpha", family("shared", "", "alpha-unsafe")},
			{"beta", family("shared", "", "beta-third")},
		}, "", []string{"alpha-unsafe", "beta-second", "beta-third"}},
		{"two docs: the first in registry order is home", []reg{
			{"b", family("shared", "b's", "b-unsafe")},
			{"a", family("shared", "a's", "a-unsafe")},
		}, "a's", []string{"a-unsafe", "b-unsafe"}},
	}
	saved := families
	t.Cleanup(func() { families = saved })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			families = nil
			for _, r := range tc.regs {
				Register(r.system, r.fn)
			}
			cat := Catalog()
			require.Len(t, cat, 1)
			assert.Equal(t, tc.wantDoc, cat[0].Doc)
			var names []string
			for _, v := range cat[0].Variants {
				names = append(names, v.Name)
			}
			assert.Equal(t, tc.wantNames, names)
		})
	}
}

// TestRegisterRefusesAFamilyWithoutItsSystem: the catalog orders families
// by their system; one without it is a programming error.
func TestRegisterRefusesAFamilyWithoutItsSystem(t *testing.T) {
	saved := families
	t.Cleanup(func() { families = saved })
	assert.PanicsWithValue(t, "scenario.Register: a family of scenarios without its system's name", func() {
		Register("", func() []Scenario { return nil })
	})
}
