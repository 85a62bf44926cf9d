package guide

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

func hunt(t *testing.T, name string) harness.Hunt {
	h, err := harness.FindHunt(name)
	require.NoError(t, err)
	return h
}

// TestSearchIsDeterministic: the same seed gives the same corpus and the
// same finding; another seed another search (the same fresh draws, other
// mutations). The fresh draws are the hunt's seeds from Start, in order.
func TestSearchIsDeterministic(t *testing.T) {
	cfg := Config{Hunt: hunt(t, "kleppmann-gc-pause/redis-unsafe"), Seed: 7, Start: 401, MaxRuns: 15, Fresh: 3}
	a, err := Search(cfg, nil)
	require.NoError(t, err)
	b, err := Search(cfg, nil)
	require.NoError(t, err)
	assert.Equal(t, a.Runs, b.Runs)
	assert.Equal(t, a.Found, b.Found)
	assert.Equal(t, a.Test, b.Test)
	assert.Equal(t, a.Corpus, b.Corpus)
	assert.Equal(t, a.Features, b.Features)
	require.NotEmpty(t, a.Corpus)
	assert.Equal(t, uint64(401), a.Corpus[0].Test.Seed, "the first run is the hunt's test of seed Start")

	cfg.Seed = 8
	c, err := Search(cfg, nil)
	require.NoError(t, err)
	assert.NotEqual(t, a.Corpus, c.Corpus)
	assert.Equal(t, a.Corpus[0], c.Corpus[0], "the same first fresh draw")
}

// TestSearchFindsAndReplays: a guided search finds the gc-pause of the redis
// hunt, and its finding, an explicit schedule, replays the violation.
func TestSearchFindsAndReplays(t *testing.T) {
	h := hunt(t, "redis-failover/unsafe")
	runs := 0
	o, err := Search(Config{Hunt: h, Seed: 1, MaxRuns: 200}, func() { runs++ })
	require.NoError(t, err)
	require.True(t, o.Found)
	assert.Equal(t, o.Runs, runs)
	require.NotNil(t, o.Test.Schedule)
	r, err := harness.Run(o.Test)
	require.NoError(t, err)
	assert.Contains(t, scenario.ViolationKinds(r.Events), h.Kind)
}

// TestCoverageSpeaksTheLocksTerms: the catalog's counterexamples cover the
// features that describe them.
func TestCoverageSpeaksTheLocksTerms(t *testing.T) {
	tests := []struct {
		scenario, variant string
		want              []string
	}{
		{"kleppmann-gc-pause", "redis-unsafe", []string{"fault:pause:holder:read", "lock:op-after-lease", "lock:overlap:gc-pause"}},
		{"kleppmann-gc-pause", "redis-fixed", []string{"fault:pause:holder:read", "lock:stale-rejected"}},
		{"redlock-restart", "unsafe", []string{"fault:crash:granter:held", "lock:grant-after-crash", "lock:grant-bare-quorum",
			"lock:granter-restarted-while-held", "lock:overlap:restart-regrant"}},
		{"redis-failover", "unsafe", []string{"fault:partition:granter:held", "lock:grant-after-failover"}},
		{"redlock-clock-jump", "unsafe", []string{"fault:clock-jump:granter:held", "lock:grant-by-skewed-clock", "lock:grant-bare-quorum",
			"lock:granter-clock-moved-while-held"}},
		{"kleppmann-network-delay", "redis-unsafe", []string{"fault:delay:holder:read", "lock:write-unknown", "lock:overlap:delayed-write"}},
	}
	for _, tc := range tests {
		t.Run(tc.scenario+"/"+tc.variant, func(t *testing.T) {
			s, err := scenario.Find(tc.scenario)
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			r, err := harness.Run(v.Test)
			require.NoError(t, err)
			cov := Coverage(r)
			assert.IsIncreasing(t, cov)
			for _, f := range tc.want {
				assert.Contains(t, cov, f)
			}
		})
	}
}

// TestEveryKindHasDirectedAttacks: every kind of violation a hunt can declare
// steers its placements toward attacks that exist.
func TestEveryKindHasDirectedAttacks(t *testing.T) {
	for _, k := range scenario.Kinds {
		if k == scenario.KindOther {
			continue
		}
		t.Run(k, func(t *testing.T) {
			require.NotEmpty(t, Directed[k])
			for _, a := range Directed[k] {
				assert.Contains(t, attacks, a)
			}
		})
	}
}

func TestBareQuorum(t *testing.T) {
	tests := []struct {
		detail string
		want   bool
	}{
		{"granted by redis-a,redis-b,redis-c (3/5), validity 9.8s; redis-d timed out", true},
		{"granted by redis-a,redis-b,redis-c,redis-d (4/5), validity 9.8s", false},
		{"granted by a,b (2/3), validity 1s", true},
		{"granted by redis", false},
		{"granted by a (1/1)", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, bareQuorum(tc.detail), tc.detail)
	}
}

// TestTimeoutIsTheSystemsTiming: a system without a lease deadline at the
// client is attacked on the time scale of its own options, defaults
// included: Chubby's session lease (6 s here), lock-delay (2 s),
// election and request timeouts (1 s each); a tick, a back-off and a grace
// longer than half the run are not timeouts of a hold.
func TestTimeoutIsTheSystemsTiming(t *testing.T) {
	tests := []struct {
		hunt string
		want time.Duration
	}{
		{"chubby-lock-delay/unsafe", 10 * time.Second},
		// ttl 10 s, down-after 2 s, wait-timeout 1 s, the workload's hold 4 s
		{"redis-failover/unsafe", 17 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.hunt, func(t *testing.T) {
			base, err := hunt(t, tc.hunt).Test(0)
			require.NoError(t, err)
			assert.Equal(t, tc.want, timeoutOf(base.WithDefaults()))
		})
	}
}

// TestHoldsRecordTheHoldersSteps: a holding records the holder's protocol
// steps from its grant on, where placements anchor; an attack on the holder
// takes a step before its last storage operation.
func TestHoldsRecordTheHoldersSteps(t *testing.T) {
	s, err := scenario.Find("kleppmann-gc-pause")
	require.NoError(t, err)
	v, err := s.FindVariant("redis-unsafe")
	require.NoError(t, err)
	r, err := harness.Run(v.Test)
	require.NoError(t, err)
	holds := holdsOf(r.Events)
	require.NotEmpty(t, holds)
	h := holds[0]
	require.NotEmpty(t, h.steps)
	assert.Equal(t, step{f: history.FAcquire, typ: history.OK, at: h.start, nth: 1}, h.steps[0], "the grant first")
	assert.LessOrEqual(t, h.invoke, h.start)
	assert.Positive(t, h.lease)
	var fs []string
	for _, st := range h.steps {
		fs = append(fs, st.f+"/"+string(st.typ))
	}
	assert.Subset(t, fs, []string{"read/invoke", "read/ok", "write/invoke"})
	before := h.beforeLastOp()
	require.NotEmpty(t, before)
	last := h.steps[len(before)]
	assert.Contains(t, []string{history.FRead, history.FWrite, history.FAppend}, last.f)
	assert.Equal(t, history.Invoke, last.typ)
}

// TestPlacementsAnchorOnTheParentsHoldings: every placement is triggered by
// a step of a holder of the parent's run, from that holding's acquire on;
// a two-fault placement is either a lag of a granter's messages to other
// servers before it is cut off or paused (a failover), or a pause of the
// holder while its acquire is under way followed by its clock stepping back
// by as long (a validity measured on the wall clock).
func TestPlacementsAnchorOnTheParentsHoldings(t *testing.T) {
	for _, name := range []string{"kleppmann-gc-pause/redis-unsafe", "redis-failover/unsafe-wait", "redlock-gc-pause/unsafe-wall-clock"} {
		t.Run(name, func(t *testing.T) {
			h := hunt(t, name)
			test, err := h.Test(3)
			require.NoError(t, err)
			r, err := harness.Run(test)
			require.NoError(t, err)
			holds := holdsOf(r.Events)
			require.NotEmpty(t, holds)
			tg, err := targetsOf(test)
			require.NoError(t, err)
			m := mutator{rng: rand.New(rand.NewPCG(1, 2)), targets: tg, time: test.WithDefaults().Time,
				directed: Directed[h.Kind], timeout: timeoutOf(test.WithDefaults())}
			for range 100 {
				fs, anchor, ok := m.place(holds)
				require.True(t, ok)
				f := fs[len(fs)-1]
				require.NotNil(t, f.After)
				assert.GreaterOrEqual(t, anchor, time.Duration(f.At))
				holder := slices.ContainsFunc(holds, func(x hold) bool {
					return x.node == f.After.Node && (x.start == int64(f.At) || x.invoke == int64(f.At))
				})
				assert.True(t, holder, "anchored on a holding of the parent")
				if len(fs) < 2 {
					continue
				}
				switch first := fs[0]; first.Kind {
				case nemesis.Delay:
					assert.Equal(t, f.Targets[:1], first.From, "the granter's messages lag")
					assert.NotContains(t, first.To, f.Targets[0])
				case nemesis.Pause:
					assert.Equal(t, nemesis.ClockJump, f.Kind)
					assert.Equal(t, first.Targets, f.Targets)
					assert.Equal(t, -first.Duration, f.Amount, "the clock steps back by the pause")
					assert.Equal(t, string(history.Invoke), f.After.Type, "while the acquire is under way")
				default:
					t.Errorf("unexpected first fault %+v", first)
				}
			}
		})
	}
}

// TestSearchStaysInItsFamily: a search aimed at a fault family draws,
// mutates and places faults of that kind only, and tells OnRun of every
// run, in order, with the schedule that ran.
func TestSearchStaysInItsFamily(t *testing.T) {
	for _, family := range []string{"pause", "crash", "partition", "clock-jump", "clock-drift", "delay"} {
		t.Run(family, func(t *testing.T) {
			target := Target{Name: "redis × " + family, Family: family,
				Test: func(seed uint64) (scenario.Test, error) {
					return scenario.Test{System: "redis", Clients: 2, Time: 20 * time.Second, Nemesis: family, Seed: seed}.WithDefaults(), nil
				},
				Stop: func(scenario.Result) bool { return false }}
			var seen []scenario.Test
			o, err := Search(Config{Target: &target, Seed: 3, MaxRuns: 30, OnRun: func(tt scenario.Test, r scenario.Result) {
				require.NotNil(t, tt.Schedule)
				assert.Equal(t, r.Schedule.Faults, tt.Schedule.Faults, "the test OnRun gets is the run's, its schedule explicit")
				seen = append(seen, tt)
			}}, nil)
			require.NoError(t, err)
			assert.False(t, o.Found)
			assert.Len(t, seen, o.Runs)
			faults := 0
			for _, tt := range seen {
				for _, f := range tt.Schedule.Faults {
					assert.Equal(t, nemesis.Kind(family), f.Kind, "run seed %d", tt.Seed)
					faults++
				}
			}
			assert.Positive(t, faults)
		})
	}
}

// TestSearchStopsWhereItsTargetSays: the stop predicate ends the search,
// and the run that stopped it is the outcome's test.
func TestSearchStopsWhereItsTargetSays(t *testing.T) {
	runs := 0
	target := Target{Name: "redis × pause", Family: "pause",
		Test: func(seed uint64) (scenario.Test, error) {
			return scenario.Test{System: "redis", Clients: 2, Time: 20 * time.Second, Nemesis: "pause", Seed: seed}.WithDefaults(), nil
		},
		Stop: func(scenario.Result) bool { runs++; return runs == 5 }}
	o, err := Search(Config{Target: &target, Seed: 1, MaxRuns: 30}, nil)
	require.NoError(t, err)
	assert.True(t, o.Found)
	assert.Equal(t, 5, o.Runs)
}

// TestSearchRefusesAnUnknownFamily names the family and the known ones.
func TestSearchRefusesAnUnknownFamily(t *testing.T) {
	target := Target{Name: "x", Family: "gc", Test: func(uint64) (scenario.Test, error) { return scenario.Test{}, nil },
		Stop: func(scenario.Result) bool { return true }}
	_, err := Search(Config{Target: &target}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"gc"`)
	assert.Contains(t, err.Error(), "clock-drift")
}

// TestTimeScaleNamesItsParts: the time scale in words names the options it
// sums.
func TestTimeScaleNamesItsParts(t *testing.T) {
	sum, words := TimeScale(scenario.Test{System: "zookeeper", Time: 30 * time.Second}.WithDefaults())
	assert.Positive(t, sum)
	assert.Contains(t, words, "session-timeout 10s")
}
