package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
	"sync"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
)

// Visualization is Porcupine's HTML view of an illegal stretch of history:
// the operations per client, the longest consistent orders and where they get
// stuck, with the nemesis fault windows as annotations (tag "nemesis").
// Timestamps in it are history indexes; descriptions give the true times.
// Its rows are named after the clients (Porcupine numbers them), the first
// "start" for the state the stretch starts from.
type Visualization struct {
	model porcupine.Model
	info  porcupine.LinearizationInfo
	// rows names the rows, when set (nil: Porcupine's numbers).
	rows func() []string
	// build, when set, makes info on first use (false: the analysis ran out
	// of its time budget): a visualization is only rendered when a report is
	// written, and most runs are never written.
	build func() (porcupine.LinearizationInfo, bool)
	once  sync.Once
	ok    bool
	// release, when set, hands the check's search memory, which the model
	// and info point into, back for the next check (Release).
	release  func()
	released bool
}

// Release gives the memory the visualization points into back to the check
// that made it, for the next check to reuse: a sweep that has classified a
// run and keeps none of it calls it. The visualization must not be used
// afterwards (it is then no longer Available). Releasing twice, or a nil
// visualization, does nothing.
func (v *Visualization) Release() {
	if v == nil || v.released {
		return
	}
	v.released = true
	v.once.Do(func() {}) // never built from now on
	v.ok, v.model, v.info, v.build, v.rows = false, porcupine.Model{}, porcupine.LinearizationInfo{}, nil, nil
	if r := v.release; r != nil {
		v.release = nil
		r()
	}
}

// made makes the visualization's content on first use and reports whether
// there is any.
func (v *Visualization) made() bool {
	v.once.Do(func() {
		if v.build == nil {
			v.ok = true
			return
		}
		v.info, v.ok = v.build()
	})
	return v.ok
}

// Available reports whether the visualization can be rendered: false when
// the analysis behind it ran out of the check's time budget (a step budget
// cannot run out: the analysis takes the steps the check's search took). The
// analysis runs on the first call of Available or WriteHTML.
func (v *Visualization) Available() bool { return v != nil && v.made() }

// WriteHTML writes the visualization as a self-contained HTML page.
func (v *Visualization) WriteHTML(w io.Writer) error {
	if v.released {
		return fmt.Errorf("porcupine visualization: released (its search memory went to a later check)")
	}
	if !v.made() {
		return fmt.Errorf("porcupine visualization: the analysis ran out of its time budget")
	}
	var page bytes.Buffer
	if err := porcupine.Visualize(v.model, v.info, &page); err != nil {
		return fmt.Errorf("porcupine visualization: %w", err)
	}
	out := page.String()
	if v.rows != nil {
		out = nameRows(out, v.rows())
	}
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("porcupine visualization: %w", err)
	}
	return nil
}

// pageEdits are the edits nameRows makes to Porcupine's page (v1.3.1):
// its script labels a client's row with its number, twice (to measure the
// labels, then to draw them); and its legend is an SVG 660 wide whose last
// word, "[ jump to first error ]", starts at 520 and ends past 660 in some
// fonts, clipped. A rowNames array, set before the page renders, names the
// rows.
var pageEdits = []struct{ old, new string }{
	{"const tag = i < realClients ? i.toString() : sortedTags[i - realClients]",
		"const tag = i < realClients ? rowName(i) : sortedTags[i - realClients]"},
	{"text.textContent = i < realClients ? i : sortedTags[i - realClients]",
		"text.textContent = i < realClients ? rowName(i) : sortedTags[i - realClients]"},
	{`<svg xmlns="http://www.w3.org/2000/svg" width="660" height="20" viewBox="0 0 660 20">`,
		`<svg xmlns="http://www.w3.org/2000/svg" width="800" height="20" viewBox="0 0 800 20">`},
	{"\n      render(data)\n",
		"\n      const rowNames = %s\n      function rowName(i) { return i < rowNames.length ? rowNames[i] : String(i) }\n\n      render(data)\n"},
}

// nameRows makes Porcupine's page name its rows (rows[i] for row i) and
// widens its legend so that "jump to first error" is never clipped. A page
// that does not read as nameRows expects (another Porcupine version) is
// kept as it is, with a line at its end that names the numbered rows.
func nameRows(page string, rows []string) string {
	names, err := json.Marshal(rows)
	if err != nil {
		names = []byte("[]")
	}
	for _, e := range pageEdits {
		if strings.Count(page, e.old) != 1 {
			var key []string
			for i, r := range rows {
				key = append(key, fmt.Sprintf("%d %s", i, html.EscapeString(r)))
			}
			return strings.Replace(page, "</body>", `<p id="row-names">Rows: `+strings.Join(key, " · ")+"</p>\n</body>", 1)
		}
	}
	for _, e := range pageEdits {
		repl := e.new
		if strings.Contains(repl, "%s") {
			repl = fmt.Sprintf(repl, names)
		}
		page = strings.Replace(page, e.old, repl, 1)
	}
	return page
}

// rowNames names the rows of the visualization of batch (porcupineRows):
// "start" for the start operation's, then each process by its client's name
// from the history, with its process number when the client has several
// rows (its operation of unknown outcome stays open while it goes on as
// another process).
func rowNames(batch []linOp, events []history.Event) []string {
	procs := porcupineRows(batch)
	node := make(map[int]string, len(procs))
	for _, p := range procs {
		node[p] = ""
	}
	for _, e := range events {
		if n, ok := node[e.Process]; ok && n == "" && e.Node != "" {
			node[e.Process] = e.Node
		}
	}
	rows := map[string]int{}
	for _, p := range procs {
		rows[node[p]]++
	}
	names := []string{"start"}
	for _, p := range procs {
		n := node[p]
		switch {
		case n == "":
			n = fmt.Sprintf("p%d", p)
		case rows[n] > 1:
			n = fmt.Sprintf("%s (p%d)", n, p)
		}
		names = append(names, n)
	}
	return names
}

// visualization is the visualization of an analysed batch (nil when the
// analysis ran out of budget).
func (an analysis) visualization(spec searchSpec, events []history.Event) *Visualization {
	if !an.ok {
		return nil
	}
	info := an.info
	info.AddAnnotations(nemesisAnnotations(events, an.ops))
	return &Visualization{model: spec.model, info: info}
}

// visualize is the visualization of the illegal batch (start, batch) of a
// search with budget b: made from an when the explanation needed the
// analysis (an not nil; nil when that analysis failed), otherwise on first
// use. The analysis takes the steps the search took on the batch (the same
// algorithm), within the same step budget, so only a time budget can make
// it fail: the visualization is then not Available.
func visualize(spec searchSpec, start any, batch []linOp, b Budget, events []history.Event, an *analysis) *Visualization {
	rows := func() []string { return rowNames(batch, events) }
	if an != nil {
		v := an.visualization(spec, events)
		if v != nil {
			v.rows = rows
		}
		return v
	}
	return &Visualization{model: spec.model, rows: rows, build: func() (porcupine.LinearizationInfo, bool) {
		a := analyze(spec, start, batch, b)
		if !a.ok {
			return porcupine.LinearizationInfo{}, false
		}
		info := a.info
		info.AddAnnotations(nemesisAnnotations(events, a.ops))
		return info, true
	}}
}

// nemesisAnnotations are the fault windows that overlap the operations, on
// the history-index time line of the visualization.
func nemesisAnnotations(events []history.Event, ops []porcupine.Operation) []porcupine.Annotation {
	lo, hi := int64(-1), int64(-1)
	for _, o := range ops {
		if _, isStart := o.Input.(startOp); isStart {
			continue
		}
		if lo < 0 || o.Call < lo {
			lo = o.Call
		}
		hi = max(hi, o.Call, o.Return)
	}
	var out []porcupine.Annotation
	for _, w := range faultWindows(events) {
		start, end := int64(w.Start.Index), hi
		details := "started " + history.FormatTime(w.Start.Time)
		if w.Stop != nil {
			end = int64(w.Stop.Index)
			details += ", stopped " + history.FormatTime(w.Stop.Time)
		}
		if end < lo || start > hi {
			continue
		}
		if w.Start.Detail != "" {
			details += ": " + w.Start.Detail
		}
		out = append(out, porcupine.Annotation{
			Tag:             "nemesis",
			Start:           start,
			End:             end,
			Description:     strings.TrimSpace(w.Start.F + " " + strings.Join(w.Start.Targets, ",")),
			Details:         details,
			BackgroundColor: "#f6d5d5",
		})
	}
	return out
}
