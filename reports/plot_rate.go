package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locklab/locklab/history"
)

// Line widths of the throughput plot: the ok line of the first function is
// the widest, each later one narrower by at most rateWidthStep, so that lines
// that coincide (every section acquires, reads, writes and releases once)
// show as stripes, and no line is wider than rateWidthMax.
const (
	rateWidthMin  = 1.0
	rateWidthMax  = 4.4
	rateWidthStep = 1.1
)

// rateFigure is completed operations per second, per window: a line per
// function for the ok completions, and a mark (cross fail, triangle info, as
// in the latency plot) in every window where an operation failed or its
// outcome stayed unknown; windows without failures draw nothing, so nothing
// runs along zero.
func rateFigure(v *view) (*figure, error) {
	// Twice the latency windows: counts of a few operations per window
	// alias badly (4 or 5 sections in half a second read as 8 or 10 per second).
	dt := 2 * windowFor(v.end)
	fig, p := newFigure(fmt.Sprintf("Throughput: completed operations per second (%s windows)", history.FormatDuration(dt)), 0, seconds(v.end), seriesHeight)
	p.Y.Label.Text = "operations / s"
	p.Y.Tick.Marker = nonNegative{niceTicks{target: 6}}
	addFaultBands(p, v.faults, true)
	p.Add(grid(false, true))
	n := int(v.end/dt) + 1
	counts := map[string][]int{}
	for _, o := range v.ops {
		if o.Completion == nil {
			continue
		}
		k := o.Invoke.F + " " + string(o.Completion.Type)
		if counts[k] == nil {
			counts[k] = make([]int, n)
		}
		counts[k][int(o.Completion.Time/dt)]++
	}
	perSecond := 1e9 / float64(dt)
	most := 0.0
	used := map[history.Type]bool{}
	fs := v.functions()
	step := rateWidthStep
	if len(fs) > 1 {
		step = math.Min(rateWidthStep, (rateWidthMax-rateWidthMin)/float64(len(fs)-1))
	}
	for i, f := range fs {
		width := vg.Points(rateWidthMin + step*float64(len(fs)-1-i))
		if c := counts[f+" "+string(history.OK)]; c != nil {
			used[history.OK] = true
			xys := make(plotter.XYs, n)
			for w := range c {
				xys[w] = plotter.XY{X: seconds(int64(w)*dt + dt/2), Y: float64(c[w]) * perSecond}
				most = math.Max(most, xys[w].Y)
			}
			if err := addLine(p, xys, draw.LineStyle{Color: functionColor(f), Width: width}); err != nil {
				return nil, err
			}
		}
		fig.add(f, lineThumb(draw.LineStyle{Color: functionColor(f), Width: vg.Points(3)}))
	}
	for _, f := range fs {
		for _, t := range []history.Type{history.Fail, history.Info} {
			var xys plotter.XYs
			for w, k := range counts[f+" "+string(t)] {
				if k > 0 {
					xys = append(xys, plotter.XY{X: seconds(int64(w)*dt + dt/2), Y: float64(k) * perSecond})
					most = math.Max(most, float64(k)*perSecond)
				}
			}
			if len(xys) == 0 {
				continue
			}
			used[t] = true
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("throughput plot: %w", err)
			}
			sc.GlyphStyle = rateGlyph(f, t)
			p.Add(sc)
		}
	}
	if used[history.OK] {
		fig.add("ok (line)", lineThumb(draw.LineStyle{Color: color.Black, Width: vg.Points(1.6)}))
	}
	for _, t := range []history.Type{history.Fail, history.Info} {
		if used[t] {
			g := rateGlyph("", t)
			g.Color = color.Black
			fig.add(string(t), glyphThumb{g})
		}
	}
	// Room below zero and above the highest point for half the widest line
	// and the marks, so that nothing is clipped at the edges.
	most = math.Max(most, 1)
	p.Y.Min, p.Y.Max = -0.05*most, 1.12*most
	addFaultLegend(fig, v.faults)
	return fig, nil
}

// rateGlyph marks a window with failed (a bold cross) or unknown (a
// triangle) completions of function f.
func rateGlyph(f string, t history.Type) draw.GlyphStyle {
	c := functionColor(f)
	if t == history.Fail {
		return draw.GlyphStyle{Color: shade(c, -0.3), Radius: vg.Points(3.2), Shape: boldCross{}}
	}
	return draw.GlyphStyle{Color: c, Radius: vg.Points(3.4), Shape: draw.TriangleGlyph{}}
}

// nonNegative keeps the ticks of a marker at zero and above.
type nonNegative struct{ plot.Ticker }

func (n nonNegative) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range n.Ticker.Ticks(max(lo, 0), hi) {
		if t.Value >= 0 {
			out = append(out, t)
		}
	}
	return out
}
