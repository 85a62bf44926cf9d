package models

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
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
// analysed only when it is written (or asked whether it is available), with
// or without a time budget, and then holds what the analysis made at once
// holds.
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

			var timed *Visualization
			switch c := c.(type) {
			case CriticalSections:
				c.Budget.Time = time.Hour
				timed = Run(c, events).Visualization
			case LockService:
				c.Budget.Time = time.Hour
				timed = Run(c, events).Visualization
			case FencingTokens:
				c.Budget.Time = time.Hour
				timed = Run(c, events).Visualization
			}
			require.NotNil(t, timed)
			require.NotNil(t, timed.build, "a time budget does not analyse at once either")
			require.True(t, timed.Available())
			eager := analyzedVisualization(t, c, events)
			for _, v := range []*Visualization{lazy, timed} {
				assert.Equal(t, sortedPartials(eager), sortedPartials(v))
				assert.Equal(t, len(eager.info.PartialLinearizations()), len(v.info.PartialLinearizations()))
			}
		})
	}
}

// analyzedVisualization is the visualization of c's invalid verdict on events
// made from an analysis run at once, as an explanation that needs the
// analysis makes it.
func analyzedVisualization(t *testing.T, c Check, events []history.Event) *Visualization {
	t.Helper()
	v := Run(c, events).Visualization
	require.NotNil(t, v)
	require.NotNil(t, v.build)
	info, ok := v.build()
	require.True(t, ok)
	return &Visualization{model: v.model, info: info}
}

// TestAVisualizationWhoseAnalysisFailedIsNotAvailable: a visualization whose
// analysis runs out of its time budget is not available, and writing it says
// why.
func TestAVisualizationWhoseAnalysisFailedIsNotAvailable(t *testing.T) {
	v := &Visualization{build: func() (porcupine.LinearizationInfo, bool) { return porcupine.LinearizationInfo{}, false }}
	assert.False(t, v.Available())
	require.ErrorContains(t, v.WriteHTML(&bytes.Buffer{}), "time budget")
	var none *Visualization
	assert.False(t, none.Available())
}
