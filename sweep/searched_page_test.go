package sweep

import (
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/reports/browser"
	"github.com/locklab/locklab/system"
)

var searchedPageOut = flag.String("searched-page-out", "",
	"also write the fixture's matrix page into this directory, to look at it")

// searchedFixture is a realistic searched matrix: 21 designs and storage
// modes under 7 fault families, with corrupted cells, broken locks saved by a
// guard and broken locks nothing guards, tokens out of order, a stuck lock,
// undecided cells, cells without a violation and cells in which no fault
// fired.
func searchedFixture(t *testing.T) SearchedMatrix {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "searched", "matrix.json"))
	require.NoError(t, err)
	var m SearchedMatrix
	require.NoError(t, json.Unmarshal(b, &m))
	require.Len(t, m.Rows, 21, "the fixture's rows")
	return m
}

// writeSearchedFixture renders the fixture's page into a fresh directory
// (and into -searched-page-out when given).
func writeSearchedFixture(t *testing.T) (string, SearchedMatrix) {
	t.Helper()
	m := searchedFixture(t)
	dir := t.TempDir()
	require.NoError(t, WriteSearchedPage(dir, m))
	if *searchedPageOut != "" {
		require.NoError(t, os.MkdirAll(*searchedPageOut, 0o755))
		require.NoError(t, WriteSearchedPage(*searchedPageOut, m))
	}
	return dir, m
}

func TestSearchedPageWritesTheFilesAtomically(t *testing.T) {
	dir, _ := writeSearchedFixture(t)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{MatrixHTML, PlotName + ".png", PlotName + ".svg"}, names, "no temporary file left behind")
	png, err := os.ReadFile(filepath.Join(dir, PlotName+".png"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(png), "\x89PNG"), "safety-cost.png is a PNG")
}

// pageText is the text a reader sees in n, no-break spaces and hyphens read
// as plain ones.
func pageText(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode && (d.Parent == nil || (d.Parent.Data != "style" && d.Parent.Data != "script")) {
			b.WriteString(d.Data)
		}
	}
	return strings.NewReplacer("\u00a0", " ", "\u2011", "-").Replace(b.String())
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// parsedPage is the fixture's page, parsed.
func parsedPage(t *testing.T) (*html.Node, SearchedMatrix) {
	t.Helper()
	dir, m := writeSearchedFixture(t)
	f, err := os.Open(filepath.Join(dir, MatrixHTML))
	require.NoError(t, err)
	defer f.Close()
	doc, err := html.Parse(f)
	require.NoError(t, err)
	return doc, m
}

// byRow gathers the text of every element about a row (data-row), by row id.
func byRow(doc *html.Node) map[string][]string {
	out := map[string][]string{}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && attrOf(n, "data-row") != "" {
			out[attrOf(n, "data-row")] = append(out[attrOf(n, "data-row")], pageText(n))
		}
	}
	return out
}

func TestSearchedPageNamesEveryDesignAndStatesEveryCellsEvidence(t *testing.T) {
	doc, m := parsedPage(t)
	text := pageText(doc)
	for _, r := range m.Rows {
		assert.Contains(t, text, r.Design)
		for _, c := range r.Cells {
			assert.Contains(t, text, c.Evidence.Line, "row %s, %s", r.ID, c.Column)
			for _, f := range c.Findings {
				assert.Contains(t, text, f.Story, "row %s, %s", r.ID, c.Column)
				assert.Contains(t, text, f.Replay, "row %s, %s", r.ID, c.Column)
				for _, fault := range f.Faults {
					assert.Contains(t, text, fault, "row %s, %s", r.ID, c.Column)
				}
			}
		}
		assert.Contains(t, text, "locklab run "+r.Flags, "the design's exact options, one click away")
	}
}

func TestSearchedPageSaysSafeOnlyOfDataADesignKeptSafe(t *testing.T) {
	doc, _ := parsedPage(t)
	text := strings.ToLower(pageText(doc))
	assert.NotContains(t, text, "safe under all faults")
	for _, i := range regexp.MustCompile(`\bsafe\b`).FindAllStringIndex(text, -1) {
		assert.True(t, strings.HasSuffix(text[:i[0]], "the data "), "%q", text[max(0, i[0]-60):i[1]])
	}
}

func TestSearchedPageNeverSaysFencingOfAnUnfencedRow(t *testing.T) {
	doc, m := parsedPage(t)
	rows := byRow(doc)
	unfenced := 0
	for _, r := range m.Rows {
		if r.Storage != "unfenced" {
			continue
		}
		unfenced++
		require.NotEmpty(t, rows[r.ID], "row %s is on the page", r.ID)
		for _, s := range rows[r.ID] {
			assert.NotContains(t, strings.ToLower(s), "fencing", "row %s (%s)", r.ID, r.Design)
		}
	}
	assert.Equal(t, 11, unfenced, "the fixture's unfenced rows")
}

func TestSearchedPageNamesWhatSavedTheDataWhenTheLockBroke(t *testing.T) {
	doc, m := parsedPage(t)
	rows := byRow(doc)
	v, err := newSearchedView(m)
	require.NoError(t, err)
	data := map[string]jsRow{}
	for _, r := range v.Data {
		data[r.ID] = r
	}
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Verdict != VerdictLockBroke {
				continue
			}
			// The row says its guard once, or that nothing but the lock
			// guards the data; the selection says the guard saved it.
			want := "nothing but the lock guards the data"
			if r.Guard != "" {
				want = "guard: " + r.Guard
			}
			assert.True(t, slices.ContainsFunc(rows[r.ID], func(s string) bool { return strings.Contains(s, want) }),
				"row %s (%s · %s) says %q", r.ID, r.Design, r.Storage, want)
			assert.Equal(t, r.Guard != "", data[r.ID].Cells[c.Column].Saved, "row %s, %s", r.ID, c.Column)
		}
	}
}

// cellOf is a cell of a verdict with the evidence a search would give it.
func cellOf(column, verdict string) SearchedCell {
	c := SearchedCell{Column: column, Verdict: verdict, Evidence: Evidence{Runs: 400, Fired: 390, Quiet: 10, Bound: 0.0077,
		Line: verdict + " under " + column}}
	switch verdict {
	case VerdictNoFault:
		c.Evidence.Fired, c.Evidence.Quiet, c.Evidence.Bound = 0, 400, 0
	case VerdictCorrupted, VerdictLockBroke, VerdictTokenOrder, VerdictLiveness:
		c.Findings = []Finding{{Kind: verdict, Checks: []string{"mutual-exclusion"}, RunsTo: 7, Faults: []string{"pause c1 at 1.0s for 12.0s"},
			Story: "the story of " + verdict + " under " + column + ".", Replay: "locklab run ...", Dir: "runs/x-" + column}}
	}
	if verdict == VerdictCorrupted {
		c.Evidence.Runs, c.Evidence.Fired, c.Evidence.Quiet, c.Evidence.Bound = 7, 7, 0, 0
	}
	return c
}

func TestACellKeptTheDataOnlyWhenItsSystematicBoundWasMet(t *testing.T) {
	complete := &Placements{Bound: "b", Total: 120, Ran: 120, Fired: 110, Complete: true}
	for _, tc := range []struct {
		name, guard string
		cell        *SearchedCell
		status      string
		note        string
	}{
		{name: "not searched", status: statusUndecided, note: "not searched"},
		{name: "corrupted", cell: &SearchedCell{Verdict: VerdictCorrupted, Evidence: Evidence{Placements: &Placements{Total: 120, Ran: 7, Fired: 7}}},
			status: statusCorrupted, note: "data corrupted"},
		{name: "lock broke, nothing guards", cell: &SearchedCell{Verdict: VerdictLockBroke, Evidence: Evidence{Fired: 20, Placements: complete}},
			status: statusBroke, note: "lock broke; nothing but the lock guards the data"},
		{name: "lock broke, the guard held", guard: system.GuardFencing, cell: &SearchedCell{Verdict: VerdictLockBroke, Evidence: Evidence{Runs: 20, Fired: 20, Placements: complete}},
			status: statusKept, note: "all 120 placements (110 fired), then 20 random runs"},
		{name: "bound met", cell: &SearchedCell{Verdict: VerdictNoViolation, Evidence: Evidence{Runs: 20, Fired: 20, Placements: complete}},
			status: statusKept, note: "all 120 placements (110 fired), then 20 random runs"},
		{name: "bound not met", cell: &SearchedCell{Verdict: VerdictNoViolation, Evidence: Evidence{Runs: 20, Fired: 20, Placements: &Placements{Total: 120, Ran: 60, Fired: 50}}},
			status: statusUndecided, note: "systematic bound not met: 60 of 120 placements ran"},
		{name: "random column", cell: &SearchedCell{Verdict: VerdictNoViolation, Evidence: Evidence{Runs: 400, Fired: 390, Bound: 0.0077}},
			status: statusKept, note: "random-only evidence: no corruption in 390 random runs with a fault fired (<\u00a00.77% per run, 95%)"},
		{name: "nothing fired", cell: &SearchedCell{Verdict: VerdictNoFault, Evidence: Evidence{Runs: 400, Quiet: 400, Placements: &Placements{Total: 120, Ran: 120, Complete: true}}},
			status: statusUndecided, note: "no fault fired: not tested"},
		{name: "undecided checks", cell: &SearchedCell{Verdict: VerdictUnknown, Evidence: Evidence{Fired: 20, Placements: complete}},
			status: statusUndecided, note: "some checks could not decide"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, note := familyStatus(tc.cell, tc.guard)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, tc.note, note)
		})
	}
}

func TestDesignsAreRankedByWhatAUserPays(t *testing.T) {
	cost := func(failoverMS, p99, rate float64, starved bool) *RowCost {
		return &RowCost{Cost: Cost{AcquireP50MS: 1, AcquireP99MS: p99, CSPerSecond: rate}, FailoverMS: failoverMS, FailoverRuns: 3, Starved: starved}
	}
	named := map[string]*RowCost{
		// A leader election: the lowest p50 and p99 but one client starves
		// the others; it comes last but for the row without a cost.
		"starves":       cost(1000, 1, 100, true),
		"fast failover": cost(2000, 50, 5, false),
		"slow failover": cost(17000, 2, 50, false),
		"low p99":       cost(9900, 2, 5, false),
		"high p99":      cost(9800, 20, 50, false),
		"same, faster":  cost(9800, 20, 60, false),
		"not measured":  nil,
		"no failover":   {Cost: Cost{AcquireP99MS: 1, CSPerSecond: 100}},
	}
	order := []string{"starves", "not measured", "slow failover", "high p99", "low p99", "no failover", "fast failover", "same, faster"}
	slices.SortStableFunc(order, func(a, b string) int { return costCompare(named[a], named[b]) })
	assert.Equal(t, []string{"fast failover", "low p99", "same, faster", "high p99", "slow failover", "no failover", "starves", "not measured"}, order)
}

func TestSearchedPageRefusesACellOfAnotherColumn(t *testing.T) {
	m := searchedFixture(t)
	m.Rows[3].Cells[2].Column = "earthquake"
	err := WriteSearchedPage(t.TempDir(), m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `row `+m.Rows[3].ID+` (Redlock (redsync) · unfenced): cell of column "earthquake"`)
}

func TestSafetyCostPlotHasOneNumberedPointPerDesign(t *testing.T) {
	m := searchedFixture(t)
	v, err := newSearchedView(m)
	require.NoError(t, err)
	fig, err := plotSearched(v)
	require.NoError(t, err)
	require.Len(t, fig.Points, len(m.Rows), "every fixture row has a cost")
	assert.Empty(t, fig.Unplotted)
	svg := html.UnescapeString(string(fig.SVG))
	for i, r := range m.Rows {
		pt := fig.Points[i]
		assert.Equal(t, i+1, pt.N)
		assert.Equal(t, r.Design+" · "+r.Storage, pt.Name, "points are named by design, not id")
		assert.Contains(t, svg, pt.Name, "the legend names point %d", pt.N)
		assert.NotContains(t, svg, r.ID, "no ids on the plot")
	}
	assert.Contains(t, svg, "Liberation Sans", "the page's font, not a serif")
	assert.NotContains(t, svg, "Serif")

	// A row without a cost is left out of the plot and named.
	m.Rows[0].Cost = nil
	v, err = newSearchedView(m)
	require.NoError(t, err)
	fig, err = plotSearched(v)
	require.NoError(t, err)
	assert.Len(t, fig.Points, len(m.Rows)-1)
	assert.Equal(t, []string{"Redis SET NX PX + Lua release · unfenced"}, fig.Unplotted)
}

func TestMarkersNeverCoverOneAnotherNorLeaveTheirLevel(t *testing.T) {
	const d = 16
	bounds := vg.Rectangle{Max: vg.Point{X: 700, Y: 300}}
	for _, tc := range []struct {
		name string
		at   []vg.Point
	}{
		{"apart", []vg.Point{{X: 100, Y: 50}, {X: 200, Y: 50}, {X: 100, Y: 100}}},
		{"the same point three times", []vg.Point{{X: 300, Y: 50}, {X: 300, Y: 50}, {X: 300, Y: 50}}},
		{"a chain that touches", []vg.Point{{X: 100, Y: 50}, {X: 110, Y: 50}, {X: 120, Y: 50}, {X: 140, Y: 50}, {X: 150, Y: 50}}},
		{"against the left edge", []vg.Point{{X: 2, Y: 50}, {X: 4, Y: 50}}},
		{"against the right edge", []vg.Point{{X: 699, Y: 50}, {X: 698, Y: 50}, {X: 697, Y: 50}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := placeMarkers(tc.at, d, bounds)
			require.Len(t, got, len(tc.at))
			for i := range got {
				assert.Equal(t, tc.at[i].Y, got[i].Y, "marker %d stays on its level", i)
				assert.True(t, got[i].X >= bounds.Min.X && got[i].X <= bounds.Max.X, "marker %d inside the plot: %v", i, got[i])
				for j := range i {
					assert.GreaterOrEqual(t, math.Hypot(float64(got[i].X-got[j].X), float64(got[i].Y-got[j].Y)), float64(d)-1e-9,
						"markers %d and %d", j, i)
				}
			}
			if tc.name == "apart" {
				assert.Equal(t, tc.at, got, "markers that do not touch stay where they are")
			}
		})
	}
}

// layoutProbe measures the rendered table and writes what it found as JSON
// into the body's data-layout attribute.
const layoutProbe = `<script>
window.addEventListener("load", function () {
  var wrap = document.querySelector(".tablewrap"), table = wrap.querySelector("table");
  var heads = wrap.querySelectorAll("thead th"), first = wrap.querySelector("tbody th.design");
  var out = {width: window.innerWidth, scrolls: wrap.scrollWidth > wrap.clientWidth + 1, clipped: [], brokenChecks: 0, wrappedDesigns: 0, designWidth: 0};
  var right = Math.min(window.innerWidth, wrap.getBoundingClientRect().right) + 1;
  for (var i = 0; i < heads.length; i++) {
    if (!out.scrolls && heads[i].getBoundingClientRect().right > right) { out.clipped.push(heads[i].textContent); }
  }
  var checks = document.querySelectorAll(".check");
  for (var i = 0; i < checks.length; i++) { if (checks[i].getClientRects().length > 1) { out.brokenChecks++; } }
  var names = wrap.querySelectorAll("th.design .dn");
  for (var i = 0; i < names.length; i++) { if (names[i].getClientRects().length > 1) { out.wrappedDesigns++; } }
  out.designWidth = first.getBoundingClientRect().width;
  // Scroll the table down (and right, when it scrolls): the header and the
  // first column must stay in view.
  if (out.scrolls) {
    wrap.scrollTop = 900; wrap.scrollLeft = 300;
    out.headStuck = Math.abs(heads[1].getBoundingClientRect().top - wrap.getBoundingClientRect().top) < 3;
    out.firstStuck = Math.abs(first.getBoundingClientRect().left - wrap.getBoundingClientRect().left) < 3;
  } else {
    window.scrollTo(0, table.getBoundingClientRect().top + window.scrollY + 900);
    out.headStuck = Math.abs(heads[1].getBoundingClientRect().top) < 3;
    out.firstStuck = true;
  }
  out.pageScrolls = document.documentElement.scrollWidth > document.documentElement.clientWidth + 1;
  out.kept = [];
  var kept = document.querySelectorAll("#list-kept tr");
  for (var i = 0; i < kept.length; i++) { out.kept.push(kept[i].getAttribute("data-row")); }
  document.body.setAttribute("data-layout", JSON.stringify(out));
});
</script></body>`

// TestSearchedPageFitsTheWindowInABrowser opens the page in headless Chromium
// at 1280 and 900 px with two families ticked in its address: at both no
// column of the table is clipped and nothing scrolls sideways, the header
// stays in view, design names wrap in a narrow first column, check names
// never break, the plot loads, and the designs listed as keeping the data
// safe are those whose cells in both families met their bound, in the
// order of the ranking.
func TestSearchedPageFitsTheWindowInABrowser(t *testing.T) {
	b, err := browser.Find()
	if errors.Is(err, browser.ErrNotFound) {
		t.Skipf("browser check skipped: %v", err)
	}
	require.NoError(t, err)
	// One design kept under pause + partition is made corrupted under
	// another family: the list must say so beside it.
	m := searchedFixture(t)
	before, err := newSearchedView(m)
	require.NoError(t, err)
	for _, r := range before.Data {
		if r.Cells["pause"].Status != statusKept || r.Cells["partition"].Status != statusKept {
			continue
		}
		for i := range m.Rows {
			if m.Rows[i].ID != r.ID {
				continue
			}
			for j := range m.Rows[i].Cells {
				if c := &m.Rows[i].Cells[j]; c.Column != "pause" && c.Column != "partition" {
					c.Verdict = VerdictCorrupted
					break
				}
			}
		}
		break
	}
	dir := t.TempDir()
	require.NoError(t, WriteSearchedPage(dir, m))
	page, err := os.ReadFile(filepath.Join(dir, MatrixHTML))
	require.NoError(t, err)
	probe := filepath.Join(dir, "probe.html")
	require.NoError(t, os.WriteFile(probe, []byte(strings.Replace(string(page), "</body>", layoutProbe, 1)), 0o644))
	type layout struct {
		Width          int
		Scrolls        bool
		Clipped        []string
		BrokenChecks   int
		WrappedDesigns int
		DesignWidth    float64
		HeadStuck      bool
		FirstStuck     bool
		Kept           []string
		PageScrolls    bool
	}
	v, err := newSearchedView(m)
	require.NoError(t, err)
	var wantKept []string
	for _, r := range v.Data {
		if r.Cells["pause"].Status == statusKept && r.Cells["partition"].Status == statusKept {
			wantKept = append(wantKept, r.ID)
		}
	}
	require.NotEmpty(t, wantKept, "the fixture keeps some design under pause + partition")
	warned := 0 // kept rows that another family's fault corrupted
	for _, r := range v.Data {
		if r.Cells["pause"].Status != statusKept || r.Cells["partition"].Status != statusKept {
			continue
		}
		for f, c := range r.Cells {
			if f != "pause" && f != "partition" && c.Status == statusCorrupted {
				warned++
				break
			}
		}
	}
	for _, tc := range []struct {
		width   int
		scrolls bool
	}{{1280, false}, {900, false}} {
		t.Run(strconv.Itoa(tc.width), func(t *testing.T) {
			got, err := browser.Render(probe+"#families=pause,partition", browser.Options{Browser: b, Width: tc.width, Height: 900, Timeout: 2 * time.Minute})
			require.NoError(t, err)
			assert.Equal(t, "ok", got.Rendered, "every image loaded")
			assert.Equal(t, 1, got.Loaded, "the safety-against-cost plot")
			doc, err := html.Parse(strings.NewReader(got.DOM))
			require.NoError(t, err)
			var raw string
			for n := range doc.Descendants() {
				if n.Type == html.ElementNode && n.Data == "body" {
					raw = attrOf(n, "data-layout")
				}
			}
			require.NotEmpty(t, raw, "the layout probe ran")
			t.Logf("layout at %d px: %s", tc.width, raw)
			var l layout
			require.NoError(t, json.Unmarshal([]byte(raw), &l))
			assert.Equal(t, tc.width, l.Width)
			assert.Equal(t, tc.scrolls, l.Scrolls, "the table scrolls sideways")
			assert.False(t, l.PageScrolls, "the page scrolls sideways")
			assert.Empty(t, l.Clipped, "columns cut off")
			assert.Zero(t, l.BrokenChecks, "check names broken across lines")
			assert.Positive(t, l.WrappedDesigns, "long design names wrap")
			assert.LessOrEqual(t, l.DesignWidth, 215.0, "the design column stays narrow")
			assert.True(t, l.HeadStuck, "the header stays in view")
			assert.True(t, l.FirstStuck, "the first column stays in view")
			assert.Equal(t, wantKept, l.Kept, "kept the data safe under pause + partition, ranked")
			require.Positive(t, warned)
			assert.Equal(t, warned, strings.Count(got.DOM, `class="elsewhere"`),
				"each kept design that a family not ticked corrupted says so")
		})
	}
}

func TestSearchedPageOfAMatrixWithoutRowsOrCostsStillRenders(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*SearchedMatrix)
	}{
		{"no rows", func(m *SearchedMatrix) { m.Rows = nil }},
		{"no costs", func(m *SearchedMatrix) {
			for i := range m.Rows {
				m.Rows[i].Cost = nil
			}
		}},
		{"one column", func(m *SearchedMatrix) {
			m.Columns = []string{"pause"}
			for i := range m.Rows {
				m.Rows[i].Cells = m.Rows[i].Cells[:1]
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := searchedFixture(t)
			tc.edit(&m)
			dir := t.TempDir()
			require.NoError(t, WriteSearchedPage(dir, m))
			page, err := os.ReadFile(filepath.Join(dir, MatrixHTML))
			require.NoError(t, err)
			assert.Contains(t, string(page), "Which lock should I use?")
		})
	}
}

// A design that takes no lock has nothing to fail over: its text says so
// instead of a failover of 0 s.
func TestALocklessRowHasNoFailover(t *testing.T) {
	cost := &RowCost{Cost: Cost{CSPerSecond: 9.9, MessagesPerAcquire: 4.2}, Grants: []int{49, 51}, TopShare: 0.51, FailoverRuns: 3}
	m := SearchedMatrix{Columns: []string{"pause"}, Budget: 300, Time: Duration(20 * time.Second), Clients: 2, Rows: []SearchedRow{
		{ID: "a", Design: "Optimistic locking", NoLock: true, System: "database", Storage: "unfenced", Cost: cost,
			Cells: []SearchedCell{{Column: "pause", Verdict: VerdictNoViolation}}},
		{ID: "b", Design: "A lock", System: "redis", Storage: "unfenced", Cost: cost,
			Cells: []SearchedCell{{Column: "pause", Verdict: VerdictNoViolation}}},
	}}
	var b strings.Builder
	require.NoError(t, WriteSearchedText(&b, m, true))
	lockless, lock, ok := strings.Cut(b.String(), "A lock · unfenced")
	require.True(t, ok, b.String())
	assert.Contains(t, lockless, "no lock is taken (no acquire latency, nothing to fail over)")
	assert.NotContains(t, lockless, "failover after the holder crashes")
	assert.Contains(t, lock, "failover after the holder crashes 0s")
}
