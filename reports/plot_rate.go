package reports

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/locklab/locklab/history"
)

// outcomeDashes is the line style of an outcome in the throughput plot.
func outcomeDashes(t history.Type) []vg.Length {
	switch t {
	case history.Fail:
		return dashed
	case history.Info:
		return dotted
	}
	return solid
}

// rateFigure is completed operations per second, per window, by function and
// outcome.
func rateFigure(v *view) (*figure, error) {
	// Twice the latency windows: counts of a few operations per window
	// alias badly (4 or 5 sections in half a second read as 8 or 10 per second).
	dt := 2 * windowFor(v.end)
	fig, p := newFigure(fmt.Sprintf("Throughput: completed operations per second (%v windows)", time.Duration(dt)), 0, seconds(v.end), seriesHeight)
	p.Y.Label.Text = "operations / s"
	p.Y.Min = 0
	p.Y.Tick.Marker = niceTicks{target: 6}
	p.Add(faultBands{faults: v.faults, labels: true}, grid(false, true))
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
	used := map[history.Type]bool{}
	fs := v.functions()
	for i, f := range fs {
		// Earlier functions are drawn wider, so lines that coincide (every
		// section acquires, reads, writes and releases once) show as stripes.
		width := vg.Points(1.3 + 1.6*float64(len(fs)-1-i))
		for _, t := range outcomes {
			c := counts[f+" "+string(t)]
			if c == nil {
				continue
			}
			used[t] = true
			xys := make(plotter.XYs, n)
			for w := range c {
				xys[w] = plotter.XY{X: seconds(int64(w)*dt + dt/2), Y: float64(c[w]) * perSecond}
			}
			sty := draw.LineStyle{Color: functionColor(f), Width: width, Dashes: outcomeDashes(t)}
			if err := addLine(p, xys, sty); err != nil {
				return nil, err
			}
		}
		fig.add(f, lineThumb(draw.LineStyle{Color: functionColor(f), Width: vg.Points(3)}))
	}
	for _, t := range outcomes {
		if used[t] {
			fig.add(string(t), lineThumb(draw.LineStyle{Color: color.Black, Width: vg.Points(1.4), Dashes: outcomeDashes(t)}))
		}
	}
	addFaultLegend(fig, v.faults)
	return fig, nil
}
