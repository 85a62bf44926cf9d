package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// TestFiredFaultsCountsOnlyFaultsThatStarted: a nemesis start of a fault
// kind counts; its stop, a system's own events and clients' events do not.
func TestFiredFaultsCountsOnlyFaultsThatStarted(t *testing.T) {
	events := []history.Event{
		{Process: history.NemesisProcess, Type: history.Start, F: "pause"},
		{Process: history.NemesisProcess, Type: history.Stop, F: "pause"},
		{Process: history.NemesisProcess, Type: history.Start, F: "pause"},
		{Process: history.NemesisProcess, Type: history.Start, F: "partition"},
		{Process: history.NemesisProcess, Type: history.Start, F: "lock-delay"},
		{Process: 1, Type: history.Invoke, F: "acquire"},
	}
	assert.Equal(t, map[string]int{"pause": 2, "partition": 1}, FiredFaults(events))
	assert.Empty(t, FiredFaults(nil))
}

// TestEveryDesignPrepares: every registered design runs in each of its
// modes, and an unfenced mode never names fencing as its guard.
func TestEveryDesignPrepares(t *testing.T) {
	designs := Designs()
	require.NotEmpty(t, designs)
	for _, d := range designs {
		require.NotEmpty(t, d.Modes, d.Name)
		for _, m := range d.Modes {
			tt := Test{System: d.System, SystemOptions: d.SystemOptions, Storage: m.Storage, FenceReads: m.FenceReads}
			p, err := Prepare(tt)
			require.NoError(t, err, "%s in %s", d.Name, m.Storage)
			p.World.Close()
			if m.Storage == "unfenced" {
				assert.NotContains(t, m.Guard, "fencing", d.Name)
			}
		}
	}
}
