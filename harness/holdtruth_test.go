package harness

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// TestReleaseRefusedAfterSessionExpiryIsNoBreach reproduces the suspected
// false INVALID of issue 28, item 8: in the zk-partitioned-holder hunt, c2
// asks to release its lock while a cut separates it from its server; the cut
// holds the delete, c2's session expires on the leader and its lock node goes
// with it, c1 is granted the lock, and at the heal c2's release is answered
// "lock not held by this acquirer: session expired". The lease check used to
// keep c2 holding after that failed release, until its own deadline, and
// said the lock service granted c1 the lock while c2 held it, which the
// servers' record does not show (no broken promise). c2 had let go before
// the service ended its hold, and the answer says the lock was gone: the
// lease check says VALID, and the record agrees. Seed 2 with cuts that drop
// (60 s, a guard case) is the same story, the node deleted before the delete
// arrived.
func TestReleaseRefusedAfterSessionExpiryIsNoBreach(t *testing.T) {
	require.Equal(t, backends.ErrNotHeld.Error(), models.NotHeld, "the lock model reads the clients' error text")
	tests := []struct {
		cuts string
		time time.Duration
		seed uint64
	}{
		{"hold", 20 * time.Second, 31},
		{"hold", 20 * time.Second, 4},
		{"hold", 20 * time.Second, 2},
		{"drop", 60 * time.Second, 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s/seed%d", tc.cuts, tc.time, tc.seed), func(t *testing.T) {
			h, err := FindHunt("zk-partitioned-holder/unsafe")
			require.NoError(t, err)
			h.Time = tc.time
			test, err := h.Test(tc.seed)
			require.NoError(t, err)
			test.Cuts = tc.cuts
			run := runWithTruth(t, test)
			assert.Equal(t, models.Valid, run.verdict.Result, explanation(run.verdict))
			assert.Empty(t, run.breaches, "the servers' record")

			test.Checks = []string{"lease"}
			r, err := Run(test)
			require.NoError(t, err)
			defer r.Release()
			gone := slices.ContainsFunc(r.Events, func(e history.Event) bool {
				return e.F == history.FRelease && e.Type == history.Fail && strings.Contains(e.Detail, models.NotHeld)
			})
			assert.True(t, gone, "a release refused because the lock was gone")
		})
	}
}
