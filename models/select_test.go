package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func names(cs []Check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}

func TestSelect(t *testing.T) {
	// A lock without tokens or leases: fencing-tokens and lease do not apply.
	evs := parseHistory(t, `
		0 p0 c1 invoke acquire k
		1 p0 c1 ok     acquire k owner=a
		2 p0 c1 invoke read k
		3 p0 c1 ok     read k value=0`)
	cfg := Config{}
	tests := []struct {
		name    string
		names   []string
		ran     []string
		skipped int
	}{
		{"defaults: what applies", nil, []string{"critical-sections", "mutual-exclusion", "mutex", "liveness"}, 3},
		{"exact names, in the order given", []string{"liveness", "fencing-tokens"}, []string{"liveness", "fencing-tokens"}, 0},
		{"+name adds to the defaults", []string{"+fencing-tokens"},
			[]string{"critical-sections", "mutual-exclusion", "mutex", "fencing-tokens", "liveness"}, 2},
		{"exact plus extra", []string{"mutex", "+lease"}, []string{"mutex", "lease"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs, skipped, err := cfg.Select(tc.names, evs)
			require.NoError(t, err)
			assert.Equal(t, tc.ran, names(cs))
			assert.Len(t, skipped, tc.skipped)
		})
	}
	_, _, err := cfg.Select([]string{"+vibes"}, evs)
	assert.ErrorContains(t, err, `unknown check "vibes"`)
}
