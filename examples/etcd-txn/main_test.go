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

// TestThePlainDeleteAndItsFix: the plain Delete deletes the next holder's
// key under the slow release; the guarded release does not; fenced storage
// keeps the data under the pause.
func TestThePlainDeleteAndItsFix(t *testing.T) {
	I, V := models.Invalid, models.Valid
	expect(t, "etcd-txn", "slow-release", map[string]models.Result{"mutual-exclusion": I, "lease": I})
	expect(t, "etcd-txn-guarded", "slow-release", map[string]models.Result{"mutual-exclusion": V, "critical-sections": V})
	expect(t, "etcd-txn", "gc-pause", map[string]models.Result{"critical-sections": I})
	expect(t, "etcd-txn", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
}
