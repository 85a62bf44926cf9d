package reports

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultsThatDidNotFireAreShown: the summary lists the faults that did not
// fire (capped), the page marks them in the schedule table, and a run whose
// every fault missed carries a warning in both, first (a run directory
// written before Run.Faults: the warning comes from the fault outcomes).
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
	assert.Contains(t, out.String(), "did not fire: 11 of 12 scheduled faults\n  fault 2 (pause c1): reason 1\n")
	assert.Contains(t, out.String(), "  fault 11 (pause c1): reason 10\n  ... and 1 more (see fault_outcomes in results.json)\n")
	assert.NotContains(t, out.String(), "WARNING")
	assert.Empty(t, r.Warnings())
	page := renderHTML(t, r, nil)
	assert.Contains(t, page, `<tr><td>fault 1</td><td>pause</td><td>at 1s</td><td>1s</td><td>[c1]</td><td></td><td>fired</td></tr>`)
	assert.Contains(t, page, `<tr class="missed"><td>fault 12</td><td>pause</td><td>at 1s</td><td>1s</td><td>[c1]</td><td></td><td>did not fire: reason 11</td></tr>`)
	assert.NotContains(t, page, `class="warning"`)
	assert.NotContains(t, out.String()+page, "faults[", "faults are named by number, kind and targets, not by their index")

	r.FaultOutcomes = r.FaultOutcomes[1:2]
	assert.Equal(t, []string{"the one scheduled fault did not fire: this run saw no fault, so its verdicts say nothing about faults"}, r.Warnings())
	out.Reset()
	require.NoError(t, PrintSummary(&out, r, ""))
	assert.True(t, strings.HasPrefix(out.String(), "WARNING: the one scheduled fault did not fire"), "the warning is the summary's first line:\n%s", out.String())
	inOrder(t, out.String(), "WARNING: the one scheduled fault did not fire", "did not fire: 1 of 1 scheduled faults", r.Verdicts[0].Check)
	inOrder(t, renderHTML(t, r, nil), `<div class="fault-warning" id="fault-warning"`, `The one scheduled fault did not fire`,
		`id="headline"`, `id="verdicts"`)
}

// TestARunWithoutFaultsSaysSoEverywhere: a run that asked for faults and saw
// none (or none of a kind it asked for) says so on the summary's first line,
// in results.json's "faults" and "warnings", and in a strip above the
// report's verdict; a run whose faults fired says nothing of the kind, and
// the warning survives a report regenerated from the run directory.
func TestARunWithoutFaultsSaysSoEverywhere(t *testing.T) {
	const drewNone = "no fault fired: the random pause nemesis drew none in 10s, so the verdicts judge a run without faults"
	const noCrash = "--nemesis pause,crash drew no crash, so the verdicts say nothing about crash"
	cases := []struct {
		name   string
		faults *Faults
		// warning is the sentence every surface shows ("" none); strip the
		// report's strip's title and text.
		warning, title, strip string
	}{
		{"a random nemesis that drew nothing",
			&Faults{Nemesis: "pause", Scheduled: map[string]int{}, Fired: map[string]int{}, NoneFired: true, Warning: drewNone},
			drewNone, "No fault fired", "The random pause nemesis drew none in 10s, so the verdicts judge a run without faults."},
		{"a kind asked for that never fired",
			&Faults{Nemesis: "pause,crash", Scheduled: map[string]int{"pause": 2}, Fired: map[string]int{"pause": 2},
				Missing: []string{"crash"}, Warning: noCrash},
			noCrash, "A fault kind asked for never fired", noCrash + "."},
		{"faults that fired",
			&Faults{Nemesis: "pause", Scheduled: map[string]int{"pause": 2}, Fired: map[string]int{"pause": 2}},
			"", "", ""},
		{"no fault asked for",
			&Faults{Scheduled: map[string]int{}, Fired: map[string]int{}},
			"", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b historyBuilder
			r := checkedRun(b.build(), nil)
			r.Faults = tc.faults
			var out strings.Builder
			require.NoError(t, PrintSummary(&out, r, ""))
			dir := filepath.Join(t.TempDir(), "run")
			require.NoError(t, WriteDir(dir, r))
			js, err := os.ReadFile(filepath.Join(dir, ResultsFile))
			require.NoError(t, err)
			var res struct {
				Faults   Faults   `json:"faults"`
				Warnings []string `json:"warnings"`
			}
			require.NoError(t, json.Unmarshal(js, &res))
			assert.Equal(t, *tc.faults, res.Faults, "results.json's faults")
			page := renderHTML(t, r, nil)
			if tc.warning == "" {
				assert.NotContains(t, out.String(), "WARNING")
				assert.Empty(t, res.Warnings)
				assert.NotContains(t, page, `id="fault-warning"`)
				return
			}
			first, _, _ := strings.Cut(out.String(), "\n")
			assert.Equal(t, "WARNING: "+tc.warning, first, "the summary's first line")
			assert.Equal(t, 1, strings.Count(out.String(), "WARNING"), "said once")
			assert.Equal(t, []string{tc.warning}, res.Warnings)
			inOrder(t, page, `<body`, `<div class="fault-warning" id="fault-warning" role="alert">`, tc.title,
				html.EscapeString(tc.strip), `id="overall"`, `id="verdicts"`)
			_, err = Regenerate(dir)
			require.NoError(t, err)
			again, err := os.ReadFile(filepath.Join(dir, ReportFile))
			require.NoError(t, err)
			assert.Contains(t, string(again), html.EscapeString(tc.strip), "the regenerated report")
		})
	}
}
