package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locklab/locklab/history"
)

// Plot sizes: the width of every figure and the height of the time-series
// figures. At the PNG's 96 dots per inch a figure is 1008 pixels wide.
const (
	figureWidth  = 10.5 * vg.Inch
	seriesHeight = 3.6 * vg.Inch
)

// xBins is the resolution, across the time axis, at which plots merge what
// they draw (scatter points, timeline bars and marks): finer than a pixel of
// the PNG, so merging changes nothing a reader can see, and it bounds the size
// of the output on long runs.
const xBins = 1600

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textStyle is the plots' text in size pt and colour c.
func textStyle(pt float64, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(sansFont, vg.Points(pt)), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot over the time axis [from, to] seconds in the report's
// style.
func newPlot(title string, from, to float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansFont, 13)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 11)
		a.Tick.Label.Font = font.From(sansFont, 10)
	}
	p.X.Label.Text = "time (s)"
	p.X.Tick.Marker = niceTicks{target: 12}
	p.X.Min, p.X.Max = from, to
	if to <= from {
		p.X.Max = from + 1
	}
	return p
}

// niceTicks labels an axis at round steps (1, 2 or 5 times a power of ten),
// about target of them, with minor ticks between.
type niceTicks struct{ target int }

func (n niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/float64(n.target))))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= float64(n.target) {
			step *= m
			break
		}
	}
	minor := step / 5
	if math.Abs(step/math.Pow(10, math.Floor(math.Log10(step)))-2) < 1e-9 {
		minor = step / 4
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for i := math.Ceil(lo / minor); i*minor <= hi+minor*1e-9; i++ {
		v := i * minor
		t := plot.Tick{Value: v}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			t.Label = strconv.FormatFloat(r*step, 'f', prec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// grid returns light grid lines, to be added first.
func grid(vertical, horizontal bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	if !vertical {
		g.Vertical.Color = nil
	}
	if !horizontal {
		g.Horizontal.Color = nil
	}
	return g
}

// legendEntry is one line of a figure's legend.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// figure is a plot with its legend in columns to its right, outside the data.
type figure struct {
	plot   *plot.Plot
	legend []legendEntry
	height vg.Length
	// from and to are the time axis (s), fixed whatever the data's range.
	from, to float64
}

// newFigure returns a figure of the given height around a plot over the time
// axis [from, to] seconds in the report's style.
func newFigure(title string, from, to float64, height vg.Length) (*figure, *plot.Plot) {
	p := newPlot(title, from, to)
	return &figure{plot: p, height: height, from: p.X.Min, to: p.X.Max}, p
}

func (f *figure) add(name string, thumbs ...plot.Thumbnailer) {
	f.legend = append(f.legend, legendEntry{name: name, thumbs: thumbs})
}

// legendColumns splits the legend into columns that fit the figure's height.
func (f *figure) legendColumns() []plot.Legend {
	sty := textStyle(9.5, color.Black)
	entryH := sty.Rectangle("Xg").Max.Y - sty.Rectangle("Xg").Min.Y + vg.Points(2)
	perColumn := max(1, int((f.height-vg.Points(30))/entryH))
	var cols []plot.Legend
	for i, e := range f.legend {
		if i%perColumn == 0 {
			l := plot.NewLegend()
			l.TextStyle, l.Top, l.Left = sty, true, true
			l.ThumbnailWidth, l.Padding = vg.Points(18), vg.Points(2)
			cols = append(cols, l)
		}
		cols[len(cols)-1].Add(e.name, e.thumbs...)
	}
	return cols
}

// render draws the figure as "png" or "svg".
func (f *figure) render(format string) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(figureWidth, f.height, format)
	if err != nil {
		return nil, fmt.Errorf("plot %q: %w", f.plot.Title.Text, err)
	}
	dc := draw.New(c)
	f.plot.X.Min, f.plot.X.Max = f.from, f.to
	cols := f.legendColumns()
	var widths []vg.Length
	total := vg.Length(0)
	for i := range cols {
		r := cols[i].Rectangle(dc)
		w := r.Max.X - r.Min.X + vg.Points(10)
		widths = append(widths, w)
		total += w
	}
	f.plot.Draw(draw.Crop(dc, 0, -total, 0, 0))
	x := figureWidth - total
	for i := range cols {
		cols[i].Draw(draw.Crop(dc, x+vg.Points(4), x+widths[i]-figureWidth, 0, -vg.Points(28)))
		x += widths[i]
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot %q: %w", f.plot.Title.Text, err)
	}
	return buf.Bytes(), nil
}

// Colours: the Okabe-Ito palette, readable with every common colour-vision
// deficiency.
var (
	blue       = color.NRGBA{0, 114, 178, 255}
	green      = color.NRGBA{0, 158, 115, 255}
	orange     = color.NRGBA{230, 159, 0, 255}
	vermillion = color.NRGBA{213, 94, 0, 255}
	purple     = color.NRGBA{204, 121, 167, 255}
	skyBlue    = color.NRGBA{86, 180, 233, 255}
	grey       = color.NRGBA{110, 110, 110, 255}
	red        = color.NRGBA{200, 20, 30, 255}
)

// functionColor is the colour of an operation function.
func functionColor(f string) color.NRGBA {
	switch f {
	case "acquire":
		return blue
	case "release":
		return green
	case "renew":
		return purple
	case "read":
		return orange
	case "write":
		return vermillion
	}
	return grey
}

// shade mixes c with black (k < 0) or white (k > 0) by |k| (0..1).
func shade(c color.NRGBA, k float64) color.NRGBA {
	to := 255.0
	if k < 0 {
		to, k = 0, -k
	}
	mix := func(v uint8) uint8 { return uint8(math.Round(float64(v)*(1-k) + to*k)) }
	return color.NRGBA{mix(c.R), mix(c.G), mix(c.B), c.A}
}

// alpha returns c with opacity a.
func alpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

// faultColor is the colour of a fault kind. No fault kind is red, orange or
// blue, the colours of the lock's holdings (red is two holders at once), and
// the faults of one kind on one lane are merged into one band (faultBand),
// so that no number of overlapping faults ever shades a lane in a colour a
// reader could take for an overlap.
func faultColor(kind string) color.NRGBA {
	switch kind {
	case "pause":
		return color.NRGBA{125, 85, 200, 255} // violet
	case "partition":
		return color.NRGBA{170, 145, 30, 255} // olive
	case "clock-jump", "clock-drift":
		return color.NRGBA{0, 140, 145, 255} // teal
	case "crash":
		return color.NRGBA{60, 60, 60, 255}
	case "delay":
		return color.NRGBA{40, 120, 220, 255}
	}
	return color.NRGBA{120, 120, 120, 255}
}

// faultBand is a stretch of one lane in which faults of one kind follow each
// other without a gap: it is shaded once, however many faults it merges, and
// keeps them for its label and for a tick at each fault's start.
type faultBand struct {
	kind       string
	start, end int64
	faults     []faultWindow
}

// mergeFaults merges the fault windows of each kind that overlap or touch
// into bands, in start order (then kind).
func mergeFaults(faults []faultWindow) []faultBand {
	sorted := slices.Clone(faults)
	slices.SortStableFunc(sorted, func(a, b faultWindow) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Start, b.Start))
	})
	var out []faultBand
	for _, f := range sorted {
		if n := len(out); n > 0 && out[n-1].kind == f.Kind && f.Start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, f.End)
			out[n-1].faults = append(out[n-1].faults, f)
			continue
		}
		out = append(out, faultBand{kind: f.Kind, start: f.Start, end: f.End, faults: []faultWindow{f}})
	}
	slices.SortStableFunc(out, func(a, b faultBand) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.kind, b.kind)) })
	return out
}

// label names the band: its one fault as faultWindow.label does, or how many
// faults of its kind it merges and, withTargets, which nodes they hit
// ("3 pauses: c2, c3").
func (b faultBand) label(withTargets bool) string {
	if len(b.faults) == 1 {
		if withTargets {
			return b.faults[0].label()
		}
		return b.kind
	}
	l := history.Plural(len(b.faults), b.kind, pluralKind(b.kind))
	if !withTargets {
		return l
	}
	var targets []string
	for _, f := range b.faults {
		for _, t := range f.Targets {
			if !slices.Contains(targets, t) {
				targets = append(targets, t)
			}
		}
	}
	if len(targets) == 0 {
		return l
	}
	slices.SortFunc(targets, naturalCompare)
	t := strings.Join(targets, ", ")
	if len(t) > 24 {
		t = t[:21] + "..."
	}
	return l + ": " + t
}

// pluralKind is the plural of a fault kind ("crashes", "pauses").
func pluralKind(kind string) string {
	if strings.HasSuffix(kind, "sh") || strings.HasSuffix(kind, "ch") || strings.HasSuffix(kind, "s") {
		return kind + "es"
	}
	return kind + "s"
}

// shadeBands shades each band over [y0, y1] in its kind's colour at opacity
// a, and returns the bands drawn with their canvas extent. A band narrower
// than minBand is widened, but never into the band of its kind before it:
// no spot of a lane is shaded twice by one kind.
func shadeBands(c *draw.Canvas, trX func(float64) vg.Length, p *plot.Plot, bands []faultBand, a uint8, y0, y1 vg.Length) []drawnBand {
	var out []drawnBand
	ends := map[string]vg.Length{}
	for _, b := range bands {
		x0, x1, ok := span(trX, p, b.start, b.end)
		if !ok {
			continue
		}
		if e, seen := ends[b.kind]; seen {
			x0 = max(x0, e)
		}
		if x1 <= x0 {
			continue
		}
		ends[b.kind] = x1
		fillRect(c, alpha(faultColor(b.kind), a), x0, y0, x1, y1)
		out = append(out, drawnBand{faultBand: b, x0: x0, x1: x1})
	}
	return out
}

// drawnBand is a band as drawn: its extent on the canvas.
type drawnBand struct {
	faultBand
	x0, x1 vg.Length
}

// faultBands shades the fault windows across the whole data area, one band
// per run of overlapping faults of a kind, and labels the bands in a strip
// above the data area (reserved by addFaultBands), so that labels never sit
// on the data. A band is labelled only where its label fits between its
// start and the next band's start (or the data area's end), with its
// targets when they fit too; a band with no room gets no label (the legend
// gives its colour, the fault table lists every fault). They are drawn in
// canvas coordinates, so they work with a log axis and leave the axis ranges
// alone. An instantaneous fault (a clock jump) is drawn as a thin band.
type faultBands struct {
	faults []faultWindow
	labels bool
}

// minBand is the narrowest band drawn.
const minBand = vg.Length(1.5)

// faultLabelStyle is the style of the bands' labels.
func faultLabelStyle() text.Style {
	sty := textStyle(8.5, color.Black)
	sty.YAlign = text.YBottom
	return sty
}

// addFaultBands adds the fault bands of faults to p, behind what is added
// after them, and, when they are labelled, reserves the strip for the labels
// between the title and the data area.
func addFaultBands(p *plot.Plot, faults []faultWindow, labels bool) {
	p.Add(faultBands{faults: faults, labels: labels})
	if labels && len(faults) > 0 {
		p.Title.Padding += faultLabelLines*faultLabelStyle().Height("Xg") + vg.Points(3)
	}
}

func (b faultBands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	drawn := shadeEach(&c, trX, p, b.faults, 30, c.Min.Y, c.Max.Y)
	if !b.labels {
		return
	}
	sty := faultLabelStyle()
	labels := bandLabels(drawn, sty, vg.Points(2), c.Max.X-vg.Points(1), true)
	want, widths := labels.spans()
	for i, spot := range placeLabels(want, widths, c.Min.X+vg.Points(1), c.Max.X-vg.Points(1), faultLabelLines, vg.Points(6)) {
		if spot.line < 0 {
			continue
		}
		sty.Color = shade(faultColor(labels[i].kind), -0.35)
		c.FillText(sty, vg.Point{X: spot.x, Y: c.Max.Y + vg.Points(2) + vg.Length(spot.line)*sty.Height("Xg")}, labels[i].text)
	}
}

// faultLabelLines is how many lines of fault labels a plot's strip holds.
const faultLabelLines = 2

// shadeEach shades the faults over [y0, y1] in a band per node (or set of
// nodes) they hit: the overlapping faults of one kind on one node are one
// band, as on its lane of the timeline, while faults on different nodes
// keep their own extents and labels, the shading deepening where they
// overlap (one merged band of "8 pauses: c2, c3, c4, redis" would hide
// which fault was where). A line marks each band's start.
func shadeEach(c *draw.Canvas, trX func(float64) vg.Length, p *plot.Plot, faults []faultWindow, a uint8, y0, y1 vg.Length) []drawnBand {
	byTargets := map[string][]faultWindow{}
	var order []string
	for _, f := range faults {
		k := strings.Join(f.Targets, ",")
		if _, ok := byTargets[k]; !ok {
			order = append(order, k)
		}
		byTargets[k] = append(byTargets[k], f)
	}
	var bands []faultBand
	for _, k := range order {
		bands = append(bands, mergeFaults(byTargets[k])...)
	}
	slices.SortStableFunc(bands, func(a, b faultBand) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.kind, b.kind)) })
	var out []drawnBand
	for _, b := range bands {
		x0, x1, ok := span(trX, p, b.start, b.end)
		if !ok {
			continue
		}
		fillRect(c, alpha(faultColor(b.kind), a), x0, y0, x1, y1)
		fillRect(c, alpha(shade(faultColor(b.kind), -0.2), 200), x0, y0, x0+vg.Points(0.8), y1)
		out = append(out, drawnBand{faultBand: b, x0: x0, x1: x1})
	}
	return out
}

// bandLabel is the label a band gets: its text, where it wants to start and
// how wide it is.
type bandLabel struct {
	text, kind string
	x, width   vg.Length
}

type bandLabelList []bandLabel

func (ls bandLabelList) spans() (want, widths []vg.Length) {
	for _, l := range ls {
		want, widths = append(want, l.x), append(widths, l.width)
	}
	return want, widths
}

// bandLabels labels the bands drawn, each inset from its start: with its
// targets (withTargets) when that fits before the next band starts (or
// maxX), else with its kind alone; a band where neither fits gets none.
func bandLabels(drawn []drawnBand, sty text.Style, inset, maxX vg.Length, withTargets bool) bandLabelList {
	var out bandLabelList
	for i, d := range drawn {
		room := maxX
		for _, next := range drawn[i+1:] {
			if next.x0 > d.x0 {
				room = min(room, next.x0-vg.Points(3))
				break
			}
		}
		x := d.x0 + inset
		for _, l := range []string{d.label(withTargets), d.label(false)} {
			if w := sty.Width(l); x+w <= room {
				out = append(out, bandLabel{text: l, kind: d.kind, x: x, width: w})
				break
			}
		}
	}
	return out
}

// labelSpot is where placeLabels put a label: its left edge and its line, or
// line -1 when there was no room for it.
type labelSpot struct {
	x    vg.Length
	line int
}

// placeLabels lays out labels, in order, that want to start at want[i] and are
// widths[i] wide, on at most lines lines within [minX, maxX]: a label that
// would run past maxX is moved left to end there; a label goes on the first
// line where it keeps gap from the label before it, and is left out when no
// line has room.
func placeLabels(want, widths []vg.Length, minX, maxX vg.Length, lines int, gap vg.Length) []labelSpot {
	ends := make([]vg.Length, lines)
	for i := range ends {
		ends[i] = minX - gap
	}
	out := make([]labelSpot, len(want))
	for i := range want {
		out[i].line = -1
		w := widths[i]
		if w > maxX-minX {
			continue
		}
		x := min(max(want[i], minX), maxX-w)
		for ln := range ends {
			if x >= ends[ln]+gap {
				out[i] = labelSpot{x: x, line: ln}
				ends[ln] = x + w
				break
			}
		}
	}
	return out
}

// span maps the time interval [start, end] (ns) to canvas X, clipped to the
// axis and at least minBand wide; ok is false outside the axis.
func span(trX func(float64) vg.Length, p *plot.Plot, start, end int64) (x0, x1 vg.Length, ok bool) {
	s, e := seconds(start), seconds(end)
	if e < p.X.Min || s > p.X.Max {
		return 0, 0, false
	}
	x0, x1 = trX(math.Max(s, p.X.Min)), trX(math.Min(e, p.X.Max))
	if x1-x0 < minBand {
		x1 = x0 + minBand
	}
	return x0, x1, true
}

// fillRect fills a rectangle in canvas coordinates, clipped to c.
func fillRect(c *draw.Canvas, col color.Color, x0, y0, x1, y1 vg.Length) {
	c.FillPolygon(col, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}))
}

// swatch is a legend thumbnail: a filled rectangle of the given colour.
type swatch struct{ color color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	fillRect(c, s.color, c.Min.X, c.Min.Y, c.Max.X, c.Max.Y)
}

// addFaultLegend adds one entry per fault kind present.
func addFaultLegend(f *figure, faults []faultWindow) {
	seen := map[string]bool{}
	for _, w := range faults {
		if !seen[w.Kind] {
			seen[w.Kind] = true
			f.add(w.Kind, swatch{alpha(faultColor(w.Kind), 60)})
		}
	}
}

// seconds converts history time (ns) to seconds.
func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// lineThumb is a legend thumbnail for a line style.
func lineThumb(sty draw.LineStyle) plot.Thumbnailer {
	l := &plotter.Line{LineStyle: sty}
	return l
}

// dashes of line styles, by meaning.
var (
	solid  []vg.Length
	dashed = []vg.Length{vg.Points(5), vg.Points(3)}
	dotted = []vg.Length{vg.Points(1.2), vg.Points(2.2)}
	dashDo = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1.2), vg.Points(2)}
)
