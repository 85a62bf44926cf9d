package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

func init() { register() }

// expect runs a staged variant of the lock's scenario and checks the
// verdicts the example's documentation states.
func expect(t *testing.T, system, variant string, want map[string]models.Result) {
	t.Helper()
	s, err := scenario.Find(system)
	require.NoError(t, err)
	v, err := s.FindVariant(variant)
	require.NoError(t, err)
	p, err := harness.Prepare(v.ReproTest())
	require.NoError(t, err)
	p.RecordGrants()
	grants := p.Deployment.Grants
	r, err := p.Run()
	require.NoError(t, err)
	for check, res := range want {
		got := models.Result("")
		for _, v := range r.Verdicts {
			if v.Check == check {
				got = v.Result
			}
		}
		assert.Equal(t, res, got, "%s/%s: %s", system, variant, check)
	}
	assert.NotEmpty(t, grants.Grants(), "the servers recorded their grants")
	if want["mutual-exclusion"] == models.Invalid || want["critical-sections"] == models.Invalid {
		assert.NotEmpty(t, scenario.ViolationKinds(r.Events), "the violation is classified")
	}
}

// TestTheSessionExpiry: the paused holder's session expires, the next
// child holds, the paused client's write lands unfenced and is refused
// fenced.
func TestTheSessionExpiry(t *testing.T) {
	I, V := models.Invalid, models.Valid
	expect(t, "zk-raw", "gc-pause", map[string]models.Result{"critical-sections": I, "mutual-exclusion": I})
	expect(t, "zk-raw", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
	expect(t, "zk-raw", "slow-release", map[string]models.Result{"mutual-exclusion": V, "critical-sections": V})
}
