package reports

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

func TestFaultWindowsPairStartsWithStops(t *testing.T) {
	type window struct {
		kind       string
		start, end float64
		open       bool
	}
	tests := []struct {
		name  string
		build func(b *historyBuilder)
		want  []window
	}{
		{"a pause lasts from its start to its stop", func(b *historyBuilder) {
			b.fault("pause", []string{"c1"}, 1, 5)
		}, []window{{"pause", 1, 5, false}}},
		{"a fault that never stops lasts until the end of the history", func(b *historyBuilder) {
			b.fault("partition", []string{"c1"}, 1, -1)
			b.op(0, "c2", history.FRead, 8, 9, history.OK, history.Event{Value: history.Ptr[int64](0)})
		}, []window{{"partition", 1, 9, true}}},
		{"an instantaneous clock jump starts and stops at once", func(b *historyBuilder) {
			b.fault("clock-jump", []string{"redis"}, 3, 3)
		}, []window{{"clock-jump", 3, 3, false}}},
		{"faults of one kind on different targets stop independently", func(b *historyBuilder) {
			b.fault("pause", []string{"c1"}, 1, 9)
			b.fault("pause", []string{"c2"}, 2, 4)
		}, []window{{"pause", 1, 9, false}, {"pause", 2, 4, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b historyBuilder
			tc.build(&b)
			v := newView(b.build())
			var got []window
			for _, f := range v.faults {
				got = append(got, window{f.Kind, float64(f.Start) / 1e6, float64(f.End) / 1e6, f.Open})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestClientsAreInNaturalOrder(t *testing.T) {
	names := []string{"c10", "c2", "client", "c1", "b3", "c02x"}
	slices.SortFunc(names, naturalCompare)
	assert.Equal(t, []string{"b3", "c1", "c2", "c10", "c02x", "client"}, names)
}

func TestQuantileIsTheNearestRank(t *testing.T) {
	xs := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	tests := []struct {
		q    float64
		want int64
	}{{0, 10}, {0.5, 50}, {0.95, 100}, {0.99, 100}, {1, 100}, {0.11, 20}}
	for _, tc := range tests {
		assert.Equal(t, tc.want, quantile(xs, tc.q), "q=%v", tc.q)
	}
	assert.Zero(t, quantile(nil, 0.5))
}

func TestWindowsAreRoundAndAboutAHundredPerRun(t *testing.T) {
	tests := []struct {
		run, want time.Duration
	}{
		{time.Second, 10 * time.Millisecond},
		{30 * time.Second, 500 * time.Millisecond},
		{time.Minute, 500 * time.Millisecond},
		{30 * time.Minute, 15 * time.Second},
		{1000 * time.Hour, 9 * time.Hour},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, time.Duration(windowFor(int64(tc.run))), "run of %v", tc.run)
	}
}

func TestTimeTicksAreRound(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (niceTicks{target: 12}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	assert.Equal(t, []string{"0", "5", "10", "15", "20", "25", "30"}, labels(0, 30))
	assert.Equal(t, []string{"0", "200", "400", "600", "800", "1000", "1200", "1400", "1600", "1800"}, labels(0, 1800))
	assert.Equal(t, []string{"10", "11", "12", "13", "14", "15"}, labels(9.4, 15.6))
	assert.Equal(t, []string{"0.02", "0.04", "0.06", "0.08", "0.10", "0.12", "0.14", "0.16", "0.18", "0.20", "0.22", "0.24"}, labels(0.01, 0.24))
	assert.Empty(t, labels(1, 1))
}

func TestBarsAndMarksMergeBelowTheResolution(t *testing.T) {
	segs := []segment{{start: 50, end: 60}, {start: 0, end: 10, token: history.Ptr[uint64](1)}, {start: 12, end: 20}, {start: 200, end: 300}}
	got := mergeSegments(segs, 0, 250, 5)
	assert.Equal(t, []segment{{start: 0, end: 20}, {start: 50, end: 60}, {start: 200, end: 300}}, got,
		"bars 2 apart merge and lose their token; bars 30 apart do not; a bar crossing the window's end stays")
	assert.Equal(t, []int64{0, 10, 30}, thinMarks([]int64{30, 0, 3, 10, 12, 500}, 0, 100, 5))
}

func TestTimelineDrawsKleppmannsDiagram(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		v := newView(gcPauseHistory(fenced))
		tl := buildTimeline(v, 0, v.end)
		require.Len(t, tl.rows, 2)
		c1, c2 := tl.rows[0], tl.rows[1]
		assert.Equal(t, "c1", c1.node)
		assert.Equal(t, []segment{{start: ms(2), end: ms(10000), token: history.Ptr[uint64](1)}}, c1.segments[segHeld],
			"c1 held the lock within its lease until its deadline")
		assert.Equal(t, []segment{{start: ms(10000), end: ms(15006)}}, c1.segments[segPastDead],
			"and went on believing it until its write after the pause")
		overlap := []segment{{start: ms(10002), end: ms(10007)}}
		assert.Equal(t, overlap, c1.segments[segOverlap], "c1's row shows the overlap")
		assert.Equal(t, overlap, c2.segments[segOverlap], "and so does c2's")
		assert.Equal(t, []int64{ms(10006)}, c2.marks[markApplied])
		require.Len(t, c1.faults, 1, "the pause is shaded on c1's row")
		assert.Equal(t, "pause", c1.faults[0].Kind)
		assert.Empty(t, c2.faults)
		if fenced {
			assert.Equal(t, []int64{ms(15007)}, c1.marks[markRejected], "fenced storage rejected c1's stale write")
			assert.Empty(t, c1.marks[markApplied])
		} else {
			assert.Equal(t, []int64{ms(15007)}, c1.marks[markApplied], "unfenced storage applied c1's stale write")
			assert.Empty(t, c1.marks[markRejected])
		}
	}
}

func TestCloseUpFramesTheFirstOverlap(t *testing.T) {
	v := newView(gcPauseHistory(true))
	from, to, ok := closeUp(v)
	require.True(t, ok)
	assert.LessOrEqual(t, from, ms(10002), "it starts before the overlap")
	assert.GreaterOrEqual(t, to, ms(15006), "and ends after both holdings")
	_, _, ok = closeUp(newView(nil))
	assert.False(t, ok, "no overlap, no close-up")
}

func TestStatsMeasureTheRun(t *testing.T) {
	r := GCPauseRun(true)
	s := computeStats(newView(r.Events), r.Extra)
	assert.Equal(t, 2, s.AcquireAttempts)
	assert.Equal(t, 2, s.Acquired)
	assert.InDelta(t, 20.0, s.MessagesPerAcquisition(), 1e-9, "40 messages for 2 acquisitions")
	assert.Equal(t, 1, s.Overlaps)
	var acquire LatencyRow
	for _, l := range s.Latency {
		if l.F == history.FAcquire {
			acquire = l
		}
	}
	assert.Equal(t, LatencyRow{F: history.FAcquire, Outcome: history.OK, Count: 2, P50: ms(1), P95: ms(9996), P99: ms(9996), Max: ms(9996)}, acquire)

	none := computeStats(newView(r.Events), nil)
	assert.Nil(t, none.Network)
	assert.Equal(t, -1.0, none.MessagesPerAcquisition(), "without counters the figure is unknown, not zero")
}
