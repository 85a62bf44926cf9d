package reports

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// ReportFile is the report's file name in a run directory, and ScreenshotFile
// the name of its screenshot (taken by `locklab report --screenshot`).
const (
	ReportFile     = "report.html"
	ScreenshotFile = "report.png"
)

// Caps on the tables of a report, so that its size stays bounded on long runs.
// A capped table says how many rows it left out.
const (
	maxScheduleRows = 100
	maxFaultRows    = 200
	maxCxLines      = 60
	shownCxLines    = 6
	maxCxEvents     = 100
)

// Labels of the report's files in results.json.
const (
	reportLabel     = "report"
	plotLabelPrefix = "plot:"
)

// PorcupinePrefix starts the label of a Porcupine visualization attachment.
const PorcupinePrefix = "porcupine:"

//go:embed report.html.tmpl
var reportTemplate string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"upper":   func(s any) string { return strings.ToUpper(fmt.Sprint(s)) },
	"time":    history.FormatTime,
	"dur":     history.FormatDuration,
	"pct":     func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"num":     func(x float64) string { return fmt.Sprintf("%.1f", x) },
	"length":  func(a, b int64) string { return history.FormatDuration(b - a) },
	"count":   func(n int, noun string) string { return history.Plural(n, noun, "") },
	"words":   shellWords,
	"fdiv":    func(a, b int) float64 { return float64(a) / float64(b) },
	"deref":   func(p any) string { return derefString(p) },
	"joinAll": func(ss []string) string { return strings.Join(ss, ", ") },
	"inc":     func(i int) int { return i + 1 },
}).Parse(reportTemplate))

// shellWords splits a command line into the words a reader keeps together:
// each flag with its value, and every other word, split at blanks outside
// quotes. The report joins them with spaces and never breaks inside one, so
// a replay command wraps only between words.
func shellWords(cmd string) []string {
	var words []string
	var cur strings.Builder
	quote := rune(0)
	for _, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			w += " " + words[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

// derefString renders an optional history field, empty for nil.
func derefString(p any) string {
	switch v := p.(type) {
	case *uint64:
		if v != nil {
			return fmt.Sprint(*v)
		}
	case *int64:
		if v != nil {
			return fmt.Sprint(*v)
		}
	}
	return ""
}

// page is what the template renders.
type page struct {
	Title, Subtitle string
	// Overall is valid, invalid, unknown, or "not checked" without verdicts.
	Overall string
	// Banner is the banner's colour: Overall, or "expected" for a run
	// whose verdicts are what its scenario expects.
	Banner string
	// Expected says whether the run is as its scenario expects ("" for a
	// run of no scenario); DataSafe what exit code 5 means, when it is the
	// run's.
	Expected, DataSafe string
	Headline           string
	ExitCode           int
	Command            string
	Verdicts           []models.Verdict
	Cx                 []cxView
	// Grants is the servers' record of grants.
	Grants grantsView
	// Timelines are the lock timelines; Plots the latency and throughput plots.
	Timelines []plotView
	Plots     []plotView
	Stats     Stats
	Ops       []opCounts
	Schedule  []scheduleRow
	// ScheduleMore and FaultsMore count rows left out of the tables.
	ScheduleMore int
	Faults       []faultWindow
	FaultsMore   int
	Config       string
	Files        []fileLink
	Porcupine    []fileLink
	// Warnings are shown under the headline (a live run's notes).
	Warnings []string
	// FaultWarning, when set, is shown in a strip of its own above the
	// verdict (the run asked for faults and none fired); FaultTitle heads it.
	FaultWarning, FaultTitle string
}

type cxView struct {
	Check string
	// Explanation is shown, Folded behind a click (FoldedLines lines),
	// LinesMore lines left out: each block a finding with its faults.
	Explanation []cxBlock
	Folded      []cxBlock
	FoldedLines int
	LinesMore   int
	Events      []history.Event
	EventsMore  int
}

type plotView struct {
	Plot
	Src template.URL
}

type opCounts struct {
	F string
	models.Counts
}

type fileLink struct{ Label, Name string }

// scheduleRow is one planned fault of the schedule; Outcome is "fired", "did
// not fire: why", or "" when not known.
type scheduleRow struct {
	Kind, When, Duration, Targets, More string
	Outcome                             string
	Missed                              bool
}

// writeHTML renders the report of r, with its plots and the other files of
// its run directory (label -> file name), to w.
func writeHTML(w io.Writer, r Run, v *view, plots []Plot, files map[string]string) error {
	pg := page{Command: r.Command, ExitCode: r.ExitCode, Verdicts: r.Verdicts,
		Stats: computeStats(v, r.Extra)}
	pg.Overall, pg.Headline = headline(r)
	pg.Banner = pg.Overall
	if e := r.Expected; e != nil {
		pg.Expected = e.Sentence() + "."
		if e.Match {
			pg.Banner = "expected" // a verdict the scenario expects is no alarm
		}
	}
	if r.ExitCode == ExitDataSafe {
		pg.DataSafe = "Exit code 5: " + DataSafeSentence + "."
	}
	pg.Title, pg.Subtitle = titles(r, v)
	windows := history.FaultWindows(v.events)
	for _, vd := range r.Verdicts {
		if vd.Counterexample != nil {
			pg.Cx = append(pg.Cx, newCxView(vd, windows))
		}
	}
	pg.Grants = newGrantsView(r.ServersRecord, r.Verdicts)
	for _, p := range plots {
		pv := plotView{Plot: p, Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(p.PNG))}
		if strings.HasPrefix(p.Name, TimelinePlot) {
			pg.Timelines = append(pg.Timelines, pv)
		} else {
			pg.Plots = append(pg.Plots, pv)
		}
	}
	sum := r.Summary
	if sum.Ops == nil {
		sum = models.Summarize(v.events)
	}
	for _, f := range sum.Functions() {
		pg.Ops = append(pg.Ops, opCounts{F: f, Counts: sum.Ops[f]})
	}
	pg.Schedule, pg.ScheduleMore = scheduleRows(r.Schedule, r.FaultOutcomes)
	fw := r.FaultWarning()
	for _, w := range r.Warnings() {
		if w != fw {
			pg.Warnings = append(pg.Warnings, w)
		}
	}
	pg.FaultTitle, pg.FaultWarning = faultStrip(r, fw)
	pg.Faults = v.faults
	if n := len(pg.Faults); n > maxFaultRows {
		pg.Faults, pg.FaultsMore = pg.Faults[:maxFaultRows], n-maxFaultRows
	}
	pg.Config = prettyJSON(r.Config)
	for _, label := range slices.Sorted(maps.Keys(files)) {
		if label == reportLabel || strings.HasPrefix(label, plotLabelPrefix) {
			continue // the report itself; plots are linked from their figures
		}
		l := fileLink{Label: label, Name: files[label]}
		pg.Files = append(pg.Files, l)
		if strings.HasPrefix(label, PorcupinePrefix) {
			l.Label = strings.TrimSpace(strings.TrimPrefix(label, PorcupinePrefix))
			pg.Porcupine = append(pg.Porcupine, l)
		}
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pg); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// headline is the overall result and one sentence saying what it means.
func headline(r Run) (string, string) {
	if len(r.Verdicts) == 0 {
		return "not checked", "No check ran on this history: there is no verdict to show."
	}
	var invalid, unknown, liveness []string
	for _, v := range r.Verdicts {
		switch {
		case v.Result == models.Invalid && v.Liveness:
			liveness = append(liveness, v.Check)
		case v.Result == models.Invalid:
			invalid = append(invalid, v.Check)
		case v.Result == models.Unknown:
			unknown = append(unknown, v.Check)
		}
	}
	overall := string(models.Overall(r.Verdicts))
	switch {
	case len(invalid) > 0:
		return overall, fmt.Sprintf("Safety violated: %s found a history the lock must never allow.", listing(invalid))
	case len(liveness) > 0:
		return overall, fmt.Sprintf("No safety check failed, but %s failed: the lock was not available as it should be.", listing(liveness))
	case len(unknown) > 0:
		return overall, fmt.Sprintf("No check failed, but %s could not decide; this is not a pass.", listing(unknown))
	}
	return overall, fmt.Sprintf("Every check passed (%d of %d).", len(r.Verdicts), len(r.Verdicts))
}

func listing(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// titles names the run from its configuration, when it has the usual fields.
func titles(r Run, v *view) (string, string) {
	cfg, _ := normalizeJSON(r.Config).(map[string]any)
	title := fmt.Sprintf("locklab run, seed %d", r.Seed)
	var parts []string
	str := func(k string) string { s, _ := cfg[k].(string); return s }
	if s := str("system"); s != "" {
		title = fmt.Sprintf("%s, seed %d", s, r.Seed)
	}
	if s := str("workload"); s != "" {
		parts = append(parts, "workload "+s)
	}
	if n, ok := cfg["clients"].(json.Number); ok {
		if c, err := n.Int64(); err == nil {
			parts = append(parts, history.Plural(int(c), "client", ""))
		}
	}
	if s := str("storage"); s != "" {
		parts = append(parts, s+" storage")
	}
	parts = append(parts, history.FormatDuration(v.end)+" of history")
	if len(v.faults) == 0 {
		parts = append(parts, "no faults")
	} else {
		parts = append(parts, history.Plural(len(v.faults), "fault", ""))
	}
	return title, strings.Join(parts, " · ")
}

// newCxView is the counterexample of vd as the page shows it: its lines
// grouped into findings with their faults (explanationBlocks), the first
// shownCxLines lines open, the rest folded, beyond maxCxLines left out.
func newCxView(vd models.Verdict, windows []history.FaultWindow) cxView {
	cx := cxView{Check: vd.Check, Events: vd.Counterexample.Events}
	lines := vd.Counterexample.Explanation
	if n := len(lines); n > maxCxLines {
		lines, cx.LinesMore = lines[:maxCxLines], n-maxCxLines
	}
	cx.Explanation, cx.Folded, cx.FoldedLines = foldBlocks(explanationBlocks(lines, windows), shownCxLines)
	if n := len(cx.Events); n > maxCxEvents {
		cx.Events, cx.EventsMore = cx.Events[:maxCxEvents], n-maxCxEvents
	}
	return cx
}

// scheduleRows renders the planned faults of a schedule ({"faults": [...]}),
// whatever produced it, with whether each fired when that is known.
func scheduleRows(schedule any, outcomes []FaultOutcome) ([]scheduleRow, int) {
	m, _ := normalizeJSON(schedule).(map[string]any)
	faults, _ := m["faults"].([]any)
	var rows []scheduleRow
	for i, f := range faults {
		if i == maxScheduleRows {
			return rows, len(faults) - maxScheduleRows
		}
		fm, _ := f.(map[string]any)
		row := scheduleRow{Kind: compact(fm["kind"]), When: faultWhen(fm), Duration: durationText(fm["duration"]),
			Targets: faultTargets(fm), More: faultMore(fm)}
		for _, o := range outcomes {
			switch {
			case o.Fault != i:
			case o.Fired:
				row.Outcome = "fired"
			default:
				row.Outcome, row.Missed = "did not fire: "+o.DidNotFire, true
			}
		}
		rows = append(rows, row)
	}
	return rows, 0
}

func faultWhen(f map[string]any) string {
	at := durationText(f["at"])
	if at == "" {
		at = "0s"
	}
	a, ok := f["after"].(map[string]any)
	if !ok {
		return "at " + at
	}
	s := fmt.Sprintf("after %s's %s", compact(a["node"]), compact(a["f"]))
	if t := compact(a["type"]); t != "" {
		s += " " + t
	}
	if n := compact(a["nth"]); n != "" {
		s += " #" + n
	}
	if d := durationText(a["delay"]); d != "" {
		s += " + " + d
	}
	if at != "0s" {
		s += ", from " + at
	}
	return s
}

func faultTargets(f map[string]any) string {
	var parts []string
	if t := compact(f["targets"]); t != "" {
		parts = append(parts, t)
	}
	if g := compact(f["groups"]); g != "" {
		parts = append(parts, "groups "+g)
	}
	if from, to := compact(f["from"]), compact(f["to"]); from != "" || to != "" {
		parts = append(parts, from+" → "+to)
	}
	return strings.Join(parts, "; ")
}

// faultMore lists the fields of a fault the other columns do not show.
func faultMore(f map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		switch k {
		case "kind", "at", "after", "duration", "targets", "groups", "from", "to":
			continue
		}
		parts = append(parts, k+"="+durationText(f[k]))
	}
	return strings.Join(parts, " ")
}

// durationText renders a schedule's duration ("1.590943612s") the way every
// duration is printed (1.591s); any other value as compact does.
func durationText(v any) string {
	if s, ok := v.(string); ok {
		if d, err := time.ParseDuration(s); err == nil {
			return history.FormatDuration(int64(d))
		}
	}
	return compact(v)
}

// compact renders a JSON value briefly: strings bare, lists comma-separated.
func compact(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, compact(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// normalizeJSON turns any JSON-serialisable value into plain JSON values
// (maps, slices, json.Number, strings, bools), so that a run rendered live and
// one read back from results.json render the same.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// prettyJSON renders v as indented JSON with sorted keys.
func prettyJSON(v any) string {
	b, err := json.MarshalIndent(normalizeJSON(v), "", "  ")
	if err != nil {
		return fmt.Sprintf("(cannot render: %v)", err)
	}
	return string(b)
}

// faultStrip is the title and the sentence of the strip that says a run saw
// no fault (or none of a kind it asked for): the warning without the words
// the title says, capitalised.
func faultStrip(r Run, warning string) (string, string) {
	if warning == "" {
		return "", ""
	}
	title := "No fault fired"
	if r.Faults != nil && !r.Faults.NoneFired {
		title = "A fault kind asked for never fired"
	}
	return title, upperFirst(strings.TrimPrefix(warning, "no fault fired: "))
}
