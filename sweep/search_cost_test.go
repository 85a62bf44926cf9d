package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// grant is c's granted acquire at ms; crash the nemesis crashing c at ms.
func grant(c string, ms int64) history.Event {
	return history.Event{Time: ms * 1e6, Process: 1, Node: c, Type: history.OK, F: history.FAcquire}
}

func crash(c string, ms int64) history.Event {
	return history.Event{Time: ms * 1e6, Process: history.NemesisProcess, Type: history.Start, F: "crash", Targets: []string{c}}
}

func TestFailoverIsTheTimeFromTheHoldersCrashToAnotherClientsGrant(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  []history.Event
		want    time.Duration
		crashed bool
	}{
		{"another client granted", []history.Event{grant("c1", 5), crash("c1", 5), grant("c1", 6), grant("c2", 10_005)}, 10 * time.Second, true},
		{"nobody else granted", []history.Event{grant("c1", 5), crash("c1", 5)}, -1, true},
		{"the crash never came", []history.Event{grant("c2", 5), grant("c1", 9)}, 0, false},
		{"grants before the crash do not count", []history.Event{grant("c2", 1), grant("c1", 5), crash("c1", 5), grant("c2", 2_005)}, 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, crashed := failover(tc.events, "c1")
			assert.Equal(t, tc.crashed, crashed)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestGrantsAreCountedPerClientAndTheLopsidedShareFound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []history.Event
		grants []int
		first  string
		share  float64
	}{
		{"shared", []history.Event{grant("c2", 1), grant("c1", 2), grant("c2", 3), grant("c1", 4)}, []int{2, 2}, "c2", 0.5},
		// Leader election as the matrix saw it: one client makes every
		// acquisition, the other none.
		{"one client starves the other", []history.Event{grant("c2", 1), grant("c2", 2), grant("c2", 3)}, []int{0, 3}, "c2", 1},
		{"no grants", []history.Event{crash("c1", 1)}, []int{0, 0}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grants := make([]int, 2)
			assert.Equal(t, tc.first, clientGrants(tc.events, grants))
			assert.Equal(t, tc.grants, grants)
			assert.InDelta(t, tc.share, topShare(grants), 1e-9)
		})
	}
}
