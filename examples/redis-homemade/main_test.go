package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

func init() { register() }

func verdict(r scenario.Result, check string) models.Result {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v.Result
		}
	}
	return ""
}

// prepare runs the variant of the homemade lock's scenario with the
// servers' record of grants kept.
func run(t *testing.T, test scenario.Test) (scenario.Result, []lockapi.Grant) {
	p, err := harness.Prepare(test)
	require.NoError(t, err)
	p.RecordGrants()
	grants := p.Deployment.Grants
	r, err := p.Run()
	require.NoError(t, err)
	return r, grants.Grants()
}

func variant(t *testing.T, name string) scenario.Test {
	s, err := scenario.Find("homemade")
	require.NoError(t, err)
	v, err := s.FindVariant(name)
	require.NoError(t, err)
	return v.ReproTest()
}

// TestNoFencing: the holder paused past its TTL writes after the next
// holder did; the storage cannot tell (no token). The record shows c2
// granted after c1's TTL ran out: Redis kept its promise, the lock did not.
func TestNoFencing(t *testing.T) {
	r, grants := run(t, variant(t, "gc-pause"))
	assert.Equal(t, models.Invalid, verdict(r, "critical-sections"))
	assert.Contains(t, scenario.ViolationKinds(r.Events), scenario.KindGCPause)
	require.GreaterOrEqual(t, len(grants), 2)
	c1, c2 := grants[0], grants[1]
	assert.Equal(t, "c1", c1.Client)
	assert.LessOrEqual(t, c1.Until, c2.At, "c2 was granted after c1's TTL ran out on the server")
}

// TestReleaseByGetThenDel: client 1's GET sees its own value, its DEL
// arrives after the key expired and client 2 took it, and deletes client
// 2's lock; client 3 takes it while client 2 holds it. The record shows
// the removal of c2's grant by c1.
func TestReleaseByGetThenDel(t *testing.T) {
	r, grants := run(t, variant(t, "slow-release"))
	assert.Equal(t, models.Invalid, verdict(r, "mutual-exclusion"))
	assert.Contains(t, scenario.ViolationKinds(r.Events), scenario.KindNonOwnerRelease)
	removed := false
	for _, g := range grants {
		removed = removed || (g.RemovedBy == "c1" && g.Client != "c1")
	}
	assert.True(t, removed, "the servers' record shows c1 deleting another client's lock: %+v", grants)
}

// TestSetNXThenExpire: a SETNX whose reply was lost (the client cut off)
// is never followed by the PEXPIRE: the key has no TTL and every client
// waits, although nobody holds the lock. The record shows a grant without
// a TTL (Until 0).
func TestSetNXThenExpire(t *testing.T) {
	r, grants := run(t, scenario.Test{System: "homemade", Nemesis: "partition", Seed: 15, Time: time.Minute})
	assert.Equal(t, models.Invalid, verdict(r, "liveness"))
	var orphan bool
	for _, g := range grants {
		orphan = orphan || g.Until == 0
	}
	assert.True(t, orphan, "a grant without a TTL in the servers' record")
}
