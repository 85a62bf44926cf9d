package harness

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// pausedDuring reports whether a pause of node ended between the invocation
// matching completion events[i] (the node's last invocation before it) and
// the completion.
func pausedDuring(events []history.Event, i int) bool {
	e := events[i]
	for j := i - 1; j >= 0; j-- {
		o := events[j]
		if o.Process == e.Process && o.Type == history.Invoke {
			return false
		}
		if o.Process == history.NemesisProcess && o.Type == history.Stop && o.F == "pause" && slices.Contains(o.Targets, e.Node) {
			return true
		}
	}
	return false
}

// TestClientLeasesCountFromTheRequest: every lease deadline a client
// recorded (from an acquire or a renewal) is no later than what the servers
// had promised by then: clients count their leases from when they asked,
// never from the reply (issue 10, item 2b). Faults without clock faults, so
// that the clients' clocks measure true time. The rows of
// System.GroundTruth rows with LeasesBeyondPromise show the opposite.
func TestClientLeasesCountFromTheRequest(t *testing.T) {
	for _, sys := range truthSystems {
		if lockCheck(sys.test) == "mutex" {
			continue // no leases: the control lock, the database's for-update and advisory locks
		}
		t.Run(sys.name, func(t *testing.T) {
			t.Parallel()
			checked, beyond := 0, 0
			why, outlives := sys.beyondPromise, sys.beyondPromise != ""
			for seed := uint64(1); seed <= uint64(max(seedsOfTruth()/3, 3)); seed++ {
				tc := sys.test
				tc.Nemesis, tc.Seed, tc.Checks = "pause,partition,crash,delay", seed, []string{lockCheck(tc)}
				p, err := Prepare(tc)
				require.NoError(t, err)
				p.RecordGrants()
				r, err := p.Run()
				require.NoError(t, err)
				for i, e := range r.Events {
					if !e.Type.IsCompletion() || e.Type != history.OK || e.Deadline == nil ||
						(e.F != history.FAcquire && e.F != history.FRenew) {
						continue
					}
					checked++
					promised := p.Deployment.Grants.Promised(e.Key, e.Owner, time.Duration(e.Time))
					require.Positive(t, promised, "seed %d: #%d %s's %s as %s: no server granted it", seed, e.Index, e.Node, e.F, e.Owner)
					if outlives {
						if *e.Deadline > int64(promised) {
							beyond++
						}
						continue
					}
					if sys.pastPromiseAfterAPause != "" && *e.Deadline > int64(promised) && pausedDuring(r.Events, i) {
						beyond++
						continue
					}
					assert.LessOrEqual(t, *e.Deadline, int64(promised), "seed %d: #%d %s's %s as %s: lease until %s, the servers promised until %s",
						seed, e.Index, e.Node, e.F, e.Owner, history.FormatTime(*e.Deadline), history.FormatTime(int64(promised)))
				}
			}
			assert.Positive(t, checked)
			if outlives {
				assert.Positive(t, beyond, "%s: %s", sys.name, why)
				t.Logf("%s: %d of %d lease deadlines beyond what the servers promised: %s", sys.name, beyond, checked, why)
				return
			}
			if why := sys.pastPromiseAfterAPause; why != "" && beyond > 0 {
				t.Logf("%s: %d of %d lease deadlines past what the servers promised, each right after a pause: %s", sys.name, beyond, checked, why)
				return
			}
			t.Logf("%s: %d lease deadlines (acquires and renewals) within what the servers promised", sys.name, checked)
		})
	}
}
