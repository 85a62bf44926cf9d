package harness

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

var explore = flag.Bool("explore", false, "run the random-exploration sweeps (seeds to first violation per hunt; minutes)")

// TestEveryUnsafeVariantDeclaresItsKind: every unsafe variant of the catalog
// declares the kind of violation it shows (so that it has a hunt) or why
// random faults cannot rediscover it; and its own run shows that kind.
func TestEveryUnsafeVariantDeclaresItsKind(t *testing.T) {
	for _, s := range scenario.Catalog() {
		for _, v := range s.Variants {
			if !strings.Contains(v.Name, "unsafe") && v.Kind == "" {
				continue
			}
			t.Run(s.Name+"/"+v.Name, func(t *testing.T) {
				require.True(t, (v.Kind == "") != (v.NoHunt == ""), "declare exactly one of Kind and NoHunt")
				if v.Kind == "" {
					return
				}
				require.Contains(t, scenario.Kinds, v.Kind)
				r := run(t, v.ReproTest())
				assert.Contains(t, scenario.ViolationKinds(r.Events), v.Kind)
			})
		}
	}
	r := run(t, scenario.Test{System: "redis", Seed: 1, Time: 10 * time.Second})
	assert.Empty(t, scenario.ViolationKinds(r.Events), "no overlap, no violation")
}

// TestResultViolationKindsIsViolationKinds: a result's ViolationKinds,
// which skips the search for overlaps when the mutual-exclusion check was
// valid, classifies every hunt's runs as ViolationKinds of their events
// does, valid runs (where that check found no overlap) and invalid ones.
func TestResultViolationKindsIsViolationKinds(t *testing.T) {
	shortcuts := 0
	for _, h := range Hunts() {
		h.Time = 20 * time.Second
		for _, seed := range []uint64{0, 1, 2} {
			tc, err := h.Test(seed)
			require.NoError(t, err)
			r := run(t, tc)
			valid := slices.ContainsFunc(r.Verdicts, func(v models.Verdict) bool {
				return v.Check == "mutual-exclusion" && v.Result == models.Valid
			})
			if valid {
				shortcuts++
				assert.Empty(t, models.Overlaps(models.Holdings(r.Events)), "%s seed %d", h.Name, seed)
			}
			assert.Equal(t, scenario.ViolationKinds(r.Events), r.ViolationKinds(), "%s seed %d", h.Name, seed)
		}
	}
	t.Logf("%d runs of %d hunts took the shortcut", shortcuts, len(Hunts()))
	assert.Positive(t, shortcuts, "no run took the shortcut")
}

// TestViolationKindsTellCausesApart: fixed variants whose overlap remains
// (the lock cannot prevent it; fencing makes it harmless) keep the kind of
// their unsafe twin, and the rules do not confuse kinds.
func TestViolationKindsTellCausesApart(t *testing.T) {
	tests := []struct {
		scenario, variant string
		want              []string
	}{
		{"kleppmann-gc-pause", "redis-fixed", []string{scenario.KindGCPause}},
		{"raftkv-leader-clock-ahead", "fixed", []string{scenario.KindLeaderClockAhead}},
		{"redlock-clock-jump", "fenced-random-value", []string{scenario.KindClockJump}},
		{"redis-failover", "unsafe", []string{scenario.KindFailover}},
		{"redlock-restart", "unsafe", []string{scenario.KindRestartRegrant}},
		{"kleppmann-network-delay", "redis-fixed", []string{scenario.KindDelayedWrite}},
		{"redlock-restart", "fixed-delay", nil},
		{"db-clock-skew", "unsafe", []string{scenario.KindHolderClock}},
		{"etcd-lease-expiry", "unsafe", []string{scenario.KindGCPause}},
	}
	for _, tc := range tests {
		t.Run(tc.scenario+"/"+tc.variant, func(t *testing.T) {
			s, err := scenario.Find(tc.scenario)
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			assert.Equal(t, tc.want, scenario.ViolationKinds(run(t, v.Test).Events))
		})
	}
}

func TestHuntsAreDerivedFromTheCatalog(t *testing.T) {
	names := HuntNames()
	assert.Contains(t, names, "kleppmann-gc-pause/redis-unsafe")
	assert.Contains(t, names, "redlock-restart/unsafe")
	assert.NotContains(t, names, "control-no-lock/unsafe", "fails without faults: no hunt")
	h, err := FindHunt("redlock-restart")
	require.NoError(t, err, "a scenario with one hunt is named by the scenario")
	assert.Equal(t, Hunt{Name: "redlock-restart/unsafe", Scenario: "redlock-restart", Variant: "unsafe", Kind: scenario.KindRestartRegrant}, h)
}

// TestFindHuntSaysWhichHuntWasMeant: a name that is not a hunt is refused
// with the hunts it was probably meant to be, a scenario with several hunts
// with its hunts, a scenario without one says so.
func TestFindHuntSaysWhichHuntWasMeant(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"redis-failover", `scenario "redis-failover" has 2 hunts, name one: redis-failover/unsafe, redis-failover/unsafe-wait`},
		{"redis-failvoer", `unknown hunt "redis-failvoer" — did you mean "redis-failover/unsafe" or "redis-failover/unsafe-wait"?`},
		{"redlock-restrat", `unknown hunt "redlock-restrat" — did you mean "redlock-restart/unsafe"?`},
		{"redis-del-unlock/unsaf", `unknown hunt "redis-del-unlock/unsaf" — did you mean "redis-del-unlock/unsafe"?`},
		{"baseline-redis", `scenario "baseline-redis" has no hunt: none of its 2 variants declares a kind of violation for random faults to find`},
		{"bigfoot", `unknown hunt "bigfoot" (known: chubby-lock-delay/unsafe, `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FindHunt(tc.name)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestSweepRediscoversTheGCPause(t *testing.T) {
	h, err := FindHunt("kleppmann-gc-pause/redis-unsafe")
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
	for _, h := range Hunts() {
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
	for _, h := range Hunts() {
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
				_ = r.ViolationKinds()
				r.Release() // as a sweep does
				simulated += tc.Time
			}
			b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-x")
		})
	}
}

// TestHuntTestIsTheCatalogsVariant holds Hunt.Test's memo to the catalog:
// for every hunt and a few seeds, the test equals the one derived from a
// freshly built catalog, and changing a returned test's maps and slices
// changes no later one.
func TestHuntTestIsTheCatalogsVariant(t *testing.T) {
	for _, h := range Hunts() {
		s, err := scenario.Find(h.Scenario)
		require.NoError(t, err)
		v, err := s.FindVariant(h.Variant)
		require.NoError(t, err)
		for _, seed := range []uint64{0, 7} {
			want := v.Test
			want.Schedule, want.Nemesis, want.Seed, want.Time = nil, "random", seed, time.Minute
			got, err := h.Test(seed)
			require.NoError(t, err)
			assert.Equal(t, want, got, "%s seed %d", h.Name, seed)
			if got.SystemOptions == nil {
				got.SystemOptions = map[string]string{}
			}
			got.SystemOptions["scribble"] = "x"
			got.Checks = append(got.Checks[:0:0], "scribble")
			again, err := h.Test(seed)
			require.NoError(t, err)
			assert.Equal(t, want, again, "%s: a caller's change leaked into the memo", h.Name)
		}
	}
	_, err := Hunt{Name: "x/y", Scenario: "x", Variant: "y"}.Test(1)
	assert.ErrorContains(t, err, `unknown scenario "x"`)
}

// TestMessageNamesAreWhatPercentTPrints: the names a delay may match are the
// %T of every system's message types and the storage's, sorted, once each.
func TestMessageNamesAreWhatPercentTPrints(t *testing.T) {
	for _, name := range system.Names() {
		p, err := Prepare(scenario.Test{System: name, Seed: 1, Time: time.Second})
		require.NoError(t, err, name)
		var want []string
		for _, m := range append(slices.Clone(p.Deployment.Messages), storage.MessageTypes()...) {
			want = append(want, fmt.Sprintf("%T", m))
		}
		slices.Sort(want)
		assert.Equal(t, slices.Compact(want), messageNames(p.Deployment.Messages), name)
		p.World.Close()
	}
}
