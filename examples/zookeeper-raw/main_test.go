package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// The tests run the lock registered as main.go registers it, and check the
// verdicts the example's documentation states (userlocktest.Expect also
// wants each violation classified and backed by the servers' record).
func init() { register() }

// TestTheSessionExpiry: the paused holder's session expires, the next
// child holds, the paused client's write lands unfenced and is refused
// fenced.
func TestTheSessionExpiry(t *testing.T) {
	I, V := models.Invalid, models.Valid
	userlocktest.Expect(t, "zk-raw", "gc-pause", map[string]models.Result{"critical-sections": I, "mutual-exclusion": I})
	userlocktest.Expect(t, "zk-raw", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
	userlocktest.Expect(t, "zk-raw", "slow-release", map[string]models.Result{"mutual-exclusion": V, "critical-sections": V})
}

// TestAReleaseLostToACrash: the server c2 is connected to crashes while c2
// holds the lock; c2's Delete goes unanswered, its Release returns an
// unknown outcome, and the lock never deletes its node again. c2's session
// lives on (it reconnects and pings), so its node stays the lowest child
// and every later waiter waits behind it: liveness fails. The servers'
// record shows c2's node granted and never released, its session's lease
// running past the end of the run. (Curator deletes its node with
// guaranteed(): retried in the background until it succeeds.)
func TestAReleaseLostToACrash(t *testing.T) {
	end := 19800 * time.Millisecond
	r := userlocktest.Test(t, scenario.Test{System: "zk-raw", Clients: 2, Time: end, Seed: 642331128,
		Storage: storage.Fenced, Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{{
			Kind: nemesis.Crash, Targets: []string{"zk1"}, Duration: nemesis.Duration(time.Millisecond),
			At: nemesis.Duration(7800 * time.Millisecond), After: &nemesis.Trigger{Node: "c2", F: history.FAcquire}}}}})
	assert.Equal(t, models.Invalid, r.Verdict("liveness"))
	lost := false
	for _, e := range r.Result.Events {
		lost = lost || (e.Node == "c2" && e.F == history.FRelease && e.Type == history.Info)
	}
	assert.True(t, lost, "c2's release ended with an unknown outcome")
	stuck := false
	for _, g := range r.Grants {
		stuck = stuck || (g.Client == "c2" && g.Released == 0 && g.Removed == 0 && g.Until > end)
	}
	assert.True(t, stuck, "the servers' record shows c2's node held to the end: %+v", r.Grants)
}
