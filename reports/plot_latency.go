package reports

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locklab/locklab/history"
)

// minLatencyMs is the smallest latency a log axis shows; smaller ones are
// drawn at it.
const minLatencyMs = 0.001

// latencyMs is an operation's latency in milliseconds, clamped for a log axis.
func latencyMs(ns int64) float64 { return math.Max(float64(ns)/1e6, minLatencyMs) }

// outcomeGlyph is the marker of an outcome: ok a dot, fail a cross, info a
// triangle; colour by function, darker for fail and lighter for info.
func outcomeGlyph(f string, t history.Type) draw.GlyphStyle {
	c := functionColor(f)
	switch t {
	case history.Fail:
		return draw.GlyphStyle{Color: shade(c, -0.4), Radius: vg.Points(2.6), Shape: draw.CrossGlyph{}}
	case history.Info:
		return draw.GlyphStyle{Color: shade(c, 0.25), Radius: vg.Points(2.8), Shape: draw.TriangleGlyph{}}
	}
	return draw.GlyphStyle{Color: alpha(c, 200), Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
}

// scatterSample is the points of one series after merging those closer than
// the plot's resolution.
type scatterSample struct {
	xys   plotter.XYs
	total int
}

// Scatter resolution: the points of one series that fall in the same cell of
// a grid scatterXBins across the time axis and scatterYBins per decade of
// latency (about a glyph) are drawn once. When that still leaves more than
// maxScatterPoints, the grid is coarsened until it does not, so the plot's
// size is bounded however long the run; an outlier always keeps its point.
const (
	scatterXBins     = 400
	scatterYBins     = 24
	maxScatterPoints = 12000
)

// latencyScatter collects each operation's latency at its invoke time, one
// series per function and outcome, one point per cell of the grid.
func latencyScatter(v *view) (series map[string]*scatterSample, drawn int, cell string) {
	xBins, yBins := scatterXBins, scatterYBins
	for {
		series, drawn = sampleScatter(v, xBins, yBins)
		if drawn <= maxScatterPoints || xBins < 8 {
			return series, drawn, fmt.Sprintf("1/%d of the time axis by 1/%d of a decade of latency", xBins, yBins)
		}
		xBins, yBins = xBins/2, max(yBins*3/4, 4)
	}
}

func sampleScatter(v *view, xBins, yBins int) (map[string]*scatterSample, int) {
	series := map[string]*scatterSample{}
	seen := map[string]map[int64]bool{}
	span := math.Max(float64(v.end), 1)
	drawn := 0
	for _, o := range v.ops {
		ns, done := o.Latency()
		if !done {
			continue
		}
		k := o.Invoke.F + " " + string(o.Completion.Type)
		s := series[k]
		if s == nil {
			s = &scatterSample{}
			series[k], seen[k] = s, map[int64]bool{}
		}
		s.total++
		ms := latencyMs(ns)
		cell := int64(float64(o.Invoke.Time)/span*float64(xBins))<<32 | int64(math.Floor(math.Log10(ms)*float64(yBins))+1e6)
		if seen[k][cell] {
			continue
		}
		seen[k][cell] = true
		s.xys = append(s.xys, plotter.XY{X: seconds(o.Invoke.Time), Y: ms})
		drawn++
	}
	return series, drawn
}

// Latency axis: latencyPad is the room beyond the smallest and the largest
// latency drawn (a factor, about a glyph on the log axis), latencyMinSpan
// the narrowest range the axis spans (a factor of ten, a decade).
const (
	latencyPad     = 1.4
	latencyMinSpan = 10.0
)

// latencyRange is the latency axis (ms) for latencies drawn from lo to hi:
// fitted to them with latencyPad of room on both sides, at least a decade
// wide; [minLatencyMs, 1s] when nothing was drawn. The axis ends where the
// data ends, not at the next power of ten: latencies of milliseconds to
// seconds get an axis to seconds, not to 1m40s.
func latencyRange(lo, hi float64) (float64, float64) {
	if lo <= 0 || hi <= 0 || lo > hi || math.IsInf(hi, 0) {
		return minLatencyMs, 1000
	}
	lo, hi = lo/latencyPad, hi*latencyPad
	if hi/lo < latencyMinSpan {
		mid, half := math.Sqrt(lo*hi), math.Sqrt(latencyMinSpan)
		lo, hi = mid/half, mid*half
	}
	return lo, hi
}

// latencyFigure is the scatter of every operation's latency over time.
func latencyFigure(v *view) (*figure, plotNote, error) {
	fig, p := newFigure("Latency of every operation", 0, seconds(v.end), seriesHeight)
	p.Y.Label.Text = "latency (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = durationTicks{}
	addFaultBands(p, v.faults, true)
	p.Add(grid(false, true))
	series, drawn, cell := latencyScatter(v)
	lo, hi := math.Inf(1), math.Inf(-1)
	total := 0
	for _, f := range v.functions() {
		for _, t := range outcomes {
			s := series[f+" "+string(t)]
			if s == nil {
				continue
			}
			sc, err := plotter.NewScatter(s.xys)
			if err != nil {
				return nil, plotNote{}, fmt.Errorf("latency plot: %w", err)
			}
			sc.GlyphStyle = outcomeGlyph(f, t)
			p.Add(sc)
			fig.add(fmt.Sprintf("%s %s", f, t), sc)
			total += s.total
			for _, xy := range s.xys {
				lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
			}
		}
	}
	p.Y.Min, p.Y.Max = latencyRange(lo, hi)
	addFaultLegend(fig, v.faults)
	note := plotNote{}
	if drawn < total {
		note.text = fmt.Sprintf("%d operations are drawn as %d points: the operations of one function and outcome within %s of each other are drawn once.", total, drawn, cell)
	}
	return fig, note, nil
}

// durationTicks marks a log axis of milliseconds at 1 to 9 times each power
// of ten and labels the powers of ten as durations (1ms, 10ms, 1s), the way
// every duration is printed; on an axis under latencyLabelAll decades wide,
// 2 and 5 times them too, so that a fitted axis always has labels.
type durationTicks struct{}

// latencyLabelAll is the span (decades) under which durationTicks labels
// 1, 2 and 5 times the powers of ten.
const latencyLabelAll = 2.5

func (durationTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	labelled := []int{1}
	if math.Log10(hi/lo) < latencyLabelAll {
		labelled = []int{1, 2, 5}
	}
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); math.Pow10(e) <= hi; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				t.Label = history.FormatDuration(int64(math.Round(v * 1e6)))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// plotNote says what a plot merged or capped, empty when nothing.
type plotNote struct{ text string }

// windowFor picks the width of the windows a time series aggregates over: a
// round duration giving about 100 windows, at least 10 ms.
func windowFor(end int64) int64 {
	steps := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
		5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
		5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	for _, s := range steps {
		if end/int64(s) <= 120 {
			return int64(s)
		}
	}
	return int64(time.Hour) * (end/int64(time.Hour)/120 + 1)
}

// quantileLines are the line styles of the quantile plot.
var quantileLines = []struct {
	name   string
	q      float64
	dashes []vg.Length
	width  float64
}{
	{"p50", 0.50, solid, 1.6},
	{"p95", 0.95, dashed, 1.3},
	{"p99", 0.99, dotted, 1.5},
	{"max", 1.00, dashDo, 0.9},
}

// quantilesFigure is p50/p95/p99/max latency per window and function.
func quantilesFigure(v *view) (*figure, error) {
	dt := windowFor(v.end)
	fig, p := newFigure(fmt.Sprintf("Latency quantiles per %s window", history.FormatDuration(dt)), 0, seconds(v.end), seriesHeight)
	p.Y.Label.Text = "latency (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = durationTicks{}
	addFaultBands(p, v.faults, true)
	p.Add(grid(false, true))
	n := int(v.end/dt) + 1
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range v.functions() {
		windows := make([][]int64, n)
		for _, o := range v.ops {
			if ns, done := o.Latency(); done && o.Invoke.F == f {
				w := int(o.Invoke.Time / dt)
				windows[w] = append(windows[w], ns)
			}
		}
		for _, ws := range windows {
			slices.Sort(ws)
		}
		for _, ql := range quantileLines {
			sty := draw.LineStyle{Color: functionColor(f), Width: vg.Points(ql.width), Dashes: ql.dashes}
			for _, run := range contiguous(windows) {
				var xys plotter.XYs
				for w := run[0]; w < run[1]; w++ {
					y := latencyMs(quantile(windows[w], ql.q))
					lo, hi = math.Min(lo, y), math.Max(hi, y)
					xys = append(xys, plotter.XY{X: seconds(int64(w)*dt + dt/2), Y: y})
				}
				if err := addLine(p, xys, sty); err != nil {
					return nil, err
				}
			}
		}
		fig.add(f, lineThumb(draw.LineStyle{Color: functionColor(f), Width: vg.Points(3)}))
	}
	for _, ql := range quantileLines {
		fig.add(ql.name, lineThumb(draw.LineStyle{Color: color.Black, Width: vg.Points(ql.width), Dashes: ql.dashes}))
	}
	p.Y.Min, p.Y.Max = latencyRange(lo, hi)
	addFaultLegend(fig, v.faults)
	return fig, nil
}

// contiguous returns the runs [from, to) of windows that hold values.
func contiguous(windows [][]int64) [][2]int {
	var out [][2]int
	for i := 0; i < len(windows); i++ {
		if len(windows[i]) == 0 {
			continue
		}
		j := i
		for j < len(windows) && len(windows[j]) > 0 {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// addLine adds a line through xys; a single point is drawn as a short dash.
func addLine(p *plot.Plot, xys plotter.XYs, sty draw.LineStyle) error {
	if len(xys) == 1 {
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: sty.Color, Radius: sty.Width + vg.Points(0.8), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("line: %w", err)
	}
	l.LineStyle = sty
	p.Add(l)
	return nil
}
