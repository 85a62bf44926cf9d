package reports

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func renderHTML(t *testing.T, r Run, files map[string]string) string {
	t.Helper()
	v := newView(r.Events)
	plots, err := renderPlots(v)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, writeHTML(&b, r, v, plots, files))
	return b.String()
}

// inOrder asserts that the parts appear in s in this order.
func inOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if !assert.GreaterOrEqual(t, i, 0, "%q should come after %q", p, s[max(0, at-40):at]) {
			return
		}
		at += i + len(p)
	}
}

func TestReportPutsTheVerdictFirst(t *testing.T) {
	page := renderHTML(t, GCPauseRun(false), map[string]string{"history": HistoryFile})
	inOrder(t, page,
		`<div class="result" id="overall">INVALID</div>`,
		"Safety violated: critical-sections and mutual-exclusion found a history the lock must never allow.",
		"workload fenced-counter · 2 clients · fenced storage · 15.009s of history · 1 fault · exit code 1",
		`data-check="critical-sections" data-result="invalid"`,
		`data-check="mutual-exclusion" data-result="invalid"`,
		`<pre id="replay"><span class="w">locklab</span> <span class="w">run</span> <span class="w">--nemesis-file gc.json</span> <span class="w">--seed 1</span> <span class="w">--out runs/gc</span></pre>`,
		`id="plot-timeline"`, `id="plot-timeline-overlap"`,
		`id="counterexample"`, "Lost update on &#34;k&#34;",
		"Overlap of 5ms on &#34;k&#34; from 10.002s to 10.007s",
		`id="plot-latency-raw"`, `id="plot-latency-quantiles"`, `id="plot-rate"`,
		`id="stats"`, "20.0</b><span>messages per acquisition",
		`id="faults"`, "<td>pause</td><td>after c1&#39;s read</td><td>15s</td><td>[c1]</td>",
		"<td>pause</td><td>c1</td><td class=\"num\">0.005s</td><td class=\"num\">15.005s</td>",
		`id="config"`, `&#34;system&#34;: &#34;redis&#34;`,
		`<a href="history.jsonl">history.jsonl</a>`)
	assert.NotContains(t, page, "Porcupine visualization", "no attachment, no link")
}

func TestReportVerdicts(t *testing.T) {
	tests := []struct {
		name         string
		verdicts     []models.Verdict
		overall      string
		banner, line string
	}{
		{"all valid", []models.Verdict{{Check: "a", Result: models.Valid}, {Check: "b", Result: models.Valid}},
			"VALID", `class="banner valid"`, "Every check passed (2 of 2)."},
		{"unknown is not a pass", []models.Verdict{{Check: "a", Result: models.Valid}, {Check: "b", Result: models.Unknown, Reason: "budget"}},
			"UNKNOWN", `class="banner unknown"`, "No check failed, but b could not decide; this is not a pass."},
		{"a liveness failure", []models.Verdict{{Check: "availability", Result: models.Invalid, Liveness: true}},
			"INVALID", `class="banner invalid"`, "No safety check failed, but availability failed"},
		{"no verdicts", nil, "NOT CHECKED", `class="banner not-checked"`, "No check ran on this history"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := GCPauseRun(true)
			r.Verdicts = tc.verdicts
			page := renderHTML(t, r, nil)
			assert.Contains(t, page, `id="overall">`+tc.overall+"<")
			assert.Contains(t, page, tc.banner)
			assert.Contains(t, page, tc.line)
		})
	}
}

func TestReportLinksThePorcupineVisualization(t *testing.T) {
	page := renderHTML(t, GCPauseRun(false), map[string]string{"porcupine: critical-sections": "porcupine-k.html", "history": HistoryFile})
	assert.Contains(t, page, `Porcupine visualization of the history:
  <a href="porcupine-k.html">critical-sections</a>`)
}

func TestReportIsSelfContained(t *testing.T) {
	page := renderHTML(t, GCPauseRun(false), map[string]string{"history": HistoryFile})
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	imgs := 0
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		assert.NotEqual(t, "link", n.Data, "no external stylesheet")
		assert.NotEqual(t, "iframe", n.Data)
		for _, a := range n.Attr {
			switch a.Key {
			case "src":
				assert.True(t, strings.HasPrefix(a.Val, "data:image/png;base64,"), "<%s src> is inline, not %.40q", n.Data, a.Val)
				if n.Data == "img" {
					imgs++
				}
			case "href":
				assert.NotContains(t, a.Val, "://", "links stay in the run directory")
			}
		}
	}
	assert.Equal(t, 5, imgs, "every plot is embedded")
	assert.NotContains(t, page, "url(")
}

// TestReportPrintsDurationsOneWay: every duration on the page is in
// history.FormatDuration's notation (a schedule's nanoseconds rounded, latency
// tables in the same units as the explanations), counts agree with their
// nouns, and the replay command wraps only between words.
func TestReportPrintsDurationsOneWay(t *testing.T) {
	r := GCPauseRun(false)
	r.Schedule = map[string]any{"faults": []any{
		map[string]any{"kind": "pause", "at": "1.590943612s", "duration": "7.283105153s", "targets": []string{"c1"}},
		map[string]any{"kind": "clock-jump", "at": "2s", "amount": "-9.977123456s", "targets": []string{"redis"}},
		map[string]any{"kind": "pause", "duration": "1s", "targets": []string{"c2"},
			"after": map[string]any{"node": "c2", "f": "acquire", "delay": "10.0004ms"}},
	}}
	r.Config = map[string]any{"clients": 1}
	r.Verdicts = append(r.Verdicts, models.Verdict{Check: "one", Result: models.Invalid, Counterexample: &models.Counterexample{
		Explanation: make([]string, maxCxLines+1), Events: r.Events[:1]}})
	r.Command = `locklab run --system redis -o 'ttl=10s lease' --fence-reads --out /tmp/a-very-long-directory-name`
	page := renderHTML(t, r, nil)
	for _, want := range []string{
		"<td>pause</td><td>at 1.591s</td><td>7.283s</td>",
		"<td>clock-jump</td><td>at 2s</td><td></td><td>[redis]</td><td>amount=-9.977s</td>",
		"<td>after c2&#39;s acquire &#43; 10ms</td>",
		"1 client · ",
		"the event that shows it",
		"1 more line not shown",
		`<td class="num">9.996s</td>`, // c2's acquire, in the latency table
		`<span class="w">-o &#39;ttl=10s lease&#39;</span> <span class="w">--fence-reads</span> <span class="w">--out /tmp/a-very-long-directory-name</span>`,
	} {
		assert.Contains(t, page, want)
	}
	for _, never := range []string{"1.590943612s", "7.283105153s", " ms<", "1 clients", "the 1 events", "1 more lines", "word-break: break-all", "in nanoseconds"} {
		assert.NotContains(t, page, never)
	}
}

func TestShellWordsKeepFlagsWithTheirValues(t *testing.T) {
	assert.Equal(t, []string{"locklab", "run", "--seed 7", "--fence-reads", "--time=1m", "-o 'a b'", "--out x"},
		shellWords(`locklab run  --seed 7 --fence-reads --time=1m -o 'a b' --out x`))
	assert.Empty(t, shellWords(""))
}

func TestLongTablesAreCappedAndSaySo(t *testing.T) {
	var b historyBuilder
	for i := range 250 {
		b.fault("clock-jump", []string{"redis"}, float64(i), float64(i))
	}
	faults := make([]any, 130)
	for i := range faults {
		faults[i] = map[string]any{"kind": "clock-jump", "at": "1s", "amount": "-2s", "targets": []string{"redis"}}
	}
	r := checkedRun(b.build(), map[string]any{"faults": faults})
	r.Verdicts = []models.Verdict{{Check: "x", Result: models.Invalid, Counterexample: &models.Counterexample{
		Explanation: make([]string, 70), Events: make([]history.Event, 130)}}}
	page := renderHTML(t, r, nil)
	assert.Contains(t, page, "30 more faults not shown (see schedule.json)")
	assert.Contains(t, page, "50 more fault windows not shown (see history.jsonl)")
	assert.Contains(t, page, "10 more lines not shown (see results.json)")
	assert.Contains(t, page, "30 more events not shown (see results.json)")
	assert.Contains(t, page, "<td>amount=-2s</td>", "fields without a column of their own are listed")
	assert.Equal(t, maxScheduleRows+maxFaultRows, strings.Count(page, "<td>clock-jump</td><td>"), "one row per fault shown")
}

func TestRegenerateReproducesTheRunsReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r := GCPauseRun(true)
	r.Attachments = []Attachment{{Name: "porcupine-k.html", Label: "porcupine: critical-sections", Write: func(w io.Writer) error {
		_, err := io.WriteString(w, "<html></html>")
		return err
	}}}
	require.NoError(t, WriteDir(dir, r))
	written := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		written[e.Name()] = b
	}
	for _, f := range []string{ReportFile, "timeline.png", "timeline.svg", "timeline-overlap.png", "latency-raw.svg", "rate.png"} {
		require.Contains(t, written, f)
	}
	assert.Contains(t, string(written[ReportFile]), `<a href="porcupine-k.html">critical-sections</a>`)
	var res Results
	require.NoError(t, json.Unmarshal(written[ResultsFile], &res))
	assert.Equal(t, ReportFile, res.Files["report"])
	assert.Equal(t, "timeline.svg", res.Files["plot:timeline.svg"])

	w, err := Regenerate(dir)
	require.NoError(t, err)
	assert.Equal(t, ReportFile, w.Report)
	for _, f := range append([]string{ReportFile}, w.Plots...) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(written[f], b), "%s regenerated from the directory differs from the one the run wrote", f)
	}
}

func TestRegenerateRemovesAStaleCloseUp(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, GCPauseRun(true)))
	require.FileExists(t, filepath.Join(dir, "timeline-overlap.png"))
	require.NoError(t, WriteDir(dir, checkedRun(longHistory(2, 5e9), nil)))
	assert.NoFileExists(t, filepath.Join(dir, "timeline-overlap.png"), "a run without overlap must not show an old close-up")
}

func TestAHistoryWithoutResultsGetsAReport(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteFileAtomic(filepath.Join(dir, HistoryFile), func(w io.Writer) error {
		return history.Write(w, gcPauseHistory(false))
	}))
	_, err := Regenerate(dir)
	require.NoError(t, err)
	page, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="overall">NOT CHECKED<`)
	assert.Contains(t, string(page), "messages per acquisition is not known")
	assert.FileExists(t, filepath.Join(dir, "timeline.png"))
}

func TestReadDirNamesWhatIsBroken(t *testing.T) {
	goodHistory := func(w io.Writer) error { return history.Write(w, gcPauseHistory(false)) }
	tests := []struct {
		name    string
		results string
		history func(io.Writer) error
		sched   string
		want    string
	}{
		{"results.json is not JSON", `{"format":`, goodHistory, "", "results.json: unexpected end of JSON input"},
		{"results.json is something else", `{"format":"other"}`, goodHistory, "", `results.json: field "format" is "other", want "locklab-results"`},
		{"the history is missing", `{"format":"locklab-results","files":{"history":"h.jsonl"}}`, nil, "", "h.jsonl: no such file"},
		{"the history is malformed", `{"format":"locklab-results"}`, func(w io.Writer) error {
			_, err := io.WriteString(w, "{\"index\":0,\"time\":0,\"process\":0,\"type\":\"ok\",\"f\":\"read\"}\n")
			return err
		}, "", "history.jsonl:1:"},
		{"the schedule is malformed", `{"format":"locklab-results","files":{"schedule":"schedule.json"}}`, goodHistory, "[", "schedule.json: unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, ResultsFile), []byte(tc.results), 0o644))
			if tc.history != nil {
				require.NoError(t, WriteFileAtomic(filepath.Join(dir, HistoryFile), tc.history))
			}
			if tc.sched != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, ScheduleFile), []byte(tc.sched), 0o644))
			}
			_, _, err := ReadDir(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), dir, "the error names the file")
		})
	}
}

func FuzzScheduleTable(f *testing.F) {
	f.Add([]byte(`{"faults":[{"kind":"pause","targets":["c1"],"duration":"15s","after":{"node":"c1","f":"read","nth":2,"delay":"1ms"}}]}`))
	f.Add([]byte(`{"faults":[{"kind":"partition","groups":[["c1"],["redis"]],"from":["a"],"to":["b"],"at":"3s","drift":0.01}]}`))
	f.Add([]byte(`{"faults":"no"}`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		rows, more := scheduleRows(v, []FaultOutcome{{Fault: 0, Kind: "pause", DidNotFire: "never"}, {Fault: 1, Fired: true}})
		assert.LessOrEqual(t, len(rows), maxScheduleRows)
		assert.GreaterOrEqual(t, more, 0)
	})
}

// TestReportSaysTheRunIsAsItsScenarioExpects: a fixed variant that is
// INVALID as its scenario expects gets the calm banner and says so under
// the headline; a surprise keeps the verdict's colour and says what differed.
func TestReportSaysTheRunIsAsItsScenarioExpects(t *testing.T) {
	r := GCPauseRun(true)
	r.Expected = &Expected{Scenario: "kleppmann-gc-pause", Variant: "redis-fixed", Match: true,
		Verdicts: map[string]models.Result{"critical-sections": models.Valid, "mutual-exclusion": models.Invalid}}
	page := renderHTML(t, r, map[string]string{"history": HistoryFile})
	inOrder(t, page, `<header class="banner expected">`, `<div class="result" id="overall">INVALID</div>`,
		`<p class="expected" id="expected">As scenario kleppmann-gc-pause/redis-fixed expects (critical-sections valid, mutual-exclusion invalid).</p>`)

	r.Expected = &Expected{Scenario: "kleppmann-gc-pause", Variant: "redis-fixed", Mismatches: []string{"critical-sections: expected valid, got invalid"}}
	page = renderHTML(t, r, map[string]string{"history": HistoryFile})
	inOrder(t, page, `<header class="banner invalid">`,
		`<p class="expected" id="expected">Not as scenario kleppmann-gc-pause/redis-fixed expects: critical-sections: expected valid, got invalid.</p>`)
}
