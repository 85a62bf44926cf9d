package shrink

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// gcPauseHunt is seed 63 of the kleppmann-gc-pause/redis-unsafe hunt: 17 random faults, one
// of which (a pause of client 1 across its lease) makes two clients hold the
// lock at once.
func gcPauseHunt(t *testing.T) scenario.Test {
	h, err := harness.FindHunt("kleppmann-gc-pause/redis-unsafe")
	require.NoError(t, err)
	tc, err := h.Test(63)
	require.NoError(t, err)
	return tc
}

// TestShrinkIsDeterministic: the same failing test shrinks to the same minimal
// test in the same number of runs, and that test fails the same way.
func TestShrinkIsDeterministic(t *testing.T) {
	a, err := Shrink(gcPauseHunt(t), Options{})
	require.NoError(t, err)
	b, err := Shrink(gcPauseHunt(t), Options{})
	require.NoError(t, err)
	assert.Equal(t, a.Minimal, b.Minimal)
	assert.Equal(t, a.Runs, b.Runs)

	assert.Equal(t, Target{Check: "mutual-exclusion", Kind: scenario.KindGCPause}, a.Target)
	assert.Equal(t, 17, a.FaultsBefore)
	require.Equal(t, 1, a.FaultsAfter)
	f := a.Minimal.Schedule.Faults[0]
	assert.Equal(t, nemesis.Pause, f.Kind)
	assert.Equal(t, []string{"c1"}, f.Targets)
	assert.Less(t, a.Minimal.Time, a.Original.Time, "the run was cut short")
	r, err := harness.Run(a.Minimal)
	require.NoError(t, err)
	assert.True(t, a.Target.Fails(r), "the minimal test replays the failure")
	assert.Regexp(t, `^shrunk 17 faults to 1 in \d+ runs \(\d+\.\d s\)$`, a.Line())
}

func TestShrinkNeedsAFailingRun(t *testing.T) {
	_, err := Shrink(scenario.Test{System: "redis", Clients: 2, Seed: 1, Time: 5 * time.Second}, Options{})
	assert.ErrorIs(t, err, ErrNotFailing)
	// A given target the run does not fail is not shrunk either.
	_, err = Shrink(gcPauseHunt(t), Options{Target: &Target{Check: "mutual-exclusion", Kind: scenario.KindFailover}})
	assert.ErrorIs(t, err, ErrNotFailing)
}

// TestMaxRunsBoundsTheSearch: with a budget of runs, shrinking stops early
// and still returns a failing test.
func TestMaxRunsBoundsTheSearch(t *testing.T) {
	o, err := Shrink(gcPauseHunt(t), Options{MaxRuns: 5})
	require.NoError(t, err)
	assert.LessOrEqual(t, o.Runs, 6, "5 candidates and the final run")
	assert.True(t, o.Target.Fails(o.Result))
}

func TestBinarySearches(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		got, want time.Duration
	}{
		{"smallest finds the threshold to 1/16 of the range", smallest(0, 16*time.Second, func(d time.Duration) bool { return d >= 5*time.Second }), 5 * time.Second},
		{"smallest keeps hi when nothing smaller fails", smallest(0, 8*time.Second, func(d time.Duration) bool { return d == 8*time.Second }), 8 * time.Second},
		{"smallest to the millisecond", smallest(0, 10*ms, func(d time.Duration) bool { return d >= 3*ms }), 3 * ms},
		{"largest finds the latest start", largest(2*time.Second, 18*time.Second, func(d time.Duration) bool { return d <= 11*time.Second }), 11 * time.Second},
		{"largest keeps lo when nothing later fails", largest(time.Second, 17*time.Second, func(d time.Duration) bool { return d == time.Second }), time.Second},
		{"nice rounds to the second", nice(0, 15*time.Second, time.Second), 8 * time.Second},
		{"nice stays strictly inside", nice(time.Second, 1001*ms, ms), 1000*ms + 500*time.Microsecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
	// Drift: a failing value within 1/16 of the range above the threshold.
	up := smallestDrift(0.5, func(d float64) bool { return d >= 0.12 })
	assert.True(t, up >= 0.12 && up <= 0.12+0.5/16, up)
	down := smallestDrift(-0.5, func(d float64) bool { return d <= -0.12 })
	assert.Equal(t, -up, down)
	assert.Equal(t, 0.2, smallestDrift(0.2, func(d float64) bool { return d == 0.2 }))
}

func TestSplitAndComplement(t *testing.T) {
	faults := make([]nemesis.Fault, 5)
	for i := range faults {
		faults[i].At = nemesis.Duration(i)
	}
	at := func(fs []nemesis.Fault) []int {
		var out []int
		for _, f := range fs {
			out = append(out, int(f.At))
		}
		return out
	}
	chunks := nemesis.Chunks(faults, 3)
	require.Len(t, chunks, 3)
	assert.Equal(t, [][]int{{0}, {1, 2}, {3, 4}}, [][]int{at(chunks[0]), at(chunks[1]), at(chunks[2])})
	assert.Equal(t, []int{0, 3, 4}, at(nemesis.AllBut(chunks, 1)))
}

func TestTargetOf(t *testing.T) {
	r, err := harness.Run(gcPauseHunt(t))
	require.NoError(t, err)
	g, ok := TargetOf(r)
	require.True(t, ok)
	assert.True(t, g.Fails(r))
	assert.Equal(t, "mutual-exclusion invalid, gc-pause violation", g.String())
	assert.False(t, Target{Check: "mutual-exclusion", Kind: scenario.KindClockJump}.Fails(r), "another kind is another failure")
	assert.False(t, Target{Check: "liveness"}.Fails(r))
}
