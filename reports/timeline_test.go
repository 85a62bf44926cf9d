package reports

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/locklab/locklab/history"
)

// svgShape is a filled or stroked path of an SVG plot, in document (drawing)
// order, with its bounding box in the plot's coordinates (points, y up).
type svgShape struct {
	order          int
	fill, stroke   string
	opacity, width float64
	dashed         bool
	x0, y0, x1, y1 float64
	translucent    bool
}

// svgText is a text of an SVG plot: its content, left baseline point and size.
type svgText struct {
	text       string
	x, y, size float64
}

var (
	svgPath   = regexp.MustCompile(`<path d="([^"]*)" style="([^"]*)"`)
	svgText1  = regexp.MustCompile(`(?s)<text x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*font-size:([0-9.]+)px[^"]*">([^<]*)</text>`)
	svgNumber = regexp.MustCompile(`[-0-9.e]+`)
)

// parseSVG reads the paths and texts gonum's SVG canvas wrote.
func parseSVG(t *testing.T, svg []byte) ([]svgShape, []svgText) {
	t.Helper()
	var shapes []svgShape
	for i, m := range svgPath.FindAllStringSubmatch(string(svg), -1) {
		s := svgShape{order: i, opacity: 1, x0: math.Inf(1), y0: math.Inf(1), x1: math.Inf(-1), y1: math.Inf(-1)}
		for _, kv := range strings.Split(m[2], ";") {
			k, v, _ := strings.Cut(kv, ":")
			switch k {
			case "fill":
				s.fill = v
			case "fill-opacity":
				s.opacity, _ = strconv.ParseFloat(v, 64)
			case "stroke":
				s.stroke = v
			case "stroke-width":
				s.width, _ = strconv.ParseFloat(v, 64)
			case "stroke-dasharray":
				s.dashed = true
			}
		}
		nums := svgNumber.FindAllString(m[1], -1)
		for j := 0; j+1 < len(nums); j += 2 {
			x, _ := strconv.ParseFloat(nums[j], 64)
			y, _ := strconv.ParseFloat(nums[j+1], 64)
			s.x0, s.x1 = math.Min(s.x0, x), math.Max(s.x1, x)
			s.y0, s.y1 = math.Min(s.y0, y), math.Max(s.y1, y)
		}
		s.translucent = s.fill != "none" && s.opacity < 1
		shapes = append(shapes, s)
	}
	var texts []svgText
	for _, m := range svgText1.FindAllStringSubmatch(string(svg), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		size, _ := strconv.ParseFloat(m[3], 64)
		texts = append(texts, svgText{text: m[4], x: x, y: -y, size: size})
	}
	return shapes, texts
}

// pausesHistory is five clients taking turns on k for a minute, with c4
// paused from 20 s to 30 s and the server paused from 5 s to 8 s.
func pausesHistory() []history.Event {
	var b historyBuilder
	for i := range 5 {
		node := fmt.Sprintf("c%d", i+1)
		for s := 0; s < 60; s += 10 {
			at := float64(s*1000 + i*1500 + 100)
			b.op(i, node, history.FAcquire, at, at+10, history.OK, history.Event{Owner: node, Deadline: history.Ptr(ms(at + 5000))})
			b.op(i, node, history.FRelease, at+1000, at+1010, history.OK, history.Event{Owner: node})
		}
	}
	b.fault("pause", []string{"c4"}, 20000, 30000)
	b.fault("pause", []string{"redis"}, 5000, 8000)
	b.op(0, "c1", history.FRead, 59990, 60000, history.OK, history.Event{Value: history.Ptr[int64](0)})
	return b.build()
}

// TestTimelineShadesEachFaultOnTheRowsOfTheNodesItHit renders the lock
// timeline as SVG and checks where the fault shading lands: c4's pause only
// on c4's row, the server's pause in a lane above every client row, and all
// of it drawn after (over) the opaque row stripes, so that no stripe hides a
// fault and no fault spills onto another client's row.
func TestTimelineShadesEachFaultOnTheRowsOfTheNodesItHit(t *testing.T) {
	events := pausesHistory()
	ps, err := RenderPlots(events)
	require.NoError(t, err)
	require.Equal(t, TimelinePlot, ps[0].Name)
	shapes, texts := parseSVG(t, ps[0].SVG)

	// The rows: stripes (#F5F5F5) lie on every other client row and span the
	// data area; the y tick labels name the rows.
	var stripes []svgShape
	for _, s := range shapes {
		if s.fill == "#F5F5F5" {
			stripes = append(stripes, s)
		}
	}
	require.NotEmpty(t, stripes)
	left, right := stripes[0].x0, stripes[0].x1
	label := map[string]svgText{}
	for _, tx := range texts {
		if regexp.MustCompile(`^c[1-5]$`).MatchString(tx.text) {
			label[tx.text] = tx
		}
	}
	require.Len(t, label, 5)
	pitch := label["c1"].y - label["c2"].y
	require.Greater(t, pitch, 0.0, "c1's row is above c2's")
	// The baseline of a centred label sits a fixed offset below its row's
	// centre: the stripe on c2's row gives it.
	offset := (stripes[0].y0+stripes[0].y1)/2 - label["c2"].y
	row := func(node string) (lo, hi float64) {
		c := label[node].y + offset
		return c - pitch/2, c + pitch/2
	}
	end := seconds(events[len(events)-1].Time)
	timeAt := func(x float64) float64 { return (x - left) / (right - left) * end }

	const tol = 0.6 // points
	lastStripe := stripes[len(stripes)-1].order
	c4lo, c4hi := row("c4")
	_, c1hi := row("c1")
	var onC4, onServer int
	for _, s := range shapes {
		if !s.translucent || s.x0 >= right-tol {
			continue // opaque, or the legend's swatch
		}
		assert.Greater(t, s.order, lastStripe, "a fault is drawn after every stripe, not under one")
		switch mid := timeAt((s.x0 + s.x1) / 2); {
		case mid > 20 && mid < 30:
			onC4++
			assert.GreaterOrEqual(t, s.y0, c4lo-tol, "c4's pause stays on c4's row (%.1f..%.1f), not %.1f..%.1f", c4lo, c4hi, s.y0, s.y1)
			assert.LessOrEqual(t, s.y1, c4hi+tol, "c4's pause stays on c4's row (%.1f..%.1f), not %.1f..%.1f", c4lo, c4hi, s.y0, s.y1)
		case mid > 5 && mid < 8:
			onServer++
			assert.GreaterOrEqual(t, s.y0, c1hi-tol, "the server's pause lies above the clients (c1's row ends at %.1f), not at %.1f..%.1f", c1hi, s.y0, s.y1)
		default:
			t.Errorf("shading at %.1fs (%.1f..%.1f) where no fault was", mid, s.y0, s.y1)
		}
	}
	assert.Positive(t, onC4, "c4's pause is drawn")
	assert.Positive(t, onServer, "the server's pause is drawn")

	var lanes []string
	for _, tx := range texts {
		if tx.text == "redis" {
			lanes = append(lanes, tx.text)
			assert.Greater(t, tx.y, label["c1"].y, "the server's lane is labelled above the clients")
		}
	}
	assert.Len(t, lanes, 1, "the server's lane is labelled with its name")
}

func TestPlaceLabelsKeepsLabelsApartAndInside(t *testing.T) {
	got := placeLabels([]vg.Length{0, 5, 12, 90, 95}, []vg.Length{20, 20, 20, 30, 30}, 0, 100, 2, 4)
	assert.Equal(t, []labelSpot{{x: 0, line: 0}, {x: 5, line: 1}}, got[:2], "the second label goes on the second line")
	assert.Equal(t, -1, got[2].line, "no line has room for the third label")
	assert.Equal(t, labelSpot{x: 70, line: 0}, got[3], "a label that would run past the edge moves left")
	assert.Equal(t, labelSpot{x: 70, line: 1}, got[4])
	assert.Equal(t, -1, placeLabels([]vg.Length{0}, []vg.Length{150}, 0, 100, 2, 4)[0].line, "a label wider than the area is left out")
}

// TestThroughputLinesAreNotClippedOrBlobbed: the throughput plot draws
// lines no wider than rateWidthMax, nothing dashed or dotted along zero (fail
// and info completions are marks where they happened), and leaves room
// around its data so that no line is cut at the edge.
func TestThroughputLinesAreNotClippedOrBlobbed(t *testing.T) {
	events := longHistory(4, 2*60e9)
	v := newView(events)
	fig, err := rateFigure(v)
	require.NoError(t, err)
	assert.Less(t, fig.plot.Y.Min, 0.0, "room below zero for half a line")

	var b historyBuilder
	b.events = slices.Clone(gcPauseHistory(false))
	b.op(5, "c3", history.FAcquire, 3000, 3500, history.Fail, history.Event{})
	b.op(6, "c4", history.FAcquire, 4000, 0, history.Info, history.Event{})
	for _, evs := range [][]history.Event{events, b.build()} {
		ps, err := RenderPlots(evs)
		require.NoError(t, err)
		var rate Plot
		for _, p := range ps {
			if p.Name == RatePlot {
				rate = p
			}
		}
		shapes, _ := parseSVG(t, rate.SVG)
		for _, s := range shapes {
			if s.stroke == "" || s.stroke == "none" {
				continue
			}
			assert.LessOrEqual(t, s.width, rateWidthMax+0.01, "a line %.1fpt wide", s.width)
			assert.False(t, s.dashed, "no dashed or dotted line (%s, %.1fpt)", s.stroke, s.width)
		}
	}
}

// TestTimelineHeightIsBoundedForAThousandClients: a run with 1000 clients
// draws a timeline of bounded height: the clients in the overlap and the one
// paused get rows, the others one density band, and the note says so.
func TestTimelineHeightIsBoundedForAThousandClients(t *testing.T) {
	var b historyBuilder
	for i := range 1000 {
		node := fmt.Sprintf("c%d", i+1)
		at := float64(i * 100)
		b.op(i, node, history.FAcquire, at, at+5, history.OK, history.Event{Owner: node, Deadline: history.Ptr(ms(at + 1000))})
		b.op(i, node, history.FWrite, at+20, at+30, history.OK, history.Event{Owner: node, Value: history.Ptr(int64(i))})
		b.op(i, node, history.FRelease, at+60, at+70, history.OK, history.Event{Owner: node})
	}
	// c500 is granted the lock again while c901, c902 and c903 take their
	// turns; c900 is paused.
	b.op(1000, "c500", history.FAcquire, 90000, 90005, history.OK, history.Event{Owner: "c500-2", Deadline: history.Ptr(ms(90250))})
	b.fault("pause", []string{"c900"}, 20000, 30000)
	b.fault("partition", []string{"redis"}, 40000, 41000)
	events := b.build()
	ps, err := RenderPlots(events)
	require.NoError(t, err)
	require.Equal(t, TimelinePlot, ps[0].Name)
	img, err := png.DecodeConfig(bytes.NewReader(ps[0].PNG))
	require.NoError(t, err)
	assert.Equal(t, 1008, img.Width)
	assert.LessOrEqual(t, img.Height, 1000, "the timeline of 1000 clients is %d px high", img.Height)
	assert.Contains(t, ps[0].Note, "With 1000 clients,")

	v := newView(events)
	tl := buildTimeline(v, 0, v.end).bounded(v, 0, v.end)
	var rows []string
	for _, r := range tl.rows {
		rows = append(rows, r.node)
	}
	require.NotNil(t, tl.band)
	assert.Contains(t, rows, "c900", "the paused client has its row")
	assert.Equal(t, 1000-len(rows), tl.band.clients)
	assert.LessOrEqual(t, len(rows), maxClientRows)
	assert.Equal(t, 1, tl.band.most, "the others never held the lock two at a time")
	require.Len(t, tl.servers, 1)
	assert.Equal(t, "redis", tl.servers[0].name)

	// Every client in an overlap keeps its row.
	for _, o := range v.overlaps {
		assert.Contains(t, rows, o.A.Node)
		assert.Contains(t, rows, o.B.Node)
	}
	assert.NotEmpty(t, v.overlaps)
}
