package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/scenario"
)

// sessionHistory: c1 holds "k" under a session (no lease deadline known to
// the client); a fault of kind f hits c1 at 2 s; c2 is granted "k" at 5 s
// while c1 still believes it holds it.
func sessionHistory(f string) []history.Event {
	s := int64(1e9)
	ev := []history.Event{
		{Time: 0, Process: 0, Node: "c1", Type: history.Invoke, F: history.FAcquire, Key: "k", Owner: "o1"},
		{Time: s / 10, Process: 0, Node: "c1", Type: history.OK, F: history.FAcquire, Key: "k", Owner: "o1"},
		{Time: s, Process: 1, Node: "c2", Type: history.Invoke, F: history.FAcquire, Key: "k", Owner: "o2"},
		{Time: 2 * s, Process: history.NemesisProcess, Type: history.Start, F: f, Targets: []string{"c1"}},
		{Time: 5 * s, Process: 1, Node: "c2", Type: history.OK, F: history.FAcquire, Key: "k", Owner: "o2"},
		{Time: 6 * s, Process: history.NemesisProcess, Type: history.Stop, F: f, Targets: []string{"c1"}},
		{Time: 7 * s, Process: 0, Node: "c1", Type: history.Invoke, F: history.FRelease, Key: "k", Owner: "o1"},
		{Time: 7 * s, Process: 0, Node: "c1", Type: history.OK, F: history.FRelease, Key: "k", Owner: "o1"},
		{Time: 8 * s, Process: 1, Node: "c2", Type: history.Invoke, F: history.FRelease, Key: "k", Owner: "o2"},
		{Time: 8 * s, Process: 1, Node: "c2", Type: history.OK, F: history.FRelease, Key: "k", Owner: "o2"},
	}
	for i := range ev {
		ev[i].Index = i
	}
	return ev
}

// TestSessionExpiryKind: a session-based holder that was paused or cut off
// while it held the lock lost it to the session's expiry; an overlap with no
// fault on the holder is unexplained.
func TestSessionExpiryKind(t *testing.T) {
	assert.Equal(t, []string{scenario.KindSessionExpiry}, scenario.ViolationKinds(sessionHistory("pause")))
	assert.Equal(t, []string{scenario.KindSessionExpiry}, scenario.ViolationKinds(sessionHistory("partition")))
	assert.Equal(t, []string{scenario.KindOther}, scenario.ViolationKinds(sessionHistory("clock-drift")))
}
