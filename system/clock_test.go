package system

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/sim"
)

// TestNodeClockPlacesPastReadingsInThePast: a lease deadline that already
// passed when it is recorded (an acquire that returned after a pause longer
// than the lease) is placed when the clock read it, not stretched to the
// moment of recording (issue 10, item 2b: raftkv/redis leases under pauses).
func TestNodeClockPlacesPastReadingsInThePast(t *testing.T) {
	tests := []struct {
		name  string
		drift float64
		local time.Duration // reading asked for, relative to the clock now
		want  time.Duration // true time, relative to now
	}{
		{"ahead", 0, 2 * time.Second, 2 * time.Second},
		{"now", 0, 0, 0},
		{"past", 0, -3 * time.Second, -3 * time.Second},
		{"past, fast clock", 0.5, -3 * time.Second, -2 * time.Second},
		{"ahead, slow clock", -0.5, time.Second, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{Seed: 1})
			n := w.AddNode("c1", sim.NodeOptions{})
			n.SetDrift(tc.drift)
			w.At(10*time.Second, func() {})
			w.RunUntil(10 * time.Second)
			c := Clock(n)
			assert.Equal(t, w.Now()+tc.want, c.TrueAt(n.Mono()+tc.local))
		})
	}
}
