package reports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultsThatDidNotFireAreShown: the summary lists the faults that did not
// fire (capped), the page marks them in the schedule table, and a run whose
// every fault missed carries a warning in both, before the verdicts.
func TestFaultsThatDidNotFireAreShown(t *testing.T) {
	var b historyBuilder
	b.fault("pause", []string{"c1"}, 1, 2)
	var faults []any
	var outcomes []FaultOutcome
	for i := range 12 {
		faults = append(faults, map[string]any{"kind": "pause", "at": "1s", "duration": "1s", "targets": []string{"c1"}})
		o := FaultOutcome{Fault: i, Kind: "pause", Fired: i == 0}
		if !o.Fired {
			o.DidNotFire = fmt.Sprintf("reason %d", i)
		}
		outcomes = append(outcomes, o)
	}
	r := checkedRun(b.build(), map[string]any{"faults": faults})
	r.FaultOutcomes = outcomes
	var out strings.Builder
	require.NoError(t, PrintSummary(&out, r, ""))
	assert.Contains(t, out.String(), "did not fire: 11 of 12 scheduled faults\n  faults[1] (pause): reason 1\n")
	assert.Contains(t, out.String(), "  faults[10] (pause): reason 10\n  ... and 1 more (see fault_outcomes in results.json)\n")
	assert.NotContains(t, out.String(), "WARNING")
	assert.Empty(t, r.Warnings())
	page := renderHTML(t, r, nil)
	assert.Contains(t, page, `<tr><td>faults[0]</td><td>pause</td><td>at 1s</td><td>1s</td><td>[c1]</td><td></td><td>fired</td></tr>`)
	assert.Contains(t, page, `<tr class="missed"><td>faults[11]</td><td>pause</td><td>at 1s</td><td>1s</td><td>[c1]</td><td></td><td>did not fire: reason 11</td></tr>`)
	assert.NotContains(t, page, `class="warning"`)

	r.FaultOutcomes = r.FaultOutcomes[1:2]
	assert.Equal(t, []string{"the one scheduled fault did not fire: this run saw no fault, so its verdicts say nothing about faults"}, r.Warnings())
	out.Reset()
	require.NoError(t, PrintSummary(&out, r, ""))
	inOrder(t, out.String(), "did not fire: 1 of 1 scheduled faults", "WARNING: the one scheduled fault did not fire", r.Verdicts[0].Check)
	inOrder(t, renderHTML(t, r, nil), `id="headline"`, `<p class="warning">Warning: the one scheduled fault did not fire`, `id="verdicts"`)
}
