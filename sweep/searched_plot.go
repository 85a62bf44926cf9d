package sweep

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The safety-against-cost plot of a searched matrix: one numbered marker per
// design and storage mode, at its 99th percentile acquire latency without faults
// (right) and the number of fault families whose cells kept the data safe
// (up: systematic bound met, or random-only in the random column), coloured by the worst the search found; a legend under the
// plot names every number. Numbers instead of names on the markers keep the
// text from overlapping however close the designs are; markers of one level
// that would cover one another are set side by side.

// costPoint is one design's point.
type costPoint struct {
	N     int
	Name  string
	Class string
	// X is the 99th percentile acquire latency (ms); Y the families without
	// corruption found.
	X, Y float64
}

// searchedFigure is the rendered plot and what it left out.
type searchedFigure struct {
	PNG, SVG []byte
	Points   []costPoint
	// Unplotted names the rows without a cost.
	Unplotted []string
}

// plotSans is the page's font (Liberation Sans, metric-compatible with
// Arial, the page's fallback).
var plotSans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// Marker colours by a row's worst class, and the legend's words for them.
var plotClasses = []struct {
	class, words string
	color        color.NRGBA
}{
	{VerdictCorrupted, "data corrupted under some family", color.NRGBA{213, 94, 0, 255}},
	{classBrokeUnguarded, "lock broke, nothing but the lock guards the data", color.NRGBA{230, 159, 0, 255}},
	{VerdictLockBroke, "lock broke, the design's guard saved the data", color.NRGBA{0, 114, 178, 255}},
	{VerdictNoViolation, "no broken lock found", color.NRGBA{0, 158, 115, 255}},
}

func classColor(class string) color.NRGBA {
	for _, c := range plotClasses {
		if c.class == class {
			return c.color
		}
	}
	return color.NRGBA{87, 96, 106, 255}
}

// plotText is the plot's text in size pt and colour c.
func plotText(pt float64, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(plotSans, vg.Points(pt)), Handler: plot.DefaultTextHandler}
}

// Plot geometry.
const (
	plotWidth    = 10.5 * vg.Inch
	plotHeight   = 4.6 * vg.Inch
	markerRadius = vg.Length(7.5)
)

// plotSearched draws the safety-against-cost plot of a page, as PNG and SVG.
func plotSearched(v *searchedView) (searchedFigure, error) {
	var fig searchedFigure
	for _, r := range v.Rows {
		if r.Row.Cost == nil || r.Row.Cost.AcquireP99MS <= 0 {
			name := r.Name
			if r.Row.NoLock {
				name += " (no lock, so no acquire latency)"
			}
			fig.Unplotted = append(fig.Unplotted, name)
			continue
		}
		fig.Points = append(fig.Points, costPoint{N: r.N, Name: r.Name, Class: r.Worst, X: r.Row.Cost.AcquireP99MS, Y: float64(r.Kept)})
	}
	p := plot.New()
	p.Title.Text = "Safety against cost: one point per design and storage mode, numbered as in the table"
	p.Title.TextStyle.Font = plotText(13, color.Black).Font
	p.Title.Padding = vg.Points(10)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = plotText(11, color.Black).Font
		a.Tick.Label.Font = plotText(10, color.Black).Font
	}
	p.Y.Label.Text = fmt.Sprintf("fault families that kept the data safe (of %d)", len(v.Columns))
	p.Y.Min, p.Y.Max = -0.5, float64(len(v.Columns))+0.5
	p.Y.Tick.Marker = integerTicks{}
	p.X.Label.Text = "acquire latency without faults, p99 (ms): further left is cheaper"
	lo, hi := 1.0, 10.0
	if len(fig.Points) > 0 {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, pt := range fig.Points {
			lo, hi = min(lo, pt.X), max(hi, pt.X)
		}
	}
	if hi/lo > 3 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks125{}
		p.X.Label.Text = "acquire latency without faults, p99 (ms, log scale): further left is cheaper"
		p.X.Min, p.X.Max = lo/1.35, hi*1.35
	} else {
		pad := max((hi-lo)*0.08, 0.1*hi, 0.05)
		p.X.Min, p.X.Max = max(0, lo-pad), hi+pad
		p.X.Tick.Marker = linearTicks125{}
	}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 228}
	g.Horizontal.Color = color.Gray{Y: 228}
	p.Add(g)
	p.Add(numberedMarkers{points: fig.Points, radius: markerRadius})

	legend := layoutCostLegend(fig.Points, plotWidth-2*plotMargin)
	height := plotHeight + legend.height
	for _, format := range []string{"png", "svg"} {
		c, err := draw.NewFormattedCanvas(plotWidth, height, format)
		if err != nil {
			return fig, fmt.Errorf("plot: %w", err)
		}
		dc := draw.New(c)
		dc.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: plotWidth, Y: 0}, {X: plotWidth, Y: height}, {X: 0, Y: height}})
		p.Draw(draw.Crop(dc, plotMargin, -plotMargin, legend.height, -plotMargin))
		legend.draw(draw.Crop(dc, plotMargin, -plotMargin, 0, -plotHeight))
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fig, fmt.Errorf("plot: %w", err)
		}
		if format == "png" {
			fig.PNG = buf.Bytes()
		} else {
			fig.SVG = buf.Bytes()
		}
	}
	return fig, nil
}

// costLegend is the legend under the plot: the colour key, then every
// point's number and name, in as many columns (at most two) as fit.
type costLegend struct {
	points  []costPoint
	key     [][]int // the colour key's lines, as indexes into plotClasses
	columns int
	perCol  int
	colX    []vg.Length
	height  vg.Length
}

// Legend geometry.
const (
	plotMargin  = vg.Length(10)
	legendLine  = vg.Length(13)
	legendFont  = 10.0
	legendInset = vg.Length(40) // from the left, under the plot's data
)

func layoutCostLegend(points []costPoint, width vg.Length) costLegend {
	l := costLegend{points: points}
	sty := plotText(legendFont, color.Black)
	// The colour key, wrapped to the width.
	var line []int
	var x vg.Length
	for i, pc := range plotClasses {
		w := 14 + sty.Width(pc.words) + 22
		if len(line) > 0 && legendInset+x+w > width {
			l.key = append(l.key, line)
			line, x = nil, 0
		}
		line = append(line, i)
		x += w
	}
	l.key = append(l.key, line)
	// The names: two columns when the widest name of the first fits beside
	// the second.
	entry := func(pt costPoint) vg.Length { return 12 + sty.Width(pt.Name) }
	l.columns, l.perCol = 1, len(points)
	if len(points) > 1 {
		per := (len(points) + 1) / 2
		var w1, w2 vg.Length
		for i, pt := range points {
			if i < per {
				w1 = max(w1, entry(pt))
			} else {
				w2 = max(w2, entry(pt))
			}
		}
		if legendInset+w1+28+w2 <= width {
			l.columns, l.perCol = 2, per
			l.colX = []vg.Length{legendInset, legendInset + w1 + 28}
		}
	}
	if l.columns == 1 {
		l.colX = []vg.Length{legendInset}
	}
	l.height = 10 + vg.Length(len(l.key))*legendLine + 8 + vg.Length(l.perCol)*legendLine + 8
	return l
}

// draw draws the legend into c, from its top.
func (l costLegend) draw(c draw.Canvas) {
	sty := plotText(legendFont, color.Black)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	y := c.Max.Y - 10 - legendLine/2
	for _, line := range l.key {
		x := c.Min.X + legendInset
		for _, i := range line {
			pc := plotClasses[i]
			c.DrawGlyph(draw.GlyphStyle{Color: pc.color, Radius: 5, Shape: draw.CircleGlyph{}}, vg.Point{X: x + 5, Y: y})
			c.FillText(sty, vg.Point{X: x + 14, Y: y}, pc.words)
			x += 14 + sty.Width(pc.words) + 22
		}
		y -= legendLine
	}
	y -= 8
	for i, pt := range l.points {
		col, row := i/l.perCol, i%l.perCol
		ctr := vg.Point{X: c.Min.X + l.colX[col] + 6, Y: y - vg.Length(row)*legendLine}
		drawNumberedMarker(c, ctr, pt, 6)
		c.FillText(sty, vg.Point{X: ctr.X + 11, Y: ctr.Y}, pt.Name)
	}
}

// drawNumberedMarker draws a point's marker, a disc of its colour with its
// number in white, centred on ctr.
func drawNumberedMarker(c draw.Canvas, ctr vg.Point, pt costPoint, radius vg.Length) {
	c.DrawGlyph(draw.GlyphStyle{Color: color.White, Radius: radius + 1.2, Shape: draw.CircleGlyph{}}, ctr)
	c.DrawGlyph(draw.GlyphStyle{Color: classColor(pt.Class), Radius: radius, Shape: draw.CircleGlyph{}}, ctr)
	label := strconv.Itoa(pt.N)
	size := 9.5
	if len(label) > 1 {
		size = 8.5
	}
	sty := plotText(size*float64(radius)/7.5, color.White)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, vg.Point{X: ctr.X, Y: ctr.Y - 0.3}, label)
}

// numberedMarkers is the plotter of the points: each a numbered disc, set
// beside the discs of its level it would cover (see placeMarkers).
type numberedMarkers struct {
	points []costPoint
	radius vg.Length
}

// Plot implements plot.Plotter.
func (m numberedMarkers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	at := make([]vg.Point, len(m.points))
	for i, pt := range m.points {
		at[i] = vg.Point{X: trX(pt.X), Y: trY(pt.Y)}
	}
	placed := placeMarkers(at, 2*m.radius+1.5, c.Rectangle)
	for i, pt := range m.points {
		drawNumberedMarker(c, placed[i], pt, m.radius)
	}
}

// placeMarkers returns a centre for each marker. The vertical axis counts
// whole families, so a marker never leaves its level: markers of one level
// that would cover one another are set side by side, centred on the mean of
// their latencies, and groups that then touch are merged until none do.
func placeMarkers(at []vg.Point, diameter vg.Length, bounds vg.Rectangle) []vg.Point {
	type group struct {
		members []int // indexes into at, left to right
		centre  vg.Length
	}
	out := slices.Clone(at)
	levels := map[vg.Length][]int{}
	var ys []vg.Length
	for i, p := range at {
		if levels[p.Y] == nil {
			ys = append(ys, p.Y)
		}
		levels[p.Y] = append(levels[p.Y], i)
	}
	for _, y := range ys {
		idx := levels[y]
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(at[a].X, at[b].X) })
		var groups []group
		for _, i := range idx {
			groups = append(groups, group{members: []int{i}, centre: at[i].X})
		}
		half := func(g group) vg.Length { return vg.Length(len(g.members)) * diameter / 2 }
		for merged := true; merged; {
			merged = false
			for k := 0; k+1 < len(groups); k++ {
				a, b := groups[k], groups[k+1]
				if a.centre+half(a) <= b.centre-half(b) {
					continue
				}
				g := group{members: append(slices.Clone(a.members), b.members...)}
				for _, i := range g.members {
					g.centre += at[i].X
				}
				g.centre /= vg.Length(len(g.members))
				groups = append(append(groups[:k:k], g), groups[k+2:]...)
				merged = true
				break
			}
		}
		for _, g := range groups {
			left := g.centre - half(g) + diameter/2
			left = max(left, bounds.Min.X+diameter/2)
			left = min(left, bounds.Max.X-half(g)*2+diameter/2)
			for k, i := range g.members {
				out[i] = vg.Point{X: left + vg.Length(k)*diameter, Y: y}
			}
		}
	}
	return out
}

// DataRange implements plot.DataRanger.
func (m numberedMarkers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, pt := range m.points {
		xmin, xmax = min(xmin, pt.X), max(xmax, pt.X)
		ymin, ymax = min(ymin, pt.Y), max(ymax, pt.Y)
	}
	return xmin, xmax, ymin, ymax
}

// integerTicks labels every whole number of the axis.
type integerTicks struct{}

// Ticks implements plot.Ticker.
func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for v := math.Ceil(lo) + 0; v <= hi; v++ {
		out = append(out, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	return out
}

// linearTicks125 labels a linear axis at steps of 1, 2 or 5 times a power
// of ten, five to ten of them.
type linearTicks125 struct{}

// Ticks implements plot.Ticker.
func (linearTicks125) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/10)))
	for _, k := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*k) <= 10 {
			step *= k
			break
		}
	}
	var out []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		out = append(out, plot.Tick{Value: i * step, Label: strconv.FormatFloat(i*step, 'g', 6, 64)})
	}
	return out
}

// logTicks125 labels a log axis at 1, 2 and 5 times each power of ten, with
// minor ticks at the other integers; every integer is labelled when the axis
// spans less than a decade and a half.
type logTicks125 struct{}

// Ticks implements plot.Ticker.
func (logTicks125) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	every := hi/lo < 30
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		base := math.Pow(10, e)
		for k := 1; k <= 9; k++ {
			v := float64(k) * base
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if every || k == 1 || k == 2 || k == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 6, 64)
			}
			out = append(out, t)
		}
	}
	return out
}
