package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// TestLeakedRedissonLockIsToldFromTheRecord: under a pause of its server, a
// Redisson-style lock (hold counts on the server, watchdog renewal) applies
// every queued attempt of a retried acquire at the resume, each one more
// hold; the client's releases undo only the holds it took, the lock stays
// held (leaked), and the watchdog renews it. The lease verdict tells that
// story from the servers' hold counts, not "renewed while nobody held the
// lock" (seed 7: the servers count 35 holds at once where the client took 2).
func TestLeakedRedissonLockIsToldFromTheRecord(t *testing.T) {
	r := run(t, scenario.Test{System: "redis", SystemOptions: map[string]string{"reentrancy": "server", "watchdog": "true"},
		Workload: "reentrant", Nemesis: "pause", Seed: 7})
	v := verdict(r, "lease")
	require.Equal(t, models.Invalid, v.Result)
	assert.Contains(t, v.Reason, "c4's retried acquire (outcome unknown, invoked 1.766s) was applied more than once")
	assert.Contains(t, v.Reason, "the servers' record still counted 34 holds for c4 after its releases, so the lock leaked")
	assert.NotContains(t, v.Reason, "while nobody held the lock")
	require.NotNil(t, v.Counterexample)
	assert.Contains(t, v.Counterexample.Explanation, "The servers' record: redis applied 35 of c4's acquire attempts on \"k\" "+
		"(owner \"c4:367445e226697150\") at one moment, 10.516s: its hold count rose from 0 to 35, where c4's client took at most "+
		"2 holds at once; the count was still 34 at the renewal (13.851s): the lock stayed c4's after every release the history "+
		"shows (it leaked; nobody else could take it while c4 kept renewing it).")
}
