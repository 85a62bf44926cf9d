package models

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// sortedPartials are Porcupine's partial linearizations in a stable order.
func sortedPartials(v *Visualization) []string {
	var out []string
	for _, part := range v.info.PartialLinearizations() {
		for _, lin := range part {
			out = append(out, fmt.Sprint(lin))
		}
	}
	slices.Sort(out)
	return out
}

// TestVisualizationIsMadeOnFirstUse: an invalid verdict's visualization is
// analysed only when it is written, and then holds what the analysis made
// at once holds; with a time budget it is made at once.
func TestVisualizationIsMadeOnFirstUse(t *testing.T) {
	events := synth{ops: 400, seed: 3, lostUpdateAt: 35, inversionAt: 35}.events()
	for _, c := range []Check{CriticalSections{Initial: history.Ptr(int64(0))}, LockService{Leases: true}, FencingTokens{StorageFenced: true}} {
		t.Run(c.Name(), func(t *testing.T) {
			v := Run(c, events)
			require.Equal(t, Invalid, v.Result, v.Reason)
			require.NotNil(t, v.Visualization)
			lazy := v.Visualization
			require.NotNil(t, lazy.build, "not analysed before it is written")
			var html bytes.Buffer
			require.NoError(t, lazy.WriteHTML(&html))
			assert.Contains(t, html.String(), "<html")

			var eager *Visualization
			switch c := c.(type) {
			case CriticalSections:
				c.Budget.Time = time.Hour
				eager = Run(c, events).Visualization
			case LockService:
				c.Budget.Time = time.Hour
				eager = Run(c, events).Visualization
			case FencingTokens:
				c.Budget.Time = time.Hour
				eager = Run(c, events).Visualization
			}
			require.NotNil(t, eager)
			assert.Nil(t, eager.build, "a time budget analyses at once")
			assert.Equal(t, sortedPartials(eager), sortedPartials(lazy))
			assert.Equal(t, len(eager.info.PartialLinearizations()), len(lazy.info.PartialLinearizations()))
		})
	}
}
