package harness

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

// TestEveryOptionTableIsConsistent: each system and workload declares its
// options in one table whose defaults parse and read back as documented, and
// the table is what the registry builds the system or workload from.
func TestEveryOptionTableIsConsistent(t *testing.T) {
	specs := map[string]opt.Spec{}
	for _, s := range system.All() {
		require.NotNil(t, s.Options, "system %s has no option table", s.Name)
		specs["system "+s.Name] = s.Options
	}
	for _, w := range workloads.All() {
		require.NotNil(t, w.Options, "workload %s has no option table", w.Name)
		specs["workload "+w.Name] = w.Options
	}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		t.Run(name, func(t *testing.T) {
			spec := specs[name]
			assert.NoError(t, spec.Check())
			eff, err := spec.Effective(nil)
			require.NoError(t, err)
			for i, d := range spec.Docs() {
				assert.Equal(t, opt.Setting{Name: d.Name, Value: d.Default}, eff[i])
			}
			_, err = spec.Effective(map[string]string{"no-such-option": "1"})
			assert.ErrorContains(t, err, `no option "no-such-option"`)
		})
	}
}

// TestRegistriesAcceptEveryDeclaredOption: every option a table declares is
// accepted by the system's Deploy or the workload's New with its default,
// and an unknown one is refused with the list of valid names.
func TestRegistriesAcceptEveryDeclaredOption(t *testing.T) {
	for _, s := range system.All() {
		t.Run("system "+s.Name, func(t *testing.T) {
			defaults := map[string]string{}
			for _, d := range s.Options.Docs() {
				defaults[d.Name] = d.Default
			}
			_, err := s.Deploy(sim.NewWorld(sim.Config{Seed: 1}), defaults)
			require.NoError(t, err)
			_, err = s.Deploy(sim.NewWorld(sim.Config{Seed: 1}), map[string]string{"colour": "red"})
			assert.ErrorContains(t, err, s.Name+` has no option "colour"`)
		})
	}
	for _, w := range workloads.All() {
		t.Run("workload "+w.Name, func(t *testing.T) {
			defaults := map[string]string{}
			for _, d := range w.Options.Docs() {
				defaults[d.Name] = d.Default
			}
			_, err := w.New(defaults)
			require.NoError(t, err)
			_, err = w.New(map[string]string{"colour": "red"})
			assert.ErrorContains(t, err, w.Name+` has no option "colour" (options: `)
		})
	}
}
