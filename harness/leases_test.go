package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// TestClientLeasesCountFromTheRequest: every lease deadline a client
// recorded (from an acquire or a renewal) is no later than what the servers
// had promised by then: clients count their leases from when they asked,
// never from the reply (issue 10, item 2b). Faults without clock faults, so
// that the clients' clocks measure true time.
func TestClientLeasesCountFromTheRequest(t *testing.T) {
	for _, sys := range truthSystems {
		if lockCheck(sys.test) == "mutex" {
			continue // no leases: the control lock, the database's for-update and advisory locks
		}
		t.Run(sys.name, func(t *testing.T) {
			t.Parallel()
			checked := 0
			for seed := uint64(1); seed <= uint64(max(*truthSeeds/3, 3)); seed++ {
				tc := sys.test
				tc.Nemesis, tc.Seed, tc.Checks = "pause,partition,crash,delay", seed, []string{lockCheck(tc)}
				p, err := Prepare(tc)
				require.NoError(t, err)
				p.RecordGrants()
				r, err := p.Run()
				require.NoError(t, err)
				for _, e := range r.Events {
					if !e.Type.IsCompletion() || e.Type != history.OK || e.Deadline == nil ||
						(e.F != history.FAcquire && e.F != history.FRenew) {
						continue
					}
					checked++
					promised := p.Deployment.Grants.Promised(e.Key, e.Owner, time.Duration(e.Time))
					require.Positive(t, promised, "seed %d: #%d %s's %s as %s: no server granted it", seed, e.Index, e.Node, e.F, e.Owner)
					assert.LessOrEqual(t, *e.Deadline, int64(promised), "seed %d: #%d %s's %s as %s: lease until %s, the servers promised until %s",
						seed, e.Index, e.Node, e.F, e.Owner, history.FormatTime(*e.Deadline), history.FormatTime(int64(promised)))
				}
			}
			assert.Positive(t, checked)
			t.Logf("%s: %d lease deadlines (acquires and renewals) within what the servers promised", sys.name, checked)
		})
	}
}
