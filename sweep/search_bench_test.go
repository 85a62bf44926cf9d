package sweep

import (
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

// BenchmarkRunCost measures one simulated run per system (defaults, pause
// faults) at the run lengths and client counts a matrix cell may use: the
// figures the default matrix's budget is sized from.
func BenchmarkRunCost(b *testing.B) {
	defer TuneGC()()
	for _, s := range system.All() {
		for _, shape := range []struct {
			clients int
			time    time.Duration
		}{{2, 10 * time.Second}, {3, 20 * time.Second}, {5, 20 * time.Second}, {5, 60 * time.Second}} {
			b.Run(fmt.Sprintf("%s/c%d/%v", s.Name, shape.clients, shape.time), func(b *testing.B) {
				seed := uint64(1)
				for b.Loop() {
					t := scenario.Test{System: s.Name, Clients: shape.clients, Time: shape.time, Nemesis: "pause", Seed: seed,
						CheckBudget: scenario.Unbounded}.WithDefaults()
					r, err := harness.Run(t)
					if err != nil {
						b.Fatal(err)
					}
					r.Release()
					seed++
				}
			})
		}
	}
}
