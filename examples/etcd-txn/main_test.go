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

// TestThePlainDeleteAndItsFix: the plain Delete deletes the next holder's
// key under the slow release; the guarded release does not; fenced storage
// keeps the data under the pause.
func TestThePlainDeleteAndItsFix(t *testing.T) {
	I, V := models.Invalid, models.Valid
	userlocktest.Expect(t, "etcd-txn", "slow-release", map[string]models.Result{"mutual-exclusion": I, "lease": I})
	userlocktest.Expect(t, "etcd-txn-guarded", "slow-release", map[string]models.Result{"mutual-exclusion": V, "critical-sections": V})
	userlocktest.Expect(t, "etcd-txn", "gc-pause", map[string]models.Result{"critical-sections": I})
	userlocktest.Expect(t, "etcd-txn", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
}
