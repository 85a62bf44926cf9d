package sweep

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/reports"
)

// The page of a searched safety matrix answers "which lock should I use?":
// first, for each fault model a reader recognises, the designs that kept the
// data safe, cheapest first, and beside each design that corrupted it the
// story of its shrunk counterexample; then the full table, every cell with
// its evidence; then safety against cost, one numbered point per design.

//go:embed searched_page.html.tmpl
var searchedTemplate string

// FaultModel is a failure model a reader recognises ("my processes can
// pause") and the fault families of the matrix that make it.
type FaultModel struct {
	// Key names the model in the page's links (matrix.html#model-pause).
	Key string
	// Name is the model in a reader's words.
	Name string
	// Columns are the fault families; nil: every column of the matrix.
	Columns []string
}

// FaultModels are the page's fault models, in the order it shows them.
var FaultModels = []FaultModel{
	{Key: "pause", Name: "My processes can pause", Columns: []string{"pause"}},
	{Key: "clocks", Name: "Clocks can jump", Columns: []string{"clock-jump", "clock-drift"}},
	{Key: "network", Name: "The network can partition", Columns: []string{"partition", "delay"}},
	{Key: "crash", Name: "Nodes crash", Columns: []string{"crash"}},
	{Key: "all", Name: "All of it", Columns: nil},
}

// WriteSearchedPage writes the page of a searched safety matrix into dir:
// matrix.html, self-contained (style inline, the plot a data URI), and the
// safety-against-cost plot as safety-cost.png and safety-cost.svg. Each file
// is written to a temporary file and renamed, so a reader never sees half a
// page. A cell whose column is not one of the matrix's is refused.
func WriteSearchedPage(dir string, m SearchedMatrix) error {
	v, err := newSearchedView(m)
	if err != nil {
		return fmt.Errorf("matrix page: %w", err)
	}
	fig, err := plotSearched(v)
	if err != nil {
		return fmt.Errorf("matrix page: %w", err)
	}
	v.Plot = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(fig.PNG))
	v.Unplotted = fig.Unplotted
	var page bytes.Buffer
	if err := searchedPage.Execute(&page, v); err != nil {
		return fmt.Errorf("matrix page: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{PlotName + ".png", fig.PNG}, {PlotName + ".svg", fig.SVG}, {MatrixHTML, page.Bytes()}} {
		if err := reports.WriteFileAtomic(filepath.Join(dir, f.name), func(w io.Writer) error {
			_, err := w.Write(f.data)
			return err
		}); err != nil {
			return fmt.Errorf("matrix page: %w", err)
		}
	}
	return nil
}

// searchedView is what the page's template renders.
type searchedView struct {
	M       SearchedMatrix
	Rows    []*pageRow
	Columns []string
	Models  []*modelView
	Time    string
	// Plot is the PNG of the plot as a data URI; Unplotted the rows without
	// a cost, which the plot leaves out.
	Plot      template.URL
	Unplotted []string
}

// pageRow is a row of the matrix as the page shows it.
type pageRow struct {
	// N numbers the row in the table, the plot and its legend (from 1).
	N   int
	Row SearchedRow
	// Name is the design and its storage mode ("Redis SET NX PX + Lua
	// release · unfenced").
	Name  string
	Cells []pageCell
	// Kept counts the families in which the search fired faults and found no
	// corruption; Worst is the row's plot class (see rowClass).
	Kept  int
	Worst string
}

// pageCell is a row under one fault family.
type pageCell struct {
	Column string
	// Cell is nil when the row has no cell for the column.
	Cell *SearchedCell
	// Class is the cell's colour class and Label its verdict in words.
	Class, Label string
}

// modelView is a fault model with the designs sorted into what they did
// under it.
type modelView struct {
	FaultModel
	// Families are the model's columns present in the matrix.
	Families []string
	// Kept kept the data safe; Corrupted corrupted it; Broke broke the lock
	// with nothing but the lock guarding the data (no corruption seen yet);
	// Undecided were not decided (checks undecided, or no fault fired).
	// Each is sorted by cost, cheapest first.
	Kept, Corrupted, Broke, Undecided []modelEntry
}

// modelEntry is one design under a fault model.
type modelEntry struct {
	Row *pageRow
	// Found is what the search found in a few words: the evidence of a kept
	// design ("no corruption found in 388 runs with a pause fired ..."), the
	// family and run of a finding.
	Found string
	// Saved says what saved the data when the lock broke ("lock broke; saved
	// by fencing tokens checked by the storage"); "" when it did not break.
	Saved string
	// Notes are what else a reader should know (a lock stuck, a family in
	// which no fault fired).
	Notes []string
	// Finding is the counterexample shown beside a corrupted or broken
	// design.
	Finding *Finding
}

// Cheapest is the model's cheapest design that kept the data safe, nil when
// none did (or none has a cost).
func (m *modelView) Cheapest() *modelEntry {
	if len(m.Kept) == 0 || m.Kept[0].Row.Row.Cost == nil {
		return nil
	}
	return &m.Kept[0]
}

// Cell classes beyond the verdicts: a broken lock with nothing but the lock
// guarding the data, and a column the row has no cell for.
const (
	classBrokeUnguarded = "lock-broke-unguarded"
	classNotSearched    = "not-searched"
)

func newSearchedView(m SearchedMatrix) (*searchedView, error) {
	if len(m.Columns) == 0 {
		return nil, fmt.Errorf("the matrix has no columns")
	}
	v := &searchedView{M: m, Columns: m.Columns, Time: time.Duration(m.Time).String()}
	for i, r := range m.Rows {
		pr := &pageRow{N: i + 1, Row: r, Name: r.Design + " · " + r.Storage}
		byColumn := map[string]*SearchedCell{}
		for j := range r.Cells {
			c := &r.Cells[j]
			if !slices.Contains(m.Columns, c.Column) {
				return nil, fmt.Errorf("row %s (%s): cell of column %q, which is not one of the matrix's columns (%s)",
					r.ID, pr.Name, c.Column, strings.Join(m.Columns, ", "))
			}
			if byColumn[c.Column] != nil {
				return nil, fmt.Errorf("row %s (%s): two cells of column %q", r.ID, pr.Name, c.Column)
			}
			byColumn[c.Column] = c
		}
		for _, col := range m.Columns {
			c := byColumn[col]
			pc := pageCell{Column: col, Cell: c, Class: classNotSearched, Label: "not searched"}
			if c != nil {
				pc.Class, pc.Label = cellClass(c.Verdict, r.Guard), verdictLabel(c.Verdict, r.Guard)
				if c.Verdict != VerdictCorrupted && c.Verdict != VerdictUnknown && c.Verdict != VerdictNoFault && c.Evidence.Fired > 0 {
					pr.Kept++
				}
			}
			pr.Cells = append(pr.Cells, pc)
		}
		pr.Worst = rowClass(pr)
		v.Rows = append(v.Rows, pr)
	}
	for _, fm := range FaultModels {
		if mv := newModelView(fm, m.Columns, v.Rows); mv != nil {
			v.Models = append(v.Models, mv)
		}
	}
	return v, nil
}

// cellClass is the colour class of a verdict: the verdict itself, except a
// broken lock with no guard, which nothing kept from corrupting the data.
func cellClass(verdict, guard string) string {
	if verdict == VerdictLockBroke && guard == "" {
		return classBrokeUnguarded
	}
	return verdict
}

// verdictLabel is a cell's verdict in words. A broken lock names its guard
// only in the row's header, where the guard's own words are.
func verdictLabel(verdict, guard string) string {
	switch verdict {
	case VerdictCorrupted:
		return "data corrupted"
	case VerdictLockBroke:
		if guard == "" {
			return "lock broke, no corruption seen"
		}
		return "lock broke, guard saved the data"
	case VerdictTokenOrder:
		return "tokens out of order"
	case VerdictLiveness:
		return "lock stuck (liveness)"
	case VerdictUnknown:
		return "undecided"
	case VerdictNoViolation:
		return "no violation found"
	case VerdictNoFault:
		return "no fault fired"
	}
	return verdict
}

// kindLabel is the kind of a finding in words.
func kindLabel(kind string) string {
	switch kind {
	case VerdictLockBroke:
		return "lock broke"
	case VerdictCorrupted, VerdictTokenOrder, VerdictLiveness:
		return verdictLabel(kind, "")
	}
	return kind
}

// rowClass is the colour of a row's point in the plot: whether the search
// corrupted its data anywhere, broke its lock with nothing guarding the data,
// broke its lock but the guard held, or found neither.
func rowClass(pr *pageRow) string {
	has := func(class string) bool {
		return slices.ContainsFunc(pr.Cells, func(c pageCell) bool { return c.Class == class })
	}
	switch {
	case has(VerdictCorrupted):
		return VerdictCorrupted
	case has(classBrokeUnguarded):
		return classBrokeUnguarded
	case has(VerdictLockBroke) || has(VerdictTokenOrder):
		return VerdictLockBroke
	}
	return VerdictNoViolation
}

// newModelView sorts the rows into what they did under a fault model; nil
// when the matrix has none of the model's columns.
func newModelView(fm FaultModel, columns []string, rows []*pageRow) *modelView {
	mv := &modelView{FaultModel: fm}
	for _, c := range columns {
		if fm.Columns == nil || slices.Contains(fm.Columns, c) {
			mv.Families = append(mv.Families, c)
		}
	}
	if len(mv.Families) == 0 {
		return nil
	}
	for _, pr := range rows {
		e := modelEntry{Row: pr}
		var cells []*SearchedCell
		var notSearched []string
		for _, pc := range pr.Cells {
			if !slices.Contains(mv.Families, pc.Column) {
				continue
			}
			if pc.Cell == nil {
				notSearched = append(notSearched, pc.Column)
				continue
			}
			cells = append(cells, pc.Cell)
		}
		// firstOf is the first cell (in column order) with a finding of kind
		// verdict, and the families of the others.
		firstOf := func(verdict string) (*SearchedCell, *Finding, []string) {
			var first *SearchedCell
			var also []string
			for _, c := range cells {
				if c.Verdict != verdict {
					continue
				}
				if first == nil {
					first = c
				} else {
					also = append(also, c.Column)
				}
			}
			if first == nil {
				return nil, nil, nil
			}
			for i := range first.Findings {
				if first.Findings[i].Kind == verdict {
					return first, &first.Findings[i], also
				}
			}
			return first, nil, also
		}
		if c, f, also := firstOf(VerdictCorrupted); c != nil {
			e.Finding = f
			e.Found = "data corrupted under " + c.Column + foundIn(f) + alsoUnder(also)
			mv.Corrupted = append(mv.Corrupted, e)
			continue
		}
		if pr.Row.Guard == "" {
			if c, f, also := firstOf(VerdictLockBroke); c != nil {
				e.Finding = f
				e.Found = "lock broke under " + c.Column + foundIn(f) + alsoUnder(also) + "; nothing but the lock guards the data"
				mv.Broke = append(mv.Broke, e)
				continue
			}
		}
		var tested, quiet, undecided []*SearchedCell
		for _, c := range cells {
			switch {
			case c.Verdict == VerdictUnknown:
				undecided = append(undecided, c)
			case c.Verdict == VerdictNoFault || c.Evidence.Fired == 0:
				quiet = append(quiet, c)
			default:
				tested = append(tested, c)
			}
		}
		for _, c := range quiet {
			e.Notes = append(e.Notes, fmt.Sprintf("%s: no fault fired in %s runs, not tested", c.Column, thousands(c.Evidence.Runs)))
		}
		if len(notSearched) > 0 {
			e.Notes = append(e.Notes, strings.Join(notSearched, ", ")+": not searched")
		}
		if len(undecided) > 0 || len(tested) == 0 {
			switch {
			case len(undecided) > 0:
				e.Found = undecided[0].Column + ": " + undecided[0].Evidence.Line
			default:
				e.Found = "not tested: no fault of these families fired"
				if len(mv.Families) == 1 {
					e.Found = "not tested: no fault of this family fired"
				}
			}
			mv.Undecided = append(mv.Undecided, e)
			continue
		}
		e.Found = keptEvidence(tested)
		var broke, stuck, tokens []string
		for _, c := range tested {
			switch c.Verdict {
			case VerdictLockBroke:
				broke = append(broke, c.Column)
			case VerdictLiveness:
				stuck = append(stuck, c.Column)
			case VerdictTokenOrder:
				tokens = append(tokens, c.Column)
			}
		}
		if len(broke) > 0 {
			e.Saved = "lock broke; saved by " + pr.Row.Guard
			if len(mv.Families) > 1 {
				e.Saved = "lock broke (" + strings.Join(broke, ", ") + "); saved by " + pr.Row.Guard
			}
		}
		if len(tokens) > 0 {
			e.Notes = append(e.Notes, "tokens went out of order under "+strings.Join(tokens, ", "))
		}
		if len(stuck) > 0 {
			e.Notes = append(e.Notes, "the lock got stuck (liveness) under "+strings.Join(stuck, ", "))
		}
		mv.Kept = append(mv.Kept, e)
	}
	for _, list := range [][]modelEntry{mv.Kept, mv.Corrupted, mv.Broke, mv.Undecided} {
		slices.SortStableFunc(list, func(a, b modelEntry) int { return costCompare(a.Row.Row.Cost, b.Row.Row.Cost) })
	}
	return mv
}

// foundIn is ", run 7 of the search" for a finding.
func foundIn(f *Finding) string {
	if f == nil || f.RunsTo <= 0 {
		return ""
	}
	return ", run " + thousands(f.RunsTo) + " of the search"
}

// alsoUnder is "; also under crash, random" for the other families of a
// finding.
func alsoUnder(families []string) string {
	if len(families) == 0 {
		return ""
	}
	return "; also under " + strings.Join(families, ", ")
}

// keptEvidence is the evidence of a design that kept the data safe in the
// given cells, briefly: the runs in which a fault fired and, for one family,
// the 95% bound on the rate of corruption per run.
func keptEvidence(cells []*SearchedCell) string {
	if len(cells) == 1 {
		c := cells[0]
		s := fmt.Sprintf("no corruption found in %s runs with %s fired", thousands(c.Evidence.Fired), faultNoun(c.Column))
		if c.Evidence.Bound > 0 {
			s += fmt.Sprintf(" (<\u00a0%s per run, 95%%)", percent(c.Evidence.Bound))
		}
		return s + beyondNote(cells)
	}
	least := cells[0].Evidence.Fired
	for _, c := range cells[1:] {
		least = min(least, c.Evidence.Fired)
	}
	return fmt.Sprintf("no corruption found in %d families (≥\u00a0%s runs each with a fault fired)", len(cells), thousands(least)) + beyondNote(cells)
}

// beyondNote says which of the system's timeouts the runs were shorter than
// (Evidence.Beyond): "; runs shorter than lock-delay 1m0s".
func beyondNote(cells []*SearchedCell) string {
	for _, c := range cells {
		if len(c.Evidence.Beyond) > 0 {
			return "; runs shorter than " + strings.Join(c.Evidence.Beyond, " and ") + ", not searched beyond"
		}
	}
	return ""
}

// faultNoun is one fault of a family in words ("a pause").
func faultNoun(column string) string {
	switch column {
	case "pause":
		return "a pause"
	case "crash":
		return "a crash"
	case "partition":
		return "a partition"
	case "clock-jump":
		return "a clock jump"
	case "clock-drift":
		return "clock drift"
	case "delay":
		return "a message delay"
	case "random":
		return "a random fault"
	}
	return "a " + column + " fault"
}

// costCompare orders costs cheapest first: by median acquire latency, then
// the 99th percentile, then the most critical sections per second; a row
// without a cost last.
func costCompare(a, b *Cost) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Or(cmp.Compare(a.AcquireP50MS, b.AcquireP50MS), cmp.Compare(a.AcquireP99MS, b.AcquireP99MS),
		cmp.Compare(b.CSPerSecond, a.CSPerSecond))
}

// thousands writes n with thousands separators: 51,565.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// milliseconds writes a latency: 0.9 ms, 14 ms, 120 ms.
func milliseconds(ms float64) string {
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

var searchedPage = template.Must(template.New("searched").Funcs(template.FuncMap{
	"ms":        milliseconds,
	"thousands": thousands,
	"rate":      func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"join":      strings.Join,
	"kind":      kindLabel,
	"count":     count,
	"add":       func(a, b int) int { return a + b },
	"nbhyphen":  func(s string) string { return strings.ReplaceAll(s, "-", "\u2011") },
	// nbsp keeps a bound with its number: "< 0.77%", "≥ 400".
	"nbsp": func(s string) string { return strings.NewReplacer("< ", "<\u00a0", "≥ ", "≥\u00a0").Replace(s) },
	"report": func(dir string) string {
		if dir == "" {
			return ""
		}
		return strings.TrimSuffix(dir, "/") + "/report.html"
	},
}).Parse(searchedTemplate))
