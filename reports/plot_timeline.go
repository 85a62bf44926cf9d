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
	markColors    = [markKinds]color.Color{green, red, color.NRGBA{60, 60, 60, 255}}
	markShapes    = [markKinds]draw.GlyphDrawer{draw.CircleGlyph{}, boldCross{}, draw.TriangleGlyph{}}
	// markRadius: applied writes are many and small; the ones that matter stand out.
	markRadius    = [markKinds]vg.Length{vg.Points(1.8), vg.Points(4), vg.Points(3.5)}
	segmentColors = [segStyles]color.NRGBA{heldColor, pastDeadColor, overlapColor}
)

// Bars closer than 1/barBins of the time axis (about 1.3 pixels of the PNG)
// are merged into one, and marks of one kind closer than 1/markBins (about
// half a mark) are drawn once: nothing a reader could tell apart is lost, and
// each row draws at most barBins bars and markBins marks of each kind however
// long the run.
const (
	barBins  = 600
	markBins = 300
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
		if o.Invoke.F != history.FWrite {
			continue
		}
		r := &rows[index[o.Invoke.Node]]
		switch {
		case o.Completion != nil && o.Completion.Type == history.OK:
			r.marks[markApplied] = append(r.marks[markApplied], o.Completion.Time)
		case o.Completion != nil && o.Completion.Type == history.Fail:
			r.marks[markRejected] = append(r.marks[markRejected], o.Completion.Time)
		case o.Completion != nil:
			r.marks[markUnknown] = append(r.marks[markUnknown], o.Completion.Time)
		default:
			r.marks[markUnknown] = append(r.marks[markUnknown], o.Invoke.Time)
		}
	}
	for _, f := range v.faults {
		for _, t := range f.Targets {
			if i, ok := index[t]; ok {
				rows[i].faults = append(rows[i].faults, f)
			}
		}
	}
	barGap, markGap := max((to-from)/barBins, 1), max((to-from)/markBins, 1)
	for i := range rows {
		for s := range rows[i].segments {
			rows[i].segments[s] = mergeSegments(rows[i].segments[s], from, to, barGap)
		}
		for m := range rows[i].marks {
			rows[i].marks[m] = thinMarks(rows[i].marks[m], from, to, markGap)
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

// active keeps the rows that show a bar or a mark.
func (tl timeline) active() timeline {
	var out []timelineRow
	for _, r := range tl.rows {
		n := 0
		for _, s := range r.segments {
			n += len(s)
		}
		for _, m := range r.marks {
			n += len(m)
		}
		if n > 0 {
			out = append(out, r)
		}
	}
	return timeline{rows: out}
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
			half, minW := barHalf, vg.Length(0)
			if s == segOverlap {
				// An overlap stands out even when it is shorter than a pixel.
				half, minW = barHalf+0.08, vg.Points(3)
			}
			for _, g := range r.segments[s] {
				if x0, x1, ok := span(trX, p, g.start, g.end); ok {
					if x1-x0 < minW {
						x0, x1 = (x0+x1-minW)/2, (x0+x1+minW)/2
					}
					fillRect(&c, segmentColors[s], x0, trY(y-half), x1, trY(y+half))
				}
			}
		}
		tl.tokenLabels(&c, trX, trY(y), p, r)
		for m := range markKinds {
			sty := markStyle(m)
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

// timelineFigure is the lock timeline over [from, to] (ns); a close-up shows
// only the clients with a bar or a mark in it.
func timelineFigure(v *view, title string, from, to int64, closeUp bool) *figure {
	tl := buildTimeline(v, from, to)
	if closeUp {
		tl = tl.active()
	}
	n := len(tl.rows)
	fig, p := newFigure(title, seconds(from), seconds(to), max(2.4*vg.Inch, 1.2*vg.Inch+vg.Length(n)*0.3*vg.Inch))
	p.Y.Label.Text = "client"
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.1 // room above the top row for the fault labels
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
		fig.add(name, glyphThumb{markStyle(m)})
	}
	addFaultLegend(fig, v.faults)
	return fig
}

func markStyle(m int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: markColors[m], Radius: markRadius[m], Shape: markShapes[m]}
}

// boldCross is a cross glyph drawn with a thick line.
type boldCross struct{}

func (boldCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.8)})
	r := sty.Radius * 0.7071
	for _, d := range []vg.Length{r, -r} {
		var p vg.Path
		p.Move(vg.Point{X: pt.X - r, Y: pt.Y - d})
		p.Line(vg.Point{X: pt.X + r, Y: pt.Y + d})
		c.Stroke(p)
	}
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
