package reports

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Plot is one rendered plot of a run, written as Name.png and Name.svg.
type Plot struct {
	// Name is the file name without extension ("timeline").
	Name string
	// Title and Caption say what the plot shows.
	Title, Caption string
	// Note says what the plot merged or left out to stay readable, if anything.
	Note string
	// PNG and SVG are the rendered images.
	PNG, SVG []byte
}

// Plot file names (without extension).
const (
	TimelinePlot         = "timeline"
	OverlapTimelinePlot  = "timeline-overlap"
	LatencyRawPlot       = "latency-raw"
	LatencyQuantilesPlot = "latency-quantiles"
	RatePlot             = "rate"
)

// RenderPlots draws the plots of a history. The same events always give the
// same bytes.
func RenderPlots(events []history.Event) ([]Plot, error) {
	return renderPlots(newView(events))
}

func renderPlots(v *view) ([]Plot, error) {
	type spec struct {
		name, caption string
		build         func() (*figure, plotNote, error)
	}
	noNote := func(f *figure, err error) (*figure, plotNote, error) { return f, plotNote{}, err }
	specs := []spec{{TimelinePlot,
		"One row per client: a bar for each interval in which it believed it held the lock (blue; orange once its own lease deadline had passed), red where two clients believed it at once, marks for its storage writes, and the faults that hit it shaded on its row (faults of one kind that overlap shade one band, never red, with a line at each fault's start). Faults that hit a server (or the storage) are shaded and labelled in that node's lane above the clients.",
		func() (*figure, plotNote, error) {
			fig, note := timelineFigure(v, "Lock timeline: who believed they held the lock", 0, v.end, false)
			return fig, note, nil
		}}}
	if from, to, ok := closeUp(v); ok {
		o := v.overlaps[0]
		specs = append(specs, spec{OverlapTimelinePlot,
			fmt.Sprintf("Close-up of the first overlap: %s and %s both believed they held %q from %s to %s.%s",
				o.A.Node, o.B.Node, o.A.Key, history.FormatTime(o.Start), history.FormatTime(o.End), overlapWrites(v, o)),
			func() (*figure, plotNote, error) {
				fig, note := timelineFigure(v, "Lock timeline around the first overlap", from, to, true)
				return fig, note, nil
			}})
	}
	specs = append(specs,
		spec{LatencyRawPlot, "The latency of every operation at the time it was invoked (log scale): dots ok, crosses fail, triangles info (outcome unknown); colour by function.",
			func() (*figure, plotNote, error) { return latencyFigure(v) }},
		spec{LatencyQuantilesPlot, "Latency quantiles of the operations invoked in each window, by function (colour) and quantile (line style); gaps are windows without completions.",
			func() (*figure, plotNote, error) { return noNote(quantilesFigure(v)) }},
		spec{RatePlot, "Completed operations per second in each window, by function (colour) and outcome (line style).",
			func() (*figure, plotNote, error) { return noNote(rateFigure(v)) }},
	)
	out := make([]Plot, len(specs))
	figs := make([]*figure, len(specs))
	for i, s := range specs {
		fig, note, err := s.build()
		if err != nil {
			return nil, err
		}
		figs[i] = fig
		out[i] = Plot{Name: s.name, Title: fig.plot.Title.Text, Caption: s.caption, Note: note.text}
	}
	// Rendering dominates; figures are independent of each other, so they
	// are drawn in parallel (the bytes do not depend on the order). Drawing
	// changes a plot, so each figure's two formats are drawn one after the other.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range figs {
		g.Go(func() (err error) {
			if out[i].PNG, err = figs[i].render("png"); err != nil {
				return err
			}
			out[i].SVG, err = figs[i].render("svg")
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// overlapWrites says what became of the writes the two holders of an overlap
// made from its start until their holdings ended.
func overlapWrites(v *view, o models.Overlap) string {
	var parts []string
	for _, h := range []models.Holding{o.A, o.B} {
		for _, op := range v.ops {
			if op.Invoke.F != history.FWrite || op.Invoke.Node != h.Node || op.Invoke.Key != h.Key ||
				op.Invoke.Time < max(o.Start, h.Start) || op.Invoke.Time > h.End {
				continue
			}
			what := "its outcome is unknown"
			switch op.Outcome() {
			case history.OK:
				what = "the storage applied it"
			case history.Fail:
				what = "the storage rejected it"
			}
			tok := ""
			if op.Invoke.Token != nil {
				tok = fmt.Sprintf(" with token %d", *op.Invoke.Token)
			}
			parts = append(parts, fmt.Sprintf("%s wrote at %s%s: %s", h.Node, history.FormatTime(op.Invoke.Time), tok, what))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, "; ") + "."
}

// writePlots writes every plot's PNG and SVG into dir.
func writePlots(dir string, plots []Plot) error {
	for _, p := range plots {
		for _, f := range []struct {
			ext string
			b   []byte
		}{{".png", p.PNG}, {".svg", p.SVG}} {
			if err := WriteFileAtomic(filepath.Join(dir, p.Name+f.ext), func(w io.Writer) error {
				_, err := io.Copy(w, bytes.NewReader(f.b))
				return err
			}); err != nil {
				return err
			}
		}
	}
	return nil
}
