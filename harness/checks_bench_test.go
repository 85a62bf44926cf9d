package harness

import (
	"testing"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/scenario"
)

// BenchmarkHuntChecks is the checks' share of BenchmarkHuntSeed: the histories
// of eight seeds of a hunt (60 s of random faults each) are recorded once,
// and each iteration judges one of them as a run does (every check that
// applies, the system's audits, the summary) and classifies its violations
// as a sweep does. ns/op against BenchmarkHuntSeed's is the checks' share of
// a hunt's run.
func BenchmarkHuntChecks(b *testing.B) {
	for _, name := range []string{"kleppmann-gc-pause/redis-unsafe", "redlock-clock-jump/unsafe", "kleppmann-gc-pause/raftkv-unsafe"} {
		h, err := FindHunt(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(h.Name, func(b *testing.B) {
			type recorded struct {
				p      *Prepared
				events []history.Event
			}
			var runs []recorded
			for seed := range uint64(8) {
				tc, err := h.Test(seed)
				if err != nil {
					b.Fatal(err)
				}
				p, err := Prepare(tc)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.simulate(Watch{}); err != nil {
					b.Fatal(err)
				}
				p.World.Close()
				runs = append(runs, recorded{p: p, events: p.Log.Events()})
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				r := runs[i%len(runs)]
				i++
				res, err := r.p.judge(r.events)
				if err != nil {
					b.Fatal(err)
				}
				_ = scenario.ViolationKinds(res.Events)
			}
		})
	}
}
