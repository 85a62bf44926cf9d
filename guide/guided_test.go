package guide

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
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
	cfg := Config{Hunt: hunt(t, "kleppmann-gc-pause/redis-unsafe"), Seed: 7, Start: 400, MaxRuns: 15, Fresh: 3}
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
	assert.Equal(t, uint64(400), a.Corpus[0].Test.Seed, "the first run is the hunt's test of seed Start")

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
	assert.Contains(t, harness.ViolationKinds(r.Events), h.Kind)
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
			s, err := harness.FindScenario(tc.scenario)
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
	for _, k := range harness.Kinds {
		if k == harness.KindOther {
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
