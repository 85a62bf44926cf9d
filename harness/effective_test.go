package harness

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/backends/redlock"
	"github.com/locklab/locklab/nemesis"
)

// The defaults results.json records are the code's: setting every recorded
// default on a system's or workload's defaults changes nothing, and every
// option has one.
func TestOptionDefaultsAreTheCodesDefaults(t *testing.T) {
	apply := func(o interface{ Set(k, v string) error }, opts map[string]string) {
		for _, k := range sortedKeys(opts) {
			require.NoError(t, o.Set(k, opts[k]))
		}
	}
	systems := map[string]func(map[string]string) (any, any, []string){
		"redis": func(opts map[string]string) (any, any, []string) {
			o := redis.DefaultOptions()
			apply(&o, opts)
			return redis.DefaultOptions(), o, redis.OptionNames
		},
		"redlock": func(opts map[string]string) (any, any, []string) {
			o := redlock.DefaultOptions()
			apply(&o, opts)
			return redlock.DefaultOptions(), o, redlock.OptionNames
		},
		"raftkv": func(opts map[string]string) (any, any, []string) {
			o := raftkv.DefaultOptions()
			apply(&o, opts)
			return raftkv.DefaultOptions(), o, raftkv.OptionNames
		},
		"control": func(map[string]string) (any, any, []string) { return nil, nil, nil },
	}
	for _, s := range Systems() {
		t.Run(s.Name, func(t *testing.T) {
			defaults, ok := systemOptionDefaults[s.Name]
			require.True(t, ok, "system %s has no recorded defaults", s.Name)
			check, ok := systems[s.Name]
			require.True(t, ok, "add system %s to this test", s.Name)
			want, got, names := check(defaults)
			assert.Equal(t, want, got, "a recorded default differs from the code's")
			assert.ElementsMatch(t, names, sortedKeys(defaults), "every option has a recorded default")
			assert.ElementsMatch(t, s.Options, sortedKeys(defaults))
		})
	}
	for _, w := range Workloads() {
		t.Run(w.Name, func(t *testing.T) {
			defaults, ok := workloadOptionDefaults[w.Name]
			require.True(t, ok, "workload %s has no recorded defaults", w.Name)
			plain, err := w.New(nil)
			require.NoError(t, err)
			set, err := w.New(defaults)
			require.NoError(t, err)
			assert.Equal(t, plain, set, "a recorded default differs from the code's")
		})
	}
}

// results.json records the effective configuration: every option with its
// value, defaults included, durations as people write them, and a scenario's
// schedule instead of "nemesis": "none".
func TestResultsRecordTheEffectiveConfiguration(t *testing.T) {
	sched := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(time.Second)}}}
	r, err := Run(Test{System: "redis", SystemOptions: map[string]string{"ttl": "5s"}, WorkloadOptions: map[string]string{"hold": "1s"},
		Clients: 2, Time: 3 * time.Second, Seed: 9, Schedule: &sched})
	require.NoError(t, err)
	b, err := json.Marshal(r.Report("locklab run ...").Config)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	sys := cfg["system_options"].(map[string]any)
	assert.Equal(t, "5s", sys["ttl"], "a given option")
	assert.Equal(t, "lua", sys["release"], "a default option")
	assert.Len(t, sys, len(redis.OptionNames))
	wl := cfg["workload_options"].(map[string]any)
	assert.Equal(t, "1s", wl["hold"])
	assert.Equal(t, "5s", wl["wait"])
	assert.Equal(t, "3s", cfg["time"])
	assert.EqualValues(t, 2, cfg["clients"])
	assert.EqualValues(t, 9, cfg["seed"])
	assert.Equal(t, "unfenced", cfg["storage"])
	assert.Equal(t, "schedule", cfg["nemesis"])
	assert.NotNil(t, cfg["schedule"], "the schedule that ran")
	assert.Equal(t, []any{"default"}, cfg["checks"])
	assert.EqualValues(t, 2_000_000, cfg["check_steps"])
	assert.Equal(t, "1m0s", cfg["check_budget"])
	assert.True(t, slices.Contains(sortedKeys(cfg), "fence_reads"))
}
