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
	for _, r := range m.Rows {
		broke := false
		for _, c := range r.Cells {
			broke = broke || c.Verdict == VerdictLockBroke && slices.Contains(FaultModels[0].Columns, c.Column)
		}
		if !broke {
			continue
		}
		// Under "my processes can pause", a broken lock is said with the
		// row's guard, or said to have nothing but the lock guarding the data.
		want := "nothing but the lock guards the data"
		if r.Guard != "" {
			want = "lock broke; saved by " + r.Guard
		}
		assert.True(t, slices.ContainsFunc(rows[r.ID], func(s string) bool { return strings.Contains(s, want) }),
			"row %s (%s · %s) says %q", r.ID, r.Design, r.Storage, want)
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

func TestFaultModelsSortTheDesignsByWhatTheSearchFound(t *testing.T) {
	type row struct {
		design, guard string
		p50           float64
		pause, random string // the verdicts
	}
	rows := []row{
		{"corrupts", "", 0.5, VerdictCorrupted, VerdictCorrupted},
		{"fenced", system.GuardFencing, 2, VerdictLockBroke, VerdictLockBroke},
		{"breaks unguarded", "", 1.5, VerdictLockBroke, VerdictNoViolation},
		{"undecided", "", 1.2, VerdictUnknown, VerdictNoViolation},
		{"quiet", "", 1.1, VerdictNoFault, VerdictNoViolation},
		{"cheapest", "", 1, VerdictNoViolation, VerdictCorrupted},
		{"stuck", "", 3, VerdictLiveness, VerdictNoViolation},
	}
	m := SearchedMatrix{Preset: "test", Columns: []string{"pause", "random"}, Budget: 400, Time: Duration(20 * time.Second), Clients: 3}
	for i, r := range rows {
		storage := "unfenced"
		if r.guard == system.GuardFencing {
			storage = "fenced"
		}
		m.Rows = append(m.Rows, SearchedRow{ID: strconv.Itoa(i), Design: r.design, Storage: storage, Guard: r.guard,
			Cells: []SearchedCell{cellOf("pause", r.pause), cellOf("random", r.random)}, Cost: &Cost{AcquireP50MS: r.p50, AcquireP99MS: 4 * r.p50, CSPerSecond: 10}})
	}
	v, err := newSearchedView(m)
	require.NoError(t, err)
	var keys []string
	for _, mv := range v.Models {
		keys = append(keys, mv.Key)
	}
	assert.Equal(t, []string{"pause", "all"}, keys, "a model none of whose families the matrix has is left out")

	names := func(list []modelEntry) []string {
		var out []string
		for _, e := range list {
			out = append(out, e.Row.Row.Design)
		}
		return out
	}
	pause, all := v.Models[0], v.Models[1]
	for _, tc := range []struct {
		model, group string
		got          []modelEntry
		want         []string
	}{
		{"pause", "kept the data safe, cheapest first", pause.Kept, []string{"cheapest", "fenced", "stuck"}},
		{"pause", "corrupted the data", pause.Corrupted, []string{"corrupts"}},
		{"pause", "broke the lock, nothing guarding the data", pause.Broke, []string{"breaks unguarded"}},
		{"pause", "not decided", pause.Undecided, []string{"quiet", "undecided"}},
		// A family in which no fault fired is not evidence, and is said.
		{"all", "kept the data safe, cheapest first", all.Kept, []string{"quiet", "fenced", "stuck"}},
		{"all", "corrupted the data", all.Corrupted, []string{"corrupts", "cheapest"}},
	} {
		assert.Equal(t, tc.want, names(tc.got), "%s: %s", tc.model, tc.group)
	}
	for _, tc := range []struct {
		entry      modelEntry
		found      string
		saved      string
		notes      []string
		findingDir string
	}{
		{entry: pause.Kept[0], found: "no corruption found in 390 runs with a pause fired (<\u00a00.77% per run, 95%)"},
		{entry: pause.Kept[1], found: "no corruption found in 390 runs with a pause fired (<\u00a00.77% per run, 95%)",
			saved: "lock broke; saved by fencing tokens checked by the storage"},
		{entry: pause.Kept[2], found: "no corruption found in 390 runs with a pause fired (<\u00a00.77% per run, 95%)",
			notes: []string{"the lock got stuck (liveness) under pause"}},
		{entry: pause.Corrupted[0], found: "data corrupted under pause, run 7 of the search", findingDir: "runs/x-pause"},
		{entry: pause.Broke[0], found: "lock broke under pause, run 7 of the search; nothing but the lock guards the data", findingDir: "runs/x-pause"},
		{entry: pause.Undecided[0], found: "not tested: no fault of this family fired", notes: []string{"pause: no fault fired in 400 runs, not tested"}},
		{entry: pause.Undecided[1], found: "pause: unknown under pause"},
		{entry: all.Kept[0], found: "no corruption found in 390 runs with a random fault fired (<\u00a00.77% per run, 95%)",
			notes: []string{"pause: no fault fired in 400 runs, not tested"}},
		{entry: all.Kept[1], found: "no corruption found in 2 families (≥\u00a0390 runs each with a fault fired)",
			saved: "lock broke (pause, random); saved by fencing tokens checked by the storage"},
		{entry: all.Corrupted[0], found: "data corrupted under pause, run 7 of the search; also under random", findingDir: "runs/x-pause"},
	} {
		e := tc.entry
		assert.Equal(t, tc.found, e.Found, e.Row.Row.Design)
		assert.Equal(t, tc.saved, e.Saved, e.Row.Row.Design)
		assert.Equal(t, tc.notes, e.Notes, e.Row.Row.Design)
		if tc.findingDir != "" && assert.NotNil(t, e.Finding, e.Row.Row.Design) {
			assert.Equal(t, tc.findingDir, e.Finding.Dir, e.Row.Row.Design)
		}
	}
	require.NotNil(t, pause.Cheapest())
	assert.Equal(t, "cheapest", pause.Cheapest().Row.Row.Design)
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
  document.body.setAttribute("data-layout", JSON.stringify(out));
});
</script></body>`

// TestSearchedPageFitsTheWindowInABrowser opens the page in headless Chromium
// at 1280 and 900 px: at 1280 no column of the table is clipped and nothing
// scrolls sideways; at 900 the table scrolls inside its box with the first
// column stuck; at both the header stays in view, design names wrap in a
// narrow first column, check names never break, and the plot loads.
func TestSearchedPageFitsTheWindowInABrowser(t *testing.T) {
	b, err := browser.Find()
	if errors.Is(err, browser.ErrNotFound) {
		t.Skipf("browser check skipped: %v", err)
	}
	require.NoError(t, err)
	dir, _ := writeSearchedFixture(t)
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
	}
	for _, tc := range []struct {
		width   int
		scrolls bool
	}{{1280, false}, {900, true}} {
		t.Run(strconv.Itoa(tc.width), func(t *testing.T) {
			got, err := browser.Render(probe, browser.Options{Browser: b, Width: tc.width, Height: 900, Timeout: 2 * time.Minute})
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
			assert.Empty(t, l.Clipped, "columns cut off")
			assert.Zero(t, l.BrokenChecks, "check names broken across lines")
			assert.Positive(t, l.WrappedDesigns, "long design names wrap")
			assert.LessOrEqual(t, l.DesignWidth, 215.0, "the design column stays narrow")
			assert.True(t, l.HeadStuck, "the header stays in view")
			assert.True(t, l.FirstStuck, "the first column stays in view")
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
