package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/shrink"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// The tests run the lock registered as main.go registers it, and check each
// of its three mistakes against the servers' record of grants.
func init() { register() }

// TestNoFencing: the holder paused past its TTL writes after the next
// holder did; the storage cannot tell (no token). The record shows c2
// granted after c1's TTL ran out: Redis kept its promise, the lock did not.
func TestNoFencing(t *testing.T) {
	r := userlocktest.Variant(t, "homemade", "gc-pause")
	assert.Equal(t, models.Invalid, r.Verdict("critical-sections"))
	assert.Contains(t, r.Kinds(), scenario.KindGCPause)
	require.GreaterOrEqual(t, len(r.Grants), 2)
	c1, c2 := r.Grants[0], r.Grants[1]
	assert.Equal(t, "c1", c1.Client)
	assert.LessOrEqual(t, c1.Until, c2.At, "c2 was granted after c1's TTL ran out on the server")
}

// TestReleaseByGetThenDel: client 1's GET sees its own value, its DEL
// arrives after the key expired and client 2 took it, and deletes client
// 2's lock; client 3 takes it while client 2 holds it. The record shows
// the removal of c2's grant by c1.
func TestReleaseByGetThenDel(t *testing.T) {
	r := userlocktest.Variant(t, "homemade", "slow-release")
	assert.Equal(t, models.Invalid, r.Verdict("mutual-exclusion"))
	assert.Contains(t, r.Kinds(), scenario.KindNonOwnerRelease)
	removed := false
	for _, g := range r.Grants {
		removed = removed || (g.RemovedBy == "c1" && g.Client != "c1")
	}
	assert.True(t, removed, "the servers' record shows c1 deleting another client's lock: %+v", r.Grants)
}

// TestSetNXThenExpire: a SETNX whose reply was lost (the client cut off)
// is never followed by the PEXPIRE: the key has no TTL and every client
// waits, although nobody holds the lock. The record shows a grant without
// a TTL (Until 0).
func TestSetNXThenExpire(t *testing.T) {
	r := userlocktest.Test(t, scenario.Test{System: "homemade", Nemesis: "partition", Seed: 15, Time: time.Minute})
	assert.Equal(t, models.Invalid, r.Verdict("liveness"))
	var orphan bool
	for _, g := range r.Grants {
		orphan = orphan || g.Until == 0
	}
	assert.True(t, orphan, "a grant without a TTL in the servers' record")
}

// TestSlowReleaseFindingShrinks: the first finding of the slow-release hunt
// (seed 383: 12 random faults) shrinks to at most 3 faults that still show
// a release by a client that no longer held the lock, and its story tells
// that release (the GET, then the DEL that deleted the next holder's lock),
// not a clock jump or a pause that merely moved the clients there.
func TestSlowReleaseFindingShrinks(t *testing.T) {
	h, err := harness.FindHunt("homemade/slow-release")
	require.NoError(t, err)
	tc, err := h.Test(383)
	require.NoError(t, err)
	target := shrink.Target{Check: "critical-sections", Kind: scenario.KindNonOwnerRelease}
	o, err := shrink.Shrink(tc, shrink.Options{Target: &target})
	require.NoError(t, err)
	assert.Equal(t, 12, o.FaultsBefore)
	assert.LessOrEqual(t, o.FaultsAfter, 3, "%+v", o.Minimal.Schedule.Faults)
	story := strings.Join(scenario.StoryOf(o.Result, target.Kind), "\n")
	assert.Contains(t, story, `The cause: c3 released "k" at 11.203s although it no longer held it`)
	assert.Contains(t, story, "deleted the lock c2 held by the time its delete arrived. c1 was then granted the lock while c2 still held it.")
}
