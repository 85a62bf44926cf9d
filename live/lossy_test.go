package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// TestALossyCutHasNoLiveForm: a partition with "lossy" is refused before a
// live run starts, naming the field (a real cut is what TCP makes of it);
// the same partition without it is accepted.
func TestALossyCutHasNoLiveForm(t *testing.T) {
	tests := []struct {
		name  string
		lossy bool
	}{{"lossy", true}, {"plain", false}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Partition, Targets: []string{"c1"},
				At: nemesis.Duration(time.Second), Duration: nemesis.Duration(time.Second), Lossy: tc.lossy}}}
			_, err := Prepare(scenario.Test{System: "redis", Schedule: &s}, Config{})
			if !tc.lossy {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNotLive)
			assert.ErrorContains(t, err, `faults[0] (partition): field "lossy": a lossy cut has no live form`)
		})
	}
}
