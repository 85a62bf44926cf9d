package harness

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var explore = flag.Bool("explore", false, "run the random-exploration sweeps (seeds to first violation per hunt; minutes)")

func TestViolationKindsOfTheCatalog(t *testing.T) {
	tests := []struct {
		scenario, variant string
		want              []string
	}{
		{"kleppmann-gc-pause", "redis-unsafe", []string{KindGCPause}},
		{"kleppmann-gc-pause", "redlock-unsafe", []string{KindGCPause}},
		{"redlock-clock-jump", "unsafe", []string{KindClockJump}},
		// c1's wall clock steps back as its pause ends: its own clock made it
		// take a grant as valid that came while c2's lease ran (it was
		// "other" before the client-clock kind).
		{"redlock-gc-pause", "unsafe-wall-clock", []string{KindClientClock}},
		{"redis-failover", "unsafe", []string{KindFailover}},
		{"redis-failover", "unsafe-wait", []string{KindFailover}},
		{"db-clock-skew", "unsafe", []string{KindClientClock}},
		{"etcd-lease-expiry", "unsafe", []string{KindGCPause}},
	}
	for _, tc := range tests {
		t.Run(tc.scenario+"/"+tc.variant, func(t *testing.T) {
			s, err := FindScenario(tc.scenario)
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			r := run(t, v.Test)
			assert.Equal(t, tc.want, ViolationKinds(r.Events))
		})
	}
	r := run(t, Test{System: "redis", Seed: 1, Time: 10 * time.Second})
	assert.Empty(t, ViolationKinds(r.Events), "no overlap, no violation")
}

func TestGrantedBy(t *testing.T) {
	assert.True(t, grantedBy("granted by redis-a,redis-c,redis-e (3/5), validity 9s", []string{"redis-c"}))
	assert.False(t, grantedBy("granted by redis-a,redis-b (2/5)", []string{"redis-c"}))
	assert.True(t, grantedBy("granted by replica1, WAIT 1: 1 replica(s) acknowledged", []string{"replica1"}))
	assert.False(t, grantedBy("", []string{"redis"}))
}

func TestSweepRediscoversTheGCPause(t *testing.T) {
	h, err := FindHunt("redis+gc-pause")
	require.NoError(t, err)
	done := 0
	sw, err := h.Sweep(1, 300, func() { done++ })
	require.NoError(t, err)
	require.True(t, sw.Found, "no gc-pause violation in 300 seeds")
	assert.Equal(t, sw.Seeds, done)
	assert.Equal(t, sw.Start+uint64(sw.Seeds)-1, sw.Seed)
	e := Exploration{Hunt: h, Sweeps: []Sweep{sw, {Seeds: 10}, {Seeds: 4}}}
	assert.Equal(t, float64(min(10, max(4, sw.Seeds))), e.MedianSeeds())
	_, err = FindHunt("bigfoot")
	assert.ErrorContains(t, err, `unknown hunt "bigfoot"`)
}

// TestExploreFigures sweeps every hunt from five starting seeds and prints
// seeds-to-first-violation (median) and wall time per seed. Behind -explore:
//
//	go test ./harness -run TestExploreFigures -explore -v
func TestExploreFigures(t *testing.T) {
	if !*explore {
		t.Skip("random exploration sweeps run with -explore")
	}
	for _, h := range Hunts {
		e, err := Explore(h, []uint64{1000, 2000, 3000, 4000, 5000}, 3000, nil)
		require.NoError(t, err)
		var seeds []int
		for _, s := range e.Sweeps {
			seeds = append(seeds, s.Seeds)
		}
		fmt.Printf("%-20s seeds to first violation %v, median %.1f, found %d/%d, %.1f ms per seed\n",
			h.Name, seeds, e.MedianSeeds(), e.Found(), len(e.Sweeps), float64(e.WallPerSeed().Microseconds())/1000)
		assert.Equal(t, len(e.Sweeps), e.Found(), "%s: some sweeps found nothing", h.Name)
	}
}

// BenchmarkHuntSeed is one seed of each hunt: a 60 s simulated run with random
// faults, checks and classification included (ns/op is the wall time per seed
// of a sweep).
func BenchmarkHuntSeed(b *testing.B) {
	for _, h := range Hunts {
		b.Run(h.Name, func(b *testing.B) {
			var simulated time.Duration
			for i := range b.N {
				tc, err := h.Test(uint64(i))
				if err != nil {
					b.Fatal(err)
				}
				r, err := Run(tc)
				if err != nil {
					b.Fatal(err)
				}
				_ = ViolationKinds(r.Events)
				simulated += tc.Time
			}
			b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-x")
		})
	}
}
