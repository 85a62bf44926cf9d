package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locklab/locklab/history"
)

// Segment styles of the lock timeline.
const (
	segHeld     = iota // the client believed it held the lock, within its lease
	segPastDead        // ... after its own lease deadline had passed
	segOverlap         // ... while another client believed so too
	segStyles
)

// Write marks of the lock timeline.
const (
	markApplied = iota
	markRejected
	markUnknown
	markKinds
)

// segment is a bar on a timeline row, in ns.
type segment struct {
	start, end int64
	token      *uint64
}

// timelineRow is what one client's row shows.
type timelineRow struct {
	node     string
	segments [segStyles][]segment
	marks    [markKinds][]int64
	faults   []faultWindow // faults that target this client
}

// timeline is the plotter of the lock timeline: one row per client, a bar
// for each interval in which it believed it held the lock, its storage
// writes, the faults that hit it, and every overlap of two holders in red.
type timeline struct {
	rows []timelineRow
}

// Timeline geometry, in rows.
const (
	barHalf  = 0.24
	markRise = 0.37
)

var (
	heldColor     = blue
	pastDeadColor = orange
	overlapColor  = red
	markColors    = [markKinds]color.Color{green, red, grey}
	markShapes    = [markKinds]draw.GlyphDrawer{draw.CircleGlyph{}, draw.CrossGlyph{}, draw.TriangleGlyph{}}
	segmentColors = [segStyles]color.NRGBA{heldColor, pastDeadColor, overlapColor}
)

// buildTimeline collects the rows of the timeline over [from, to] (ns),
// merging bars and marks closer than the plot's resolution.
func buildTimeline(v *view, from, to int64) timeline {
	index := map[string]int{}
	rows := make([]timelineRow, len(v.nodes))
	for i, n := range v.nodes {
		index[n] = i
		rows[i].node = n
	}
	for _, h := range v.holdings {
		r := &rows[index[h.Node]]
		end := h.End
		if h.Deadline != nil && *h.Deadline < h.End {
			end = max(*h.Deadline, h.Start)
			r.segments[segPastDead] = append(r.segments[segPastDead], segment{start: end, end: h.End})
		}
		r.segments[segHeld] = append(r.segments[segHeld], segment{start: h.Start, end: end, token: h.Token})
	}
	for _, o := range v.overlaps {
		for _, n := range []string{o.A.Node, o.B.Node} {
			r := &rows[index[n]]
			r.segments[segOverlap] = append(r.segments[segOverlap], segment{start: o.Start, end: o.End})
		}
	}
	for _, o := range v.ops {
		if o.inv.F != history.FWrite {
			continue
		}
		r := &rows[index[o.inv.Node]]
		switch {
		case o.comp != nil && o.comp.Type == history.OK:
			r.marks[markApplied] = append(r.marks[markApplied], o.comp.Time)
		case o.comp != nil && o.comp.Type == history.Fail:
			r.marks[markRejected] = append(r.marks[markRejected], o.comp.Time)
		case o.comp != nil:
			r.marks[markUnknown] = append(r.marks[markUnknown], o.comp.Time)
		default:
			r.marks[markUnknown] = append(r.marks[markUnknown], o.inv.Time)
		}
	}
	for _, f := range v.faults {
		for _, t := range f.Targets {
			if i, ok := index[t]; ok {
				rows[i].faults = append(rows[i].faults, f)
			}
		}
	}
	gap := max((to-from)/xBins, 1)
	for i := range rows {
		for s := range rows[i].segments {
			rows[i].segments[s] = mergeSegments(rows[i].segments[s], from, to, gap)
		}
		for m := range rows[i].marks {
			rows[i].marks[m] = thinMarks(rows[i].marks[m], from, to, gap)
		}
	}
	return timeline{rows: rows}
}

// mergeSegments keeps the segments that meet [from, to] and merges those
// separated by less than gap; a merged bar keeps no token.
func mergeSegments(segs []segment, from, to, gap int64) []segment {
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.start, b.start) })
	var out []segment
	for _, s := range segs {
		if s.end < from || s.start > to {
			continue
		}
		if n := len(out); n > 0 && s.start-out[n-1].end < gap {
			last := &out[n-1]
			if s.end > last.end {
				last.end = s.end
			}
			last.token = nil
			continue
		}
		out = append(out, s)
	}
	return out
}

// thinMarks keeps the marks within [from, to], one per gap.
func thinMarks(ts []int64, from, to, gap int64) []int64 {
	slices.Sort(ts)
	var out []int64
	for _, t := range ts {
		if t < from || t > to {
			continue
		}
		if n := len(out); n > 0 && t-out[n-1] < gap {
			continue
		}
		out = append(out, t)
	}
	return out
}

// y is the centre of row i (row 0 at the top).
func (tl timeline) y(i int) float64 { return float64(len(tl.rows) - 1 - i) }

// Plot draws the rows.
func (tl timeline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, r := range tl.rows {
		y := tl.y(i)
		if i%2 == 1 {
			fillRect(&c, color.Gray{Y: 245}, c.Min.X, trY(y-0.5), c.Max.X, trY(y+0.5))
		}
		for _, f := range r.faults {
			if x0, x1, ok := span(trX, p, f.Start, f.End); ok {
				fillRect(&c, alpha(faultColor(f.Kind), 70), x0, trY(y-0.5), x1, trY(y+0.5))
			}
		}
	}
	for i, r := range tl.rows {
		y := tl.y(i)
		for s := range segStyles {
			half := barHalf
			if s == segOverlap {
				half = barHalf + 0.06
			}
			for _, g := range r.segments[s] {
				if x0, x1, ok := span(trX, p, g.start, g.end); ok {
					fillRect(&c, segmentColors[s], x0, trY(y-half), x1, trY(y+half))
				}
			}
		}
		tl.tokenLabels(&c, trX, trY(y), p, r)
		for m := range markKinds {
			sty := draw.GlyphStyle{Color: markColors[m], Radius: vg.Points(2.6), Shape: markShapes[m]}
			for _, t := range r.marks[m] {
				pt := vg.Point{X: trX(seconds(t)), Y: trY(y + markRise)}
				if c.Contains(pt) {
					c.DrawGlyph(sty, pt)
				}
			}
		}
	}
}

// tokenLabels writes the fencing token inside every bar wide enough for it.
func (tl timeline) tokenLabels(c *draw.Canvas, trX func(float64) vg.Length, y vg.Length, p *plot.Plot, r timelineRow) {
	sty := textStyle(8, color.White)
	sty.XAlign, sty.YAlign = text.XCenter, text.YCenter
	for _, g := range r.segments[segHeld] {
		if g.token == nil {
			continue
		}
		x0, x1, ok := span(trX, p, g.start, g.end)
		if !ok {
			continue
		}
		l := fmt.Sprintf("token %d", *g.token)
		if sty.Width(l) > x1-x0-vg.Points(4) {
			l = fmt.Sprint(*g.token)
		}
		if sty.Width(l) <= x1-x0-vg.Points(2) {
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: y}, l)
		}
	}
}

// timelineFigure is the lock timeline over [from, to] (ns).
func timelineFigure(v *view, title string, from, to int64) *figure {
	n := len(v.nodes)
	height := max(2.4*vg.Inch, 1.2*vg.Inch+vg.Length(n)*0.3*vg.Inch)
	fig, p := newFigure(title, seconds(from), seconds(to), height)
	p.Y.Label.Text = "client"
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.1 // room above the top row for the fault labels
	tl := buildTimeline(v, from, to)
	var ticks []plot.Tick
	for i, r := range tl.rows {
		ticks = append(ticks, plot.Tick{Value: tl.y(i), Label: r.node})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(faultBands{faults: v.faults, labels: true}, grid(true, false), tl)
	fig.add("held the lock", swatch{heldColor})
	fig.add("held past lease deadline", swatch{pastDeadColor})
	fig.add("overlap: two holders", swatch{overlapColor})
	for m, name := range []string{"write applied", "write rejected", "write unknown"} {
		fig.add(name, glyphThumb{draw.GlyphStyle{Color: markColors[m], Radius: vg.Points(2.6), Shape: markShapes[m]}})
	}
	addFaultLegend(fig, v.faults)
	return fig
}

// glyphThumb is a legend thumbnail showing one glyph.
type glyphThumb struct{ sty draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.sty, c.Center()) }

// closeUp is the window of the first overlap's close-up: from a little before
// the first overlap until both holdings ended, at most maxCloseUp long; ok is
// false without overlaps.
func closeUp(v *view) (from, to int64, ok bool) {
	if len(v.overlaps) == 0 {
		return 0, 0, false
	}
	o := v.overlaps[0]
	const second = int64(1e9)
	const maxCloseUp = 30 * second
	end := max(o.A.End, o.B.End)
	pad := max((end-o.Start)/10, o.End-o.Start, second/10)
	from, to = max(o.Start-pad, 0), min(end+pad, v.end)
	to = min(to, from+maxCloseUp)
	return from, max(to, o.End), true
}

var _ plot.Plotter = timeline{}
var _ plot.Thumbnailer = (*plotter.Line)(nil)
