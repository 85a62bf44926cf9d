package holds

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

func TestWatchdog(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []error // one per renewal; nil after the list
		release  time.Duration
		want     []string
	}{
		{"renews until released", nil, 3500 * time.Millisecond,
			[]string{"1s ok deadline=4s", "2s ok deadline=5s", "3s ok deadline=6s"}},
		{"an unknown outcome keeps trying, the deadline stays", []error{fmt.Errorf("timeout: %w", lockapi.ErrUnknown)}, 2500 * time.Millisecond,
			[]string{"1s unknown deadline=3s", "2s ok deadline=5s"}},
		{"a lost lease stops it", []error{nil, fmt.Errorf("gone: %w", lockapi.ErrNotHeld)}, time.Minute,
			[]string{"1s ok deadline=4s", "2s lost deadline=4s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{})
			n := w.AddNode("c1", sim.NodeOptions{})
			h := &Hold{Lease: lockapi.Lease{Key: "k", Deadline: 3 * time.Second}, Count: 1}
			var got []string
			renewals := 0
			n.Spawn("watchdog", func(p *sim.Proc) {
				Watchdog(p, h, time.Second, 3*time.Second, func(*sim.Proc, lockapi.Lease) error {
					renewals++
					if renewals <= len(tc.outcomes) {
						return tc.outcomes[renewals-1]
					}
					return nil
				}, func(l lockapi.Lease, done bool, err error) {
					if !done {
						return
					}
					what := "ok"
					switch {
					case errors.Is(err, lockapi.ErrNotHeld):
						what = "lost"
					case err != nil:
						what = "unknown"
					}
					got = append(got, fmt.Sprintf("%v %s deadline=%v", w.Now(), what, l.Deadline))
				})
			})
			w.At(tc.release, func() { h.Released = true })
			w.Run(10 * time.Second)
			assert.Equal(t, tc.want, got)
		})
	}
}
