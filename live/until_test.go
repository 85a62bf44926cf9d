package live

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// TestEndAnchorEndsALivePause: live, as in the simulator, a pause with an
// end anchor ends right after the anchor's event (on hashicorp/raft, in
// process: no server to install). Real time places it within a few
// milliseconds of the event, not at the nanosecond.
func TestEndAnchorEndsALivePause(t *testing.T) {
	realTime(t)
	noLeak(t)
	s := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"},
		After: &nemesis.Trigger{Node: "c1", F: history.FRead},
		Until: &nemesis.Trigger{Node: "c2", F: history.FRead, Type: string(history.Invoke)}}}}
	test := scenario.Test{System: "raftkv", Clients: 2, Seed: 1, Time: 40 * time.Second, Schedule: &s}
	r, err := Run(context.Background(), test, Config{Scale: scale})
	require.NoError(t, err)
	require.Len(t, r.FaultOutcomes, 1)
	require.True(t, r.FaultOutcomes[0].Fired, r.FaultOutcomes[0].DidNotFire)
	var start, stop, read int64 = -1, -1, -1
	for _, e := range r.Events {
		switch {
		case e.Process == history.NemesisProcess && e.F == string(nemesis.Pause) && e.Type == history.Start && start < 0:
			start = e.Time
		case e.Process == history.NemesisProcess && e.F == string(nemesis.Pause) && e.Type == history.Stop && stop < 0:
			stop = e.Time
		case start >= 0 && read < 0 && e.Node == "c2" && e.F == history.FRead && e.Type == history.Invoke:
			read = e.Time
		}
	}
	require.Positive(t, read, "c2 read while c1 was paused")
	require.Positive(t, stop, "the pause ended")
	assert.GreaterOrEqual(t, stop, read, "the pause ends after c2's read is invoked")
	assert.Less(t, time.Duration(stop-read), 50*time.Millisecond, "and right after it")
}
