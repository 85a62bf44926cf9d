package sweep

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSweep measures the run phase of a sweep (Sweep, not the matrix
// Finish writes) at -j 1 and -j 2. The grid has 400 runs so that the tail,
// where fewer runs are left than workers, is a small share of the time.
// Parallel efficiency is runs/s at j=2 over twice runs/s at j=1.
func BenchmarkSweep(b *testing.B) {
	g := smallGrid(&testing.T{})
	g.Columns = []string{"none", "pause"}
	g.FirstSeed, g.Seeds, g.Time = 1, 100, Duration(10*time.Second)
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("j=%d", jobs), func(b *testing.B) {
			runs := 0
			var elapsed time.Duration
			for i := 0; b.Loop(); i++ {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				start := time.Now()
				if _, err := Sweep(g, Options{Dir: dir, Jobs: jobs, Keep: KeepNone}); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				runs += g.NumRuns()
			}
			b.ReportMetric(float64(runs)/elapsed.Seconds(), "runs/s")
		})
	}
}
