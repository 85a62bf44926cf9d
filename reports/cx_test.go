package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// TestCounterexampleKeepsEachFindingWithItsFaults: the lines of a
// counterexample about the faults that were on during a finding (an overlap)
// stay with that finding, as one item of the list on the page and indented
// under it in the summary; a fault's start and stop are said once, in
// words ("During the pause of c1 from 0.005s to 15.005s (15s)."), without
// the nemesis's process number or event index.
func TestCounterexampleKeepsEachFindingWithItsFaults(t *testing.T) {
	r := GCPauseRun(false)
	windows := history.FaultWindows(r.Events)
	require.Len(t, windows, 1)
	w := windows[0]
	faultLines := []string{"  during fault: " + w.Start.String(), "  during fault: " + w.Stop.String()}
	require.Contains(t, faultLines[0], " p-1 ", "the checks' lines carry the nemesis's process number")
	r.Verdicts = append(r.Verdicts, models.Verdict{Check: "two-findings", Result: models.Invalid, Counterexample: &models.Counterexample{
		Explanation: append(append([]string{"First overlap."}, faultLines...), "Second overlap.", "... and 4 more overlaps.")}})
	const during = "During the pause of c1 from 0.005s to 15.005s (15s)."

	page := renderHTML(t, r, nil)
	assert.Contains(t, page, `<li>First overlap.<ul class="during"><li>`+during+`</li></ul></li><li>Second overlap.</li><li>... and 4 more overlaps.</li>`)
	assert.Equal(t, 3, strings.Count(page, `<ul class="during"><li>`+during+`</li></ul>`),
		"each check's first finding (critical-sections, mutual-exclusion, two-findings) carries the pause")
	assert.NotContains(t, page, "during fault:")
	assert.NotContains(t, page, "p-1")

	var out strings.Builder
	require.NoError(t, PrintSummary(&out, r, ""))
	assert.Contains(t, out.String(), "    First overlap.\n      "+during+"\n    Second overlap.\n    ... and 4 more overlaps.\n")
	assert.NotContains(t, out.String(), "p-1")
	assert.NotContains(t, out.String(), "during fault:")
}

func TestExplanationBlocks(t *testing.T) {
	var b historyBuilder
	b.fault("pause", []string{"c4"}, 1000, 2000)
	b.fault("partition", []string{"redis"}, 3000, 4000)
	b.add(history.Event{Time: ms(5000), Process: history.NemesisProcess, Type: history.Start, F: "clock-jump", Targets: []string{"c1"}, Detail: "jump -9.9s"})
	b.add(history.Event{Time: ms(5000), Process: history.NemesisProcess, Type: history.Stop, F: "clock-jump", Targets: []string{"c1"}, Detail: "jump -9.9s"})
	b.add(history.Event{Time: ms(6000), Process: history.NemesisProcess, Type: history.Start, F: "crash", Targets: []string{"c2"}})
	events := b.build()
	windows := history.FaultWindows(events)
	require.Len(t, windows, 4)
	line := func(e history.Event) string { return "  during fault: " + e.String() }
	tests := []struct {
		name  string
		lines []string
		want  []cxBlock
	}{
		{"a finding without faults", []string{"Lost update."}, []cxBlock{{Text: "Lost update."}}},
		{"start and stop said once",
			[]string{"Overlap.", line(windows[0].Start), line(*windows[0].Stop)},
			[]cxBlock{{Text: "Overlap.", Lines: []string{"During the pause of c4 from 1.000s to 2.000s (1s)."}}}},
		{"each finding keeps its own faults",
			[]string{"A.", line(windows[0].Start), "B.", line(windows[0].Start), line(windows[1].Start)},
			[]cxBlock{{Text: "A.", Lines: []string{"During the pause of c4 from 1.000s to 2.000s (1s)."}},
				{Text: "B.", Lines: []string{"During the pause of c4 from 1.000s to 2.000s (1s).", "During the partition of redis from 3.000s to 4.000s (1s)."}}}},
		{"an instant fault, its detail, and one still on",
			[]string{"C.", line(windows[2].Start), line(windows[3].Start)},
			[]cxBlock{{Text: "C.", Lines: []string{"During the clock-jump of c1 at 5.000s: jump -9.9s.", "During the crash of c2 from 6.000s, still on at the end."}}}},
		{"a fault not in the history keeps its words, not the process number",
			[]string{"D.", "  during fault: #99 7.000s p-1 start pause targets=[c9] (pause for 1s)"},
			[]cxBlock{{Text: "D.", Lines: []string{"during fault: #99 7.000s start pause targets=[c9] (pause for 1s)"}}}},
		{"an indented line first opens a block", []string{line(windows[0].Start)},
			[]cxBlock{{Text: "During the pause of c4 from 1.000s to 2.000s (1s)."}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, explanationBlocks(tc.lines, windows))
		})
	}
}

func TestFaultNameSaysWhatTheFaultIs(t *testing.T) {
	rows, _ := scheduleRows(map[string]any{"faults": []any{
		map[string]any{"kind": "pause", "at": "5.1s", "targets": []string{"c2"}},
		map[string]any{"kind": "delay", "from": []string{"c1"}, "to": []string{"c2", "c3"}},
		map[string]any{"kind": "partition", "groups": []any{[]string{"c1"}, []string{"redis"}}},
	}}, nil)
	require.Len(t, rows, 3)
	assert.Equal(t, "fault 1 (pause c2)", faultName(0, "pause", &rows[0]))
	assert.Equal(t, "fault 2 (delay c1 → c2, c3)", faultName(1, "delay", &rows[1]))
	assert.Equal(t, "fault 3 (partition groups c1, redis)", faultName(2, "partition", &rows[2]))
	assert.Equal(t, "fault 5 (crash)", faultName(4, "crash", nil), "a fault the schedule does not list")
}

func TestFoldBlocksNeverFoldsASingleLine(t *testing.T) {
	blocks := []cxBlock{{Text: "a", Lines: []string{"a1"}}, {Text: "b"}, {Text: "c"}, {Text: "d"}, {Text: "e"}, {Text: "f"}}
	open, closed, folded := foldBlocks(blocks, 6)
	assert.Len(t, open, 6, "seven lines: the seventh is shown rather than folded alone")
	assert.Empty(t, closed)
	assert.Zero(t, folded)

	open, closed, folded = foldBlocks(append(blocks, cxBlock{Text: "g"}), 6)
	assert.Len(t, open, 5, "a with its fault line, then b to e: six lines")
	assert.Equal(t, []cxBlock{{Text: "f"}, {Text: "g"}}, closed)
	assert.Equal(t, 2, folded)

	open, _, _ = foldBlocks([]cxBlock{{Text: "x", Lines: make([]string, 9)}, {Text: "y"}, {Text: "z"}}, 6)
	assert.Len(t, open, 1, "the first finding is shown whatever its length")
}
