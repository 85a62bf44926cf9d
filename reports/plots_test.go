package reports

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

func plotNames(ps []Plot) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestPlotsAreByteIdenticalForTheSameRun(t *testing.T) {
	events := gcPauseHistory(true)
	first, err := RenderPlots(events)
	require.NoError(t, err)

	// The same run read back from its history file draws the same bytes.
	var buf bytes.Buffer
	require.NoError(t, history.Write(&buf, events))
	again, err := history.Read(&buf, "history.jsonl")
	require.NoError(t, err)
	second, err := RenderPlots(again)
	require.NoError(t, err)

	require.Equal(t, plotNames(first), plotNames(second))
	for i := range first {
		assert.True(t, bytes.Equal(first[i].PNG, second[i].PNG), "%s.png differs", first[i].Name)
		assert.True(t, bytes.Equal(first[i].SVG, second[i].SVG), "%s.svg differs", first[i].Name)
		assert.True(t, bytes.HasPrefix(first[i].PNG, []byte("\x89PNG\r\n\x1a\n")), "%s.png is a PNG", first[i].Name)
		assert.Contains(t, string(first[i].SVG[:200]), "<svg", "%s.svg is an SVG", first[i].Name)
	}
}

func TestEveryRunGetsItsPlots(t *testing.T) {
	tests := []struct {
		name   string
		events []history.Event
		want   []string
	}{
		{"an overlap gets a close-up of its timeline", gcPauseHistory(false),
			[]string{TimelinePlot, OverlapTimelinePlot, LatencyRawPlot, LatencyQuantilesPlot, RatePlot}},
		{"without an overlap there is no close-up", longHistory(3, 20*time.Second),
			[]string{TimelinePlot, LatencyRawPlot, LatencyQuantilesPlot, RatePlot}},
		{"an empty history still draws (empty) plots", nil,
			[]string{TimelinePlot, LatencyRawPlot, LatencyQuantilesPlot, RatePlot}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := RenderPlots(tc.events)
			require.NoError(t, err)
			assert.Equal(t, tc.want, plotNames(ps))
			for _, p := range ps {
				assert.NotEmpty(t, p.PNG)
				assert.NotEmpty(t, p.SVG)
				assert.NotEmpty(t, p.Caption)
			}
		})
	}
}

func TestPlotSizeStaysBoundedOnLongRuns(t *testing.T) {
	events := longHistory(20, 2*time.Hour)
	require.Greater(t, len(events), 50_000)
	v := newView(events)

	series, drawn, _ := latencyScatter(v)
	total := 0
	for _, s := range series {
		total += s.total
	}
	assert.Greater(t, total, 2*maxScatterPoints)
	assert.LessOrEqual(t, drawn, maxScatterPoints, "the scatter draws at most maxScatterPoints points")

	tl := buildTimeline(v, 0, v.end)
	for _, r := range tl.rows {
		for s := range r.segments {
			assert.LessOrEqual(t, len(r.segments[s]), barBins, "row %s", r.node)
		}
		for m := range r.marks {
			assert.LessOrEqual(t, len(r.marks[m]), markBins, "row %s", r.node)
		}
	}

	ps, err := renderPlots(v)
	require.NoError(t, err)
	for _, p := range ps {
		assert.Less(t, len(p.SVG), 2_000_000, "%s.svg", p.Name)
		assert.Less(t, len(p.PNG), 600_000, "%s.png", p.Name)
	}
	assert.Contains(t, ps[1].Note, "operations are drawn as", "the latency plot says what it merged")
}

func TestCloseUpCaptionSaysWhatBecameOfTheWrites(t *testing.T) {
	tests := []struct {
		fenced bool
		want   string
	}{
		{false, "c1 wrote at 15.006s with token 1: the storage applied it; c2 wrote at 10.005s with token 2: the storage applied it."},
		{true, "c1 wrote at 15.006s with token 1: the storage rejected it; c2 wrote at 10.005s with token 2: the storage applied it."},
	}
	for _, tc := range tests {
		ps, err := RenderPlots(gcPauseHistory(tc.fenced))
		require.NoError(t, err)
		require.Equal(t, OverlapTimelinePlot, ps[1].Name)
		assert.Contains(t, ps[1].Caption, `c1 and c2 both believed they held "k" from 10.002s to 10.007s.`)
		assert.Contains(t, ps[1].Caption, tc.want, "fenced=%v", tc.fenced)
	}
}

// TestLatencyAxisFitsTheData: the latency plots' axis ends a little beyond
// the largest latency drawn, not at the next power of ten (a run of
// milliseconds to 30 s gets no "1m40s"), starts a little below the smallest,
// and labels its ticks as durations; a narrow range still spans a decade and
// gets labels at 1, 2 and 5 times the powers of ten.
func TestLatencyAxisFitsTheData(t *testing.T) {
	cases := []struct {
		name     string
		fastest  float64 // ms
		slowest  float64 // ms
		labels   []string
		unwanted []string
	}{
		{"milliseconds to 30 s", 2, 29837, []string{"10ms", "100ms", "1s", "10s"}, []string{"1m40s", "100s"}},
		{"milliseconds to 5 s", 1.5, 5000, []string{"10ms", "1s"}, []string{"10s", "1m40s"}},
		{"all about 3 ms", 2.5, 3.5, []string{"2ms", "5ms"}, []string{"100ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b historyBuilder
			for i := range 40 {
				at := float64(i * 1000)
				lat := tc.fastest + (tc.slowest-tc.fastest)*float64(i%2)
				if i%2 == 1 && i != 21 {
					lat = tc.fastest * 2
				}
				node := fmt.Sprintf("c%d", i+1)
				b.op(i, node, history.FAcquire, at, at+lat, history.OK, history.Event{Owner: node})
				b.op(i, node, history.FRelease, at+lat+10, at+lat+11, history.OK, history.Event{Owner: node})
			}
			v := newView(b.build())
			fig, _, err := latencyFigure(v)
			require.NoError(t, err)
			lo, hi := fig.plot.Y.Min, fig.plot.Y.Max
			assert.GreaterOrEqual(t, hi, tc.slowest, "the slowest operation is on the axis")
			assert.LessOrEqual(t, hi, max(tc.slowest*2, lo*latencyMinSpan*1.01), "the axis ends near the slowest operation, not at %s", history.FormatDuration(int64(hi*1e6)))
			assert.LessOrEqual(t, lo, min(tc.fastest, 1.0))
			assert.GreaterOrEqual(t, hi/lo, latencyMinSpan*0.99, "at least a decade")
			var labels []string
			for _, tk := range (durationTicks{}).Ticks(lo, hi) {
				if tk.Label != "" {
					labels = append(labels, tk.Label)
				}
			}
			for _, l := range tc.labels {
				assert.Contains(t, labels, l)
			}
			for _, l := range tc.unwanted {
				assert.NotContains(t, labels, l)
			}
			ps, err := RenderPlots(b.build())
			require.NoError(t, err)
			for _, p := range ps {
				for _, l := range tc.unwanted {
					assert.NotContains(t, string(p.SVG), ">"+l+"<", "%s labels %s", p.Name, l)
				}
			}
		})
	}
}
