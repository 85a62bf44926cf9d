package sweep

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSweep measures runs per second of a sweep of 40 short redis runs
// at -j 1 and -j 2 (go test -bench Sweep -count 5 ./sweep): their ratio over
// 2 is the pool's parallel efficiency on two free cores.
func BenchmarkSweep(b *testing.B) {
	g := smallGrid(&testing.T{})
	g.Columns = []string{"none", "pause"}
	g.FirstSeed, g.Seeds, g.Time = 1, 10, Duration(10*time.Second)
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("j=%d", jobs), func(b *testing.B) {
			runs := 0
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
				if _, err := Sweep(g, Options{Dir: dir, Jobs: jobs, Keep: KeepNone}); err != nil {
					b.Fatal(err)
				}
				runs += g.NumRuns()
			}
			b.ReportMetric(float64(runs)/time.Since(start).Seconds(), "runs/s")
		})
	}
}
