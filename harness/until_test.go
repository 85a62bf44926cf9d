package harness

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// anchoredPause pauses c1 right after its first read and resumes it right
// after c2's first event of f and type typ (plus delta) that follows the
// start of the pause: the window in which a holder whose lease ran out
// writes between the new holder's read and its write.
func anchoredPause(f string, typ history.Type, delta time.Duration) *nemesis.Schedule {
	return anchoredPauseOf("c1", "c2", f, typ, delta)
}

// anchoredPauseOf is anchoredPause with the paused holder and the new
// holder named.
func anchoredPauseOf(holder, next, f string, typ history.Type, delta time.Duration) *nemesis.Schedule {
	return &nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{holder},
		After: &nemesis.Trigger{Node: holder, F: history.FRead},
		Until: &nemesis.Trigger{Node: next, F: f, Type: string(typ), Delay: nemesis.Duration(delta)}}}}
}

// stopOf is the time of the stop event of the run's first fault of kind k.
func stopOf(t *testing.T, r scenario.Result, k nemesis.Kind) (start, stop int64) {
	t.Helper()
	start = -1
	for _, e := range r.Events {
		if e.Process != history.NemesisProcess || e.F != string(k) {
			continue
		}
		switch e.Type {
		case history.Start:
			if start < 0 {
				start = e.Time
			}
		case history.Stop:
			return start, e.Time
		}
	}
	t.Fatalf("no %s stopped", k)
	return 0, 0
}

func TestEndAnchorResumesAtTheAnchorEvent(t *testing.T) {
	tc := scenario.Test{System: "zookeeper", Clients: 2, Seed: 1, Time: 30 * time.Second, Storage: "fenced",
		Schedule: anchoredPause(history.FRead, history.Invoke, time.Millisecond)}
	r := run(t, tc)
	_, stop := stopOf(t, r, nemesis.Pause)
	var read int64 = -1
	for _, e := range r.Events {
		if e.Node == "c2" && e.F == history.FRead && e.Type == history.Invoke && e.Time > 5*int64(time.Second) {
			read = e.Time
			break
		}
	}
	require.Positive(t, read, "c2 read after c1's session ran out")
	assert.Equal(t, read+int64(time.Millisecond), stop, "the pause ends 1 ms after c2's read was invoked")
	require.NotEmpty(t, r.FaultOutcomes)
	assert.True(t, r.FaultOutcomes[0].Fired)

	// Same seed, same schedule: the same history, byte for byte.
	again := run(t, tc)
	assert.True(t, bytes.Equal(historyBytes(t, r), historyBytes(t, again)))
}

// TestEndAnchorLandsInTheWindow: one pause, ended by the new holder's
// read, gives the lost update that fencing writes alone cannot stop, for
// every design that fences writes only; the same pause ended a few
// milliseconds later (after the new holder's write) is rejected by the fence.
func TestEndAnchorLandsInTheWindow(t *testing.T) {
	designs := []struct {
		name string
		test scenario.Test
		// holder is the client that leads first (client-go's candidates
		// race; c2 wins on this seed).
		holder, next string
	}{
		{"zookeeper czxid", scenario.Test{System: "zookeeper"}, "c1", "c2"},
		{"etcd revision", scenario.Test{System: "etcd"}, "c1", "c2"},
		{"kubernetes leaseTransitions", scenario.Test{System: "kubernetes", SystemOptions: map[string]string{"fencing": "leaseTransitions"}}, "c2", "c1"},
		{"chubby sequencer", scenario.Test{System: "chubby", Time: 90 * time.Second}, "c1", "c2"},
	}
	for _, d := range designs {
		t.Run(d.name, func(t *testing.T) {
			tc := d.test
			tc.Clients, tc.Seed, tc.Storage = 2, 1, "fenced"
			if tc.Time == 0 {
				tc.Time = 30 * time.Second
			}
			tc.Schedule = anchoredPauseOf(d.holder, d.next, history.FRead, history.Invoke, 0)
			r := run(t, tc)
			cs := verdict(r, "critical-sections")
			assert.Equal(t, models.Invalid, cs.Result, cs.Reason)
			assert.Contains(t, cs.Reason, "lost update")

			tc.Schedule = anchoredPauseOf(d.holder, d.next, history.FWrite, history.OK, 0)
			r = run(t, tc)
			cs = verdict(r, "critical-sections")
			assert.Equal(t, models.Valid, cs.Result, "resumed after the new holder wrote: the fence rejects the stale write: %s", cs.Reason)
		})
	}
}

func TestEndAnchorWithADurationEndsAtWhicheverComesFirst(t *testing.T) {
	s := anchoredPause(history.FRead, history.Invoke, 0)
	s.Faults[0].Duration = nemesis.Duration(2 * time.Second)
	r := run(t, scenario.Test{System: "zookeeper", Clients: 2, Seed: 1, Time: 30 * time.Second, Schedule: s})
	start, stop := stopOf(t, r, nemesis.Pause)
	assert.Equal(t, int64(2*time.Second), stop-start, "the duration ran out before c2 could read")
}
