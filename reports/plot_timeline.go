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

// serverLane is a lane above the clients for the faults that hit one
// non-client node (a server, the storage), or, when too many nodes were hit
// for a lane each, every such node ("servers").
type serverLane struct {
	name   string
	faults []faultWindow
}

// densityBand aggregates the clients that do not get a row of their own: how
// many of them believed they held the lock at once, per bin of the time axis.
type densityBand struct {
	clients int
	// holders are runs of bins with the same count, in time order.
	holders []holderRun
	// most is the largest count.
	most   int
	faults []faultWindow // faults that hit an aggregated client
}

// holderRun is a stretch of time [start, end) (ns) in which count of the
// aggregated clients held the lock at most.
type holderRun struct {
	start, end int64
	count      int
}

// timeline is the plotter of the lock timeline: lanes for the faults that hit
// servers at the top, one row per client below them, with a bar for each
// interval in which it believed it held the lock, its storage writes, the
// faults that hit it, and every overlap of two holders in red; and, when
// there are more clients than rows, a density band for the rest.
type timeline struct {
	servers []serverLane
	rows    []timelineRow
	band    *densityBand
}

// Timeline geometry, in rows.
const (
	barHalf  = 0.24
	markRise = 0.37
	// serverLaneHeight is a server lane's height, serverGap the space between
	// the server lanes and the clients, bandHeight the density band's.
	serverLaneHeight = 0.8
	serverGap        = 0.35
	bandHeight       = 2.5
	// faultInset keeps the shading of adjacent rows apart.
	faultInset = 0.05
)

// Bounds of the timeline's figure: at most maxClientRows client rows (the
// rest are drawn as a density band) and maxServerLanes server lanes (beyond
// that, one lane for all servers), each client row between minRowPitch and
// maxRowPitch high, so that the figure's height is bounded however many
// clients and servers the run had.
const (
	maxClientRows  = 40
	maxServerLanes = 8
	maxRowPitch    = 0.3 * vg.Inch
	minRowPitch    = 0.18 * vg.Inch
	clientsHeight  = 7 * vg.Inch
)

var (
	heldColor     = blue
	pastDeadColor = orange
	overlapColor  = red
	stripeColor   = color.Gray{Y: 245}
	laneColor     = color.Gray{Y: 236}
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
// merging bars and marks closer than the plot's resolution, and the server
// lanes of the faults that hit nodes other than clients. It keeps every
// client's row; bounded keeps those a figure can show.
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
	var servers []serverLane
	lane := map[string]int{}
	for _, f := range v.faults {
		if f.End < from || f.Start > to {
			continue
		}
		onServer := len(f.Targets) == 0 // a fault of the whole network
		for _, t := range f.Targets {
			if i, ok := index[t]; ok {
				rows[i].faults = append(rows[i].faults, f)
			} else {
				onServer = true
			}
		}
		if !onServer {
			continue
		}
		for _, t := range serverTargets(f, index) {
			if _, ok := lane[t]; !ok {
				lane[t] = len(servers)
				servers = append(servers, serverLane{name: t})
			}
			servers[lane[t]].faults = append(servers[lane[t]].faults, f)
		}
	}
	slices.SortStableFunc(servers, func(a, b serverLane) int { return naturalCompare(a.name, b.name) })
	if len(servers) > maxServerLanes {
		all := serverLane{name: "servers"}
		for _, f := range v.faults {
			if (f.End >= from && f.Start <= to) && len(serverTargets(f, index)) > 0 {
				all.faults = append(all.faults, f)
			}
		}
		servers = []serverLane{all}
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
	return timeline{servers: servers, rows: rows}
}

// serverTargets are the targets of f that are not clients, or "network" for
// a fault without targets.
func serverTargets(f faultWindow, clients map[string]int) []string {
	if len(f.Targets) == 0 {
		return []string{"network"}
	}
	var out []string
	for _, t := range f.Targets {
		if _, ok := clients[t]; !ok {
			out = append(out, t)
		}
	}
	return out
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

// active keeps the rows that show a bar, a mark or a fault.
func (tl timeline) active() timeline {
	var out []timelineRow
	for _, r := range tl.rows {
		n := len(r.faults)
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
	tl.rows = out
	return tl
}

// bounded keeps at most maxClientRows client rows. With more clients, the
// clients in an overlap within [from, to] keep their rows first, then the
// clients hit by a fault; the others are aggregated into a density band.
func (tl timeline) bounded(v *view, from, to int64) timeline {
	if len(tl.rows) <= maxClientRows {
		return tl
	}
	keep := map[string]bool{}
	add := func(n string) {
		if len(keep) < maxClientRows {
			keep[n] = true
		}
	}
	for _, o := range v.overlaps {
		if o.End >= from && o.Start <= to {
			add(o.A.Node)
			add(o.B.Node)
		}
	}
	for _, r := range tl.rows {
		if len(r.faults) > 0 {
			add(r.node)
		}
	}
	others := map[string]bool{}
	var rows []timelineRow
	for _, r := range tl.rows {
		if keep[r.node] {
			rows = append(rows, r)
		} else {
			others[r.node] = true
		}
	}
	tl.rows, tl.band = rows, density(v, others, from, to)
	return tl
}

// density is the band of the clients in others over [from, to] (ns): per bin
// of the time axis, the most of them that believed they held the lock at once.
func density(v *view, others map[string]bool, from, to int64) *densityBand {
	band := &densityBand{clients: len(others)}
	type change struct {
		t int64
		d int
	}
	var changes []change
	for _, h := range v.holdings {
		if others[h.Node] && h.End >= from && h.Start <= to {
			changes = append(changes, change{h.Start, +1}, change{h.End, -1})
		}
	}
	// A holding that ends when another starts is not an overlap: ends first.
	slices.SortStableFunc(changes, func(a, b change) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.d, b.d)) })
	bin := max((to-from)/barBins, 1)
	cur, j := 0, 0
	for ; j < len(changes) && changes[j].t < from; j++ {
		cur += changes[j].d
	}
	for start := from; start < to; start += bin {
		most := cur
		for ; j < len(changes) && changes[j].t < start+bin; j++ {
			cur += changes[j].d
			most = max(most, cur)
		}
		band.most = max(band.most, most)
		if n := len(band.holders); n > 0 && band.holders[n-1].count == most {
			band.holders[n-1].end = start + bin
			continue
		}
		band.holders = append(band.holders, holderRun{start: start, end: start + bin, count: most})
	}
	for _, f := range v.faults {
		for _, t := range f.Targets {
			if others[t] && f.End >= from && f.Start <= to {
				band.faults = append(band.faults, f)
				break
			}
		}
	}
	return band
}

// lane is the extent of a lane on the y axis (rows, 0 at the bottom).
type lane struct{ lo, hi float64 }

func (l lane) mid() float64 { return (l.lo + l.hi) / 2 }

// timelineLayout places the lanes: the density band at the bottom, the
// client rows above it (the first at the top), the server lanes above them.
type timelineLayout struct {
	rows, servers []lane
	band          lane
	top           float64
}

func (tl timeline) layout() timelineLayout {
	var l timelineLayout
	y := 0.0
	if tl.band != nil {
		l.band = lane{0.05, 0.05 + bandHeight}
		y = l.band.hi + 0.15
	}
	l.rows = make([]lane, len(tl.rows))
	for i := len(tl.rows) - 1; i >= 0; i-- {
		l.rows[i] = lane{y, y + 1}
		y++
	}
	if len(tl.servers) > 0 {
		y += serverGap
	}
	l.servers = make([]lane, len(tl.servers))
	for i := len(tl.servers) - 1; i >= 0; i-- {
		l.servers[i] = lane{y, y + serverLaneHeight}
		y += serverLaneHeight
	}
	l.top = y
	return l
}

// timelineBackground draws the timeline's lanes: a stripe on every other
// client row, a grey ground for the server lanes and the density band. It is
// added before the grid, and the timeline draws everything else over it.
type timelineBackground struct{ tl timeline }

func (b timelineBackground) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	l := b.tl.layout()
	for i, r := range l.rows {
		if i%2 == 1 {
			fillRect(&c, stripeColor, c.Min.X, trY(r.lo), c.Max.X, trY(r.hi))
		}
	}
	for _, s := range l.servers {
		fillRect(&c, laneColor, c.Min.X, trY(s.lo+0.04), c.Max.X, trY(s.hi-0.04))
	}
	if b.tl.band != nil {
		fillRect(&c, laneColor, c.Min.X, trY(l.band.lo), c.Max.X, trY(l.band.hi))
	}
}

// Plot draws the faults over the lanes, then the bars and marks of each row.
func (tl timeline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	l := tl.layout()
	for i, r := range tl.rows {
		shadeFaults(&c, trX, p, r.faults, trY(l.rows[i].lo+faultInset), trY(l.rows[i].hi-faultInset))
	}
	for i, s := range tl.servers {
		tl.drawServerLane(&c, trX, p, s, trY(l.servers[i].lo+0.04), trY(l.servers[i].hi-0.04))
	}
	if tl.band != nil {
		tl.drawBand(&c, trX, trY, p, l.band)
	}
	for i, r := range tl.rows {
		y := l.rows[i].mid()
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
		tl.overBars(&c, trX, p, r, trY(y-barHalf-0.06), trY(y+barHalf+0.06))
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

// shadeFaults shades the faults of one lane over [y0, y1]: the faults of one
// kind that overlap are merged into one band, shaded once and
// semi-transparent so that the lane shows through, with a thin line at the
// start of each fault so that faults that follow each other, or overlap,
// stay apart. It returns the bands drawn.
func shadeFaults(c *draw.Canvas, trX func(float64) vg.Length, p *plot.Plot, faults []faultWindow, y0, y1 vg.Length) []drawnBand {
	drawn := shadeBands(c, trX, p, mergeFaults(faults), 90, y0, y1)
	for _, d := range drawn {
		for _, f := range d.faults {
			if seconds(f.Start) >= p.X.Min && seconds(f.Start) <= p.X.Max {
				x := trX(seconds(f.Start))
				fillRect(c, alpha(shade(faultColor(f.Kind), -0.2), 220), x, y0, x+vg.Points(0.9), y1)
			}
		}
	}
	return drawn
}

// overBars outlines the faults that hit a client while it held the lock
// around its bars, labelled with their kind and length where they fit: the pause that lets a holder's lease run out lies under its
// bar, and without this it would show as a strip above and below the bar
// while a bystander's pause fills its row.
func (tl timeline) overBars(c *draw.Canvas, trX func(float64) vg.Length, p *plot.Plot, r timelineRow, y0, y1 vg.Length) {
	sty := textStyle(8, color.Black)
	sty.XAlign, sty.YAlign = text.XCenter, text.YBottom
	for _, f := range r.faults {
		if !r.heldDuring(f.Start, f.End) {
			continue
		}
		x0, x1, ok := span(trX, p, f.Start, f.End)
		if !ok {
			continue
		}
		col := faultColor(f.Kind)
		line := vg.Points(1.5)
		for _, e := range [][4]vg.Length{{x0, y0, x1, y0 + line}, {x0, y1 - line, x1, y1}, {x0, y0, x0 + line, y1}, {x1 - line, y0, x1, y1}} {
			fillRect(c, shade(col, -0.35), e[0], e[1], e[2], e[3])
		}
		l := fmt.Sprintf("%s %s", f.Kind, history.FormatDuration(f.End-f.Start))
		if sty.Width(l) <= x1-x0-vg.Points(4) {
			sty.Color = shade(col, -0.6)
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: y1 + vg.Points(0.5)}, l)
		}
	}
}

// heldDuring says whether the client believed it held the lock at some time
// in [from, to] (ns).
func (r timelineRow) heldDuring(from, to int64) bool {
	for _, segs := range r.segments {
		for _, g := range segs {
			if g.start < to && g.end > from {
				return true
			}
		}
	}
	return false
}

// drawServerLane shades the faults of a server lane and labels each band
// with its kind, or how many faults it merges ("2 pauses"), and their
// targets in the lane of all servers, where the label fits before the next
// band starts.
func (tl timeline) drawServerLane(c *draw.Canvas, trX func(float64) vg.Length, p *plot.Plot, s serverLane, y0, y1 vg.Length) {
	drawn := shadeFaults(c, trX, p, s.faults, y0, y1)
	sty := textStyle(8.5, color.Black)
	sty.YAlign = text.YCenter
	labels := bandLabels(drawn, sty, vg.Points(2.5), c.Max.X-vg.Points(1), s.name == "servers" || s.name == "network")
	want, widths := labels.spans()
	for i, spot := range placeLabels(want, widths, c.Min.X+vg.Points(1), c.Max.X-vg.Points(1), 1, vg.Points(6)) {
		if spot.line >= 0 {
			sty.Color = shade(faultColor(labels[i].kind), -0.55)
			c.FillText(sty, vg.Point{X: spot.x, Y: (y0 + y1) / 2}, labels[i].text)
		}
	}
}

// drawBand draws the density band: for each stretch of time, a bar as high as
// the most aggregated clients that held the lock at once (red from two on),
// the faults that hit them, and a line saying what it is.
func (tl timeline) drawBand(c *draw.Canvas, trX, trY func(float64) vg.Length, p *plot.Plot, l lane) {
	b := tl.band
	shadeFaults(c, trX, p, b.faults, trY(l.lo), trY(l.hi))
	base, room := l.lo+0.1, bandHeight-0.85
	for _, h := range b.holders {
		if h.count == 0 {
			continue
		}
		x0, x1, ok := span(trX, p, h.start, h.end)
		if !ok {
			continue
		}
		col := heldColor
		if h.count > 1 {
			col = overlapColor
		}
		fillRect(c, col, x0, trY(base), x1, trY(base+room*float64(h.count)/float64(max(b.most, 1))))
	}
	sty := textStyle(8.5, color.Black)
	sty.YAlign = text.YTop
	what := fmt.Sprintf("%s, each without a row: how many held the lock at once (at most %d)",
		history.Plural(b.clients, "other client", "other clients"), b.most)
	c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(3), Y: trY(l.hi) - vg.Points(2)}, what)
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
// only the clients with a bar, a mark or a fault in it. Beyond maxClientRows
// clients, the figure keeps a row for those in an overlap or hit by a fault
// and aggregates the rest; the note says so.
func timelineFigure(v *view, title string, from, to int64, closeUp bool) (*figure, plotNote) {
	tl := buildTimeline(v, from, to)
	if closeUp {
		tl = tl.active()
	}
	clients := len(tl.rows)
	tl = tl.bounded(v, from, to)
	l := tl.layout()
	pitch := min(maxRowPitch, max(minRowPitch, clientsHeight/vg.Length(max(len(tl.rows), 1))))
	fig, p := newFigure(title, seconds(from), seconds(to), max(2.4*vg.Inch, 1.2*vg.Inch+vg.Length(l.top+0.2)*pitch))
	p.Y.Label.Text = "client"
	if len(tl.servers) > 0 {
		p.Y.Label.Text = "node"
	}
	p.Y.Min, p.Y.Max = -0.1, l.top+0.1
	var ticks []plot.Tick
	for i, s := range tl.servers {
		ticks = append(ticks, plot.Tick{Value: l.servers[i].mid(), Label: s.name})
	}
	for i, r := range tl.rows {
		ticks = append(ticks, plot.Tick{Value: l.rows[i].mid(), Label: r.node})
	}
	if tl.band != nil {
		ticks = append(ticks, plot.Tick{Value: l.band.mid(), Label: fmt.Sprintf("%d others", tl.band.clients)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Add(timelineBackground{tl}, grid(true, false), tl)
	fig.add("held the lock", swatch{heldColor})
	fig.add("held past lease deadline", swatch{pastDeadColor})
	fig.add("overlap: two holders", swatch{overlapColor})
	for m, name := range []string{"write applied", "write rejected", "write unknown"} {
		fig.add(name, glyphThumb{markStyle(m)})
	}
	addFaultLegend(fig, faultsIn(v.faults, from, to))
	var note plotNote
	if tl.band != nil {
		note.text = fmt.Sprintf("With %d clients, the %s in an overlap or hit by a fault get a row each; the other %d are drawn as one band (how many of them held the lock at once), without their writes.",
			clients, history.Plural(len(tl.rows), "client", "clients"), tl.band.clients)
	}
	return fig, note
}

// faultsIn keeps the faults that meet [from, to] (ns).
func faultsIn(faults []faultWindow, from, to int64) []faultWindow {
	var out []faultWindow
	for _, f := range faults {
		if f.End >= from && f.Start <= to {
			out = append(out, f)
		}
	}
	return out
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
