package main

import (
	"testing"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// The tests run the lock registered as main.go registers it, and check the
// verdicts the example's documentation states (userlocktest.Expect also
// wants each violation classified and backed by the servers' record).
func init() { register() }

// TestTheCorrectedLock: the compare-and-delete release holds under the
// slow release; without fencing no lock stops the paused holder's write;
// with fenced storage the tokens do.
func TestTheCorrectedLock(t *testing.T) {
	I, V := models.Invalid, models.Valid
	userlocktest.Expect(t, "fixed", "slow-release", map[string]models.Result{"mutual-exclusion": V, "critical-sections": V, "lock-conduct": V})
	userlocktest.Expect(t, "fixed", "gc-pause", map[string]models.Result{"critical-sections": I})
	userlocktest.Expect(t, "fixed", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
	userlocktest.Expect(t, "fixed", "delayed-write-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
}
