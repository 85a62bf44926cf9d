package harness

import (
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
)

// BenchmarkSimulate measures the simulation share of a run alone: Prepare and
// the 60 s of simulated time, without the checks (BenchmarkHuntSeed and
// BenchmarkRaftKV60s include them), so that the simulator's and the checks'
// costs can be told apart.
func BenchmarkSimulate(b *testing.B) {
	cases := []struct {
		name string
		test func(seed uint64) scenario.Test
	}{
		{"hunt=kleppmann-gc-pause/redis-unsafe", huntTest(b, "kleppmann-gc-pause/redis-unsafe")},
		{"hunt=redlock-clock-jump/unsafe", huntTest(b, "redlock-clock-jump/unsafe")},
		{"raftkv-random", func(seed uint64) scenario.Test { return scenario.Test{System: "raftkv", Seed: seed, Nemesis: "random"} }},
		// Chubby's rows dominate the matrix's CPU: five replicas, a
		// heartbeat every tick, runs of minutes.
		{"chubby-pause-2m", func(seed uint64) scenario.Test {
			return scenario.Test{System: "chubby", Seed: seed, Nemesis: "pause", Time: 2 * time.Minute, Clients: 2, Workload: "fenced-counter"}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var simulated time.Duration
			for i := range b.N {
				p, err := Prepare(c.test(uint64(i)))
				if err != nil {
					b.Fatal(err)
				}
				if err := p.simulate(Watch{}); err != nil {
					b.Fatal(err)
				}
				p.World.Close()
				p.Log.Release() // as a sweep's runs do, once classified
				simulated += p.Test.Time
			}
			b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-x")
		})
	}
}

func huntTest(b *testing.B, name string) func(seed uint64) scenario.Test {
	h, err := FindHunt(name)
	if err != nil {
		b.Fatal(err)
	}
	return func(seed uint64) scenario.Test {
		t, err := h.Test(seed)
		if err != nil {
			b.Fatal(err)
		}
		return t
	}
}
