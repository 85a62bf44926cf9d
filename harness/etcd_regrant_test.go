package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// TestAnEtcdRegrantAfterAFailedReleaseIsNotNested: etcd's Mutex takes a lock
// once per session. On seed 354 of etcd with resource=etcd (random faults)
// c1's release of k/b certainly failed (no leader reachable for 3 s), so c1
// still held the lock; at 16.204 s its next acquire returned the same key and
// create revision (96), and its release at 16.315 s deleted the key. The
// lease check used to count that acquire as a nested one, so c1 still held
// the lock once after its release and every later grant to another client
// broke the lease (a false INVALID that no broken promise in the servers'
// record backed). It is the same grant again: the check does not count it,
// and agrees with the record.
func TestAnEtcdRegrantAfterAFailedReleaseIsNotNested(t *testing.T) {
	tests := []struct {
		name string
		test scenario.Test
		// regrant is the owner and token that a client's acquire returned again
		// after its release of them certainly failed.
		owner string
		token uint64
	}{
		{"etcd-guarded seed 354", scenario.Test{System: "etcd", SystemOptions: map[string]string{"resource": "etcd"},
			Storage: storage.Unfenced, Nemesis: "random", Seed: 354}, "k/b", 96},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.test.Checks = []string{"lease"}
			p, err := Prepare(tc.test)
			require.NoError(t, err)
			p.RecordGrants()
			r, err := p.Run()
			require.NoError(t, err)

			owner, token, ok := regrantAfterFailedRelease(r.Events)
			require.True(t, ok, "no acquire returned a grant whose release had certainly failed")
			assert.Equal(t, tc.owner, owner)
			assert.Equal(t, tc.token, token)

			lease := verdict(r, "lease")
			assert.Equal(t, models.Valid, lease.Result, explanation(lease))
			for _, b := range p.Deployment.Grants.Breaches() {
				assert.False(t, clientsSaw(r.Events, b), "a broken promise the clients relied on: %v", b)
			}
			counted := models.Run(models.LockService{Leases: true}, r.Events)
			assert.Equal(t, models.Invalid, counted.Result, "counting the regrant as nested keeps c1 holding the lock")
		})
	}
}

// regrantAfterFailedRelease finds an ok acquire that returned the owner and
// token of its client's release that had certainly failed.
func regrantAfterFailedRelease(events []history.Event) (string, uint64, bool) {
	type grant struct {
		node, owner string
		token       uint64
	}
	open := map[int]history.Event{}
	failed := map[grant]bool{}
	for _, e := range events {
		switch {
		case e.Type == history.Invoke:
			open[e.Process] = e
		case e.Type.IsCompletion():
			inv := open[e.Process]
			delete(open, e.Process)
			switch {
			case e.F == history.FAcquire && e.Type == history.OK && e.Token != nil &&
				failed[grant{e.Node, e.Owner, *e.Token}]:
				return e.Owner, *e.Token, true
			case e.F == history.FRelease && e.Type == history.Fail && inv.Token != nil:
				failed[grant{inv.Node, inv.Owner, *inv.Token}] = true
			}
		}
	}
	return "", 0, false
}
