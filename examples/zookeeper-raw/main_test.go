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

// TestTheSessionExpiry: the paused holder's session expires, the next
// child holds, the paused client's write lands unfenced and is refused
// fenced.
func TestTheSessionExpiry(t *testing.T) {
	I, V := models.Invalid, models.Valid
	userlocktest.Expect(t, "zk-raw", "gc-pause", map[string]models.Result{"critical-sections": I, "mutual-exclusion": I})
	userlocktest.Expect(t, "zk-raw", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
	userlocktest.Expect(t, "zk-raw", "slow-release", map[string]models.Result{"mutual-exclusion": V, "critical-sections": V})
}
