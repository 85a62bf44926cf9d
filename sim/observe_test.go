package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObserverDoesNotChangeTheRun: a world observed every event, or every
// 7, executes exactly the events of an unobserved one, and the observer is
// called once per `every` events.
func TestObserverDoesNotChangeTheRun(t *testing.T) {
	want := trace(42)
	for _, every := range []uint64{1, 7, 1 << 40} {
		t.Run(fmt.Sprint(every), func(t *testing.T) {
			var calls, processed uint64
			var seen []time.Duration
			got := traceRun(42, func(w *World) {
				w.Observe(every, func() {
					calls++
					seen = append(seen, w.Now())
				})
				w.Run(2 * time.Second)
				processed = w.Processed()
			})
			assert.Equal(t, want, got)
			assert.Equal(t, processed/every, calls)
			for i := 1; i < len(seen); i++ {
				require.LessOrEqual(t, seen[i-1], seen[i], "the observer sees time advance")
			}
		})
	}
}

// TestStopEndsRunUntilEarly: an observer's Stop makes RunUntil return at the
// event it was called after, the clock at that event; RunUntil again carries
// on, and the run ends as if it had never stopped.
func TestStopEndsRunUntilEarly(t *testing.T) {
	want := trace(42)
	var stops int
	got := traceRun(42, func(w *World) {
		w.Observe(100, w.Stop)
		for w.RunUntil(2 * time.Second); w.Stopped(); w.RunUntil(2 * time.Second) {
			stops++
			require.Zero(t, w.Processed()%100, "stopped right after the observed event")
			require.Less(t, w.Now(), 2*time.Second)
		}
		assert.Equal(t, 2*time.Second, w.Now())
	})
	assert.Equal(t, want, got)
	assert.Positive(t, stops)
}
