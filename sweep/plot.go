package sweep

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// storageColors colour the plot's points and the page's storage labels
// (Okabe-Ito: readable with every common colour-vision deficiency).
var storageColors = map[string]color.NRGBA{
	"unfenced":     {213, 94, 0, 255},
	"fenced":       {0, 114, 178, 255},
	"fenced+reads": {0, 158, 115, 255},
}

// plotSafetyCost draws safety (share of seeds violated under the worst fault
// family) against cost (critical sections per second on the no-fault
// baseline), one point per row, as PNG and SVG.
func plotSafetyCost(mx Matrix) (png, svg []byte, err error) {
	p := plot.New()
	p.Title.Text = "Safety against cost: one point per design and storage mode"
	p.X.Label.Text = "critical sections per second, no faults (higher is cheaper)"
	p.Y.Label.Text = "share of seeds violated, worst fault family"
	p.Y.Min, p.Y.Max = -0.05, 1.1
	p.Add(plotter.NewGrid())
	for _, storage := range []string{"unfenced", "fenced", "fenced+reads"} {
		var xys plotter.XYs
		var labels []string
		for _, mr := range mx.Rows {
			if mr.Row.Storage != storage || mr.Cost == nil {
				continue
			}
			xys = append(xys, plotter.XY{X: mr.Cost.CSPerSecond, Y: mr.Worst})
			labels = append(labels, mr.Row.ID[:4])
		}
		if len(xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("plot: %w", err)
		}
		sc.GlyphStyle.Color = storageColors[storage]
		sc.GlyphStyle.Radius = vg.Points(4)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
		p.Legend.Add(storage, sc)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, nil, fmt.Errorf("plot: %w", err)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Color = storageColors[storage]
			lb.TextStyle[i].XAlign = draw.XLeft
			lb.TextStyle[i].YAlign = draw.YCenter
		}
		lb.Offset = vg.Point{X: vg.Points(6)}
		p.Add(lb)
	}
	p.Legend.Top = true
	for _, format := range []string{"png", "svg"} {
		c, err := draw.NewFormattedCanvas(10*vg.Inch, 5.5*vg.Inch, format)
		if err != nil {
			return nil, nil, fmt.Errorf("plot: %w", err)
		}
		p.Draw(draw.New(c))
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("plot: %w", err)
		}
		if format == "png" {
			png = buf.Bytes()
		} else {
			svg = buf.Bytes()
		}
	}
	return png, svg, nil
}
