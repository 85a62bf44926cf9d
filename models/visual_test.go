package models

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
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

// TestReleasingAVisualizationHandsItsSearchMemoryBack: an invalid verdict
// keeps its check's search memory (its visualization points into it) until
// the visualization is released; then the memory goes to the next check, and
// the visualization can no longer be written.
func TestReleasingAVisualizationHandsItsSearchMemoryBack(t *testing.T) {
	events := synth{ops: 400, seed: 3, lostUpdateAt: 35, inversionAt: 35}.events()
	for _, tc := range []struct {
		check Check
		kept  func() int
	}{
		{CriticalSections{Initial: history.Ptr(int64(0))}, sectionScratches.Len},
		{LockService{Leases: true}, lockScratches.Len},
	} {
		t.Run(tc.check.Name(), func(t *testing.T) {
			before := tc.kept()
			v := Run(tc.check, events)
			require.Equal(t, Invalid, v.Result, v.Reason)
			require.NotNil(t, v.Visualization)
			assert.Equal(t, max(before-1, 0), tc.kept(), "the invalid verdict keeps its search memory")
			reason := v.Reason
			v.Visualization.Release()
			assert.Equal(t, max(before-1, 0)+1, tc.kept(), "released, the memory is kept for the next check")
			assert.False(t, v.Visualization.Available())
			require.ErrorContains(t, v.Visualization.WriteHTML(&bytes.Buffer{}), "released")
			v.Visualization.Release() // twice: nothing more is handed back
			assert.Equal(t, max(before-1, 0)+1, tc.kept())

			again := Run(tc.check, events) // in the released memory
			assert.Equal(t, reason, v.Reason, "the released verdict's words are its own")
			assert.Equal(t, v.Reason, again.Reason)
			assert.True(t, again.Visualization.Available())
		})
	}
	var none *Visualization
	none.Release()
}

// TestVisualizationNamesItsRowsByClient: Porcupine numbers the rows of its
// view; the view a verdict writes names them instead: "start" for the state
// the stretch starts from, then each client, with its process number when
// the client has several rows. Its legend is wide enough for "jump to first
// error".
func TestVisualizationNamesItsRowsByClient(t *testing.T) {
	events := synth{ops: 400, seed: 3, lostUpdateAt: 35, inversionAt: 35}.events()
	for _, c := range []Check{CriticalSections{Initial: history.Ptr(int64(0))}, LockService{Leases: true}, FencingTokens{StorageFenced: true}} {
		t.Run(c.Name(), func(t *testing.T) {
			v := Run(c, events)
			require.Equal(t, Invalid, v.Result, v.Reason)
			var page bytes.Buffer
			require.NoError(t, v.Visualization.WriteHTML(&page))
			html := page.String()
			assert.Regexp(t, `const rowNames = \["start"(,"c\d+( \(p\d+\))?")+\]`, html)
			assert.Equal(t, 2, strings.Count(html, "i < realClients ? rowName(i) : sortedTags[i - realClients]"), "the rows are measured and drawn with their names")
			assert.NotContains(t, html, "i.toString()")
			assert.Contains(t, html, `width="800" height="20" viewBox="0 0 800 20"`, "the legend has room for its last link")
			assert.NotContains(t, html, `id="row-names"`, "Porcupine's page read as expected")
		})
	}
}

func TestRowNames(t *testing.T) {
	events := []history.Event{
		{Index: 0, Process: 3, Node: "c2"}, {Index: 1, Process: 4, Node: "c4"},
		{Index: 2, Process: 11, Node: "c4"}, {Index: 3, Process: history.NemesisProcess},
	}
	batch := []linOp{{client: 11}, {client: 3}, {client: 11}, {client: 4}, {client: 7}}
	assert.Equal(t, []string{"start", "c2", "c4 (p4)", "p7", "c4 (p11)"}, rowNames(batch, events))
	ops := porcupineOps(nil, batch)
	var rows []int
	for _, o := range ops {
		rows = append(rows, o.ClientId)
	}
	assert.Equal(t, []int{0, 4, 1, 4, 2, 3}, rows, "the start alone on row 0, then a row per process by number")
}

func TestNameRowsKeepsAPageItCannotReadAndSaysWhichRowIsWhich(t *testing.T) {
	page := "<html><body><script>render(data)</script></body></html>"
	assert.Equal(t, `<html><body><script>render(data)</script><p id="row-names">Rows: 0 start · 1 c1 · 2 c&lt;2&gt;</p>
</body></html>`, nameRows(page, []string{"start", "c1", "c<2>"}))
}
