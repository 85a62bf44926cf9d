package sweep

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/reports"
)

// The page of a searched safety matrix answers "which lock should I use?":
// the reader ticks the fault families their system must survive ("pause +
// partition") and sees the designs whose cells kept the data safe under all
// of them — only cells whose systematic search met its bound, or, for the
// random column, which has none, said to be random-only evidence — ranked
// by what a user pays (RankingRule), and beside each design that corrupted
// the data the story of its shrunk counterexample. Then the full table, one
// compact cell per design and family with its evidence on expand, and
// safety against cost, one numbered point per design.

//go:embed searched_page.html.tmpl
var searchedTemplate string

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
	Time    string
	// Families are the columns with the words of their systematic bound,
	// each stated once; Ranked are the rows in the order of RankingRule, as
	// the page's script lists them (Data).
	Families []familyView
	Data     []jsRow
	// Ranking is RankingRule.
	Ranking string
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
	// Status is what the cell says of the data (familyStatus): statusKept,
	// statusCorrupted, statusBroke or statusUndecided; Note says why, in a
	// few words ("all 276 placements", "random-only evidence").
	Status, Note string
}

// familyView is a fault family with what its systematic search enumerates,
// in words (the bound of the first row that states one).
type familyView struct {
	Column, Bound string
}

// What a cell says of the data under its family (familyStatus).
const (
	// statusKept: no corruption, and the systematic search met its bound
	// (or, in the random column, random runs only, which the page says).
	statusKept = "kept"
	// statusCorrupted: a run corrupted the data.
	statusCorrupted = "corrupted"
	// statusBroke: the lock broke, and nothing but the lock guards the data.
	statusBroke = "broke"
	// statusUndecided: no fault fired, checks undecided, or the systematic
	// bound was not met.
	statusUndecided = "undecided"
)

// familyStatus is what a cell of a row with guard says of the data: kept
// only when its systematic search ran every placement within its bound
// without corruption (a column without placements — random — is kept on
// random-only evidence, and said to be), with a note in a few words.
func familyStatus(c *SearchedCell, guard string) (status, note string) {
	switch {
	case c == nil:
		return statusUndecided, "not searched"
	case c.Verdict == VerdictCorrupted:
		return statusCorrupted, "data corrupted"
	case c.Verdict == VerdictLockBroke && guard == "":
		return statusBroke, "lock broke; nothing but the lock guards the data"
	case c.Verdict == VerdictUnknown:
		return statusUndecided, "some checks could not decide"
	}
	p := c.Evidence.Placements
	if c.Verdict == VerdictNoFault || (c.Evidence.Fired == 0 && (p == nil || p.Fired == 0)) {
		return statusUndecided, "no fault fired: not tested"
	}
	if p == nil {
		note = "random-only evidence: no corruption in " + thousands(c.Evidence.Fired) + " random runs with a fault fired"
		if c.Evidence.Bound > 0 {
			note += " (<\u00a0" + percent(c.Evidence.Bound) + " per run, 95%)"
		}
		return statusKept, note
	}
	if !p.Complete {
		return statusUndecided, fmt.Sprintf("systematic bound not met: %s of %s placements ran", thousands(p.Ran), thousands(p.Total))
	}
	return statusKept, fmt.Sprintf("all %s placements (%s fired), then %s random runs", thousands(p.Total), thousands(p.Fired), thousands(c.Evidence.Runs))
}

// jsRow is a row as the page's script sees it (embedded as JSON): the
// script lists, for the families the reader selects, the designs that kept
// the data safe under all of them, those that corrupted it, broke the lock
// with nothing guarding the data, or were not decided.
type jsRow struct {
	N       int    `json:"n"`
	ID      string `json:"id"`
	Design  string `json:"design"`
	Storage string `json:"storage"`
	Guard   string `json:"guard,omitempty"`
	NoLock  bool   `json:"nolock,omitempty"`
	Worst   string `json:"worst"`
	// Cost in the page's words; Starved marks one client starving the
	// others.
	Failover string `json:"failover"`
	P99      string `json:"p99"`
	Rate     string `json:"rate"`
	Share    string `json:"share"`
	Starved  bool   `json:"starved,omitempty"`
	// Cells by column.
	Cells map[string]jsCell `json:"cells"`
}

// jsCell is a cell as the page's script sees it.
type jsCell struct {
	Status string `json:"st"`
	Note   string `json:"note"`
	// Saved: the lock broke and the row's guard saved the data.
	Saved bool `json:"saved,omitempty"`
	// Story and Report are the first corrupting (or breaking) finding's.
	Story  string `json:"story,omitempty"`
	Report string `json:"report,omitempty"`
}

// newJSRow is pr as the page's script sees it.
func newJSRow(pr *pageRow) jsRow {
	r := jsRow{N: pr.N, ID: pr.Row.ID, Design: pr.Row.Design, Storage: pr.Row.Storage, Guard: pr.Row.Guard, NoLock: pr.Row.NoLock,
		Worst: pr.Worst, Cells: map[string]jsCell{}, Failover: "not measured", P99: "—", Rate: "—", Share: "—"}
	if c := pr.Row.Cost; c != nil {
		r.Failover, r.P99, r.Rate, r.Share, r.Starved = failoverShort(c), milliseconds(c.AcquireP99MS), strconv.FormatFloat(c.CSPerSecond, 'f', 1, 64), shareShort(c), c.Starved
		if pr.Row.NoLock {
			r.Failover, r.P99 = "no lock", "—"
		}
	}
	for _, pc := range pr.Cells {
		jc := jsCell{Status: pc.Status, Note: pc.Note}
		if pc.Cell != nil {
			jc.Saved = pc.Cell.Verdict == VerdictLockBroke && pr.Row.Guard != ""
			for _, f := range pc.Cell.Findings {
				if f.Kind == VerdictCorrupted || (f.Kind == VerdictLockBroke && pc.Status == statusBroke) {
					jc.Story, jc.Report = f.Story, reportOf(f.Dir)
					break
				}
			}
		}
		r.Cells[pc.Column] = jc
	}
	return r
}

// failoverShort is a row's failover time on the page: "10.2 s", "≥ 17 s".
func failoverShort(c *RowCost) string {
	if c.FailoverRuns == 0 {
		return "not measured"
	}
	at := ""
	if c.FailoverAtLeast() {
		at = "≥\u00a0"
	}
	if c.FailoverMS < 1000 {
		return at + milliseconds(c.FailoverMS)
	}
	return at + strconv.FormatFloat(c.FailoverMS/1000, 'f', 1, 64) + "\u00a0s"
}

// shareShort is the largest client's share of the fault-free grants: "52%".
func shareShort(c *RowCost) string {
	return strconv.FormatFloat(100*c.TopShare, 'f', 0, 64) + "%"
}

// reportOf is the report page of a run directory ("" for none).
func reportOf(dir string) string {
	if dir == "" {
		return ""
	}
	return strings.TrimSuffix(dir, "/") + "/report.html"
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
			}
			pc.Status, pc.Note = familyStatus(c, r.Guard)
			if pc.Status == statusKept {
				pr.Kept++
			}
			pr.Cells = append(pr.Cells, pc)
		}
		pr.Worst = rowClass(pr)
		v.Rows = append(v.Rows, pr)
	}
	for _, col := range m.Columns {
		f := familyView{Column: col}
		for _, r := range m.Rows {
			for _, c := range r.Cells {
				if c.Column == col && c.Evidence.Placements != nil && f.Bound == "" {
					f.Bound = c.Evidence.Placements.Bound
				}
			}
		}
		v.Families = append(v.Families, f)
	}
	ranked := slices.Clone(v.Rows)
	slices.SortStableFunc(ranked, func(a, b *pageRow) int { return costCompare(a.Row.Cost, b.Row.Cost) })
	for _, pr := range ranked {
		v.Data = append(v.Data, newJSRow(pr))
	}
	v.Ranking = RankingRule
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

// RankingRule says on the page how designs are ranked (costCompare).
const RankingRule = "Ranked by what a user pays: first the failover time (how long the lock stays unavailable after its holder crashes, in whole seconds), then the p99 acquire latency without faults, then the most critical sections per second. A design in which one client took more than 90% of the grants without faults is marked starves and ranked last: its throughput is one client's (not under a leader-election workload, where one leader holding is the point)."

// costCompare orders costs by RankingRule: a row in which one client starves
// the others last, then by failover time in whole seconds (a leader
// election's cost is its failover, not its per-acquire latency), then the
// 99th percentile acquire latency, then the most critical sections per
// second; a row without a cost last of all.
func costCompare(a, b *RowCost) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	starved := func(c *RowCost) int {
		if c.Starved {
			return 1
		}
		return 0
	}
	seconds := func(c *RowCost) float64 {
		if c.FailoverRuns == 0 {
			return math.Inf(1)
		}
		return math.Ceil(c.FailoverMS / 1000)
	}
	return cmp.Or(cmp.Compare(starved(a), starved(b)), cmp.Compare(seconds(a), seconds(b)),
		cmp.Compare(a.AcquireP99MS, b.AcquireP99MS), cmp.Compare(b.CSPerSecond, a.CSPerSecond))
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
	"dur":       func(d Duration) string { return time.Duration(d).String() },
	"thousands": thousands,
	"rate":      func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"join":      strings.Join,
	"kind":      kindLabel,
	"count":     count,
	"add":       func(a, b int) int { return a + b },
	"nbhyphen":  func(s string) string { return strings.ReplaceAll(s, "-", "\u2011") },
	// nbsp keeps a bound with its number: "< 0.77%", "≥ 400".
	"nbsp":     func(s string) string { return strings.NewReplacer("< ", "<\u00a0", "≥ ", "≥\u00a0").Replace(s) },
	"report":   reportOf,
	"failover": failoverShort,
	"share":    shareShort,
}).Parse(searchedTemplate))
