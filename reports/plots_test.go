package reports

import (
	"bytes"
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
