package harness

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

// The options results.json records are every option of the system's and the
// workload's table, defaults included, and recording them again changes
// nothing: a recorded configuration replays as itself.
func TestOptionDefaultsAreTheCodesDefaults(t *testing.T) {
	for _, s := range system.All() {
		for _, w := range workloads.All() {
			e := scenario.Test{System: s.Name, Workload: w.Name}.Effective()
			assert.ElementsMatch(t, s.Options.Names(), slices.Sorted(maps.Keys(e.SystemOptions)), "%s: every option is recorded", s.Name)
			assert.ElementsMatch(t, w.Options.Names(), slices.Sorted(maps.Keys(e.WorkloadOptions)), "%s: every option is recorded", w.Name)
			again := scenario.Test{System: s.Name, Workload: w.Name, SystemOptions: e.SystemOptions, WorkloadOptions: e.WorkloadOptions}.Effective()
			assert.Equal(t, e, again, "%s/%s: the recorded options replay as themselves", s.Name, w.Name)
		}
	}
}

// results.json records the effective configuration: every option with its
// value, defaults included, durations as people write them, and a scenario's
// schedule instead of "nemesis": "none".
func TestResultsRecordTheEffectiveConfiguration(t *testing.T) {
	sched := nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(time.Second)}}}
	r, err := Run(scenario.Test{System: "redis", SystemOptions: map[string]string{"ttl": "5s"}, WorkloadOptions: map[string]string{"hold": "1s"},
		Clients: 2, Time: 3 * time.Second, Seed: 9, Schedule: &sched})
	require.NoError(t, err)
	b, err := json.Marshal(judge.Report(r, "locklab run ...").Config)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(b, &cfg))
	sys := cfg["system_options"].(map[string]any)
	assert.Equal(t, "5s", sys["ttl"], "a given option")
	assert.Equal(t, "lua", sys["release"], "a default option")
	redisEntry, err := system.Find("redis")
	require.NoError(t, err)
	assert.Len(t, sys, len(redisEntry.Options.Names()))
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
	assert.True(t, slices.Contains(slices.Sorted(maps.Keys(cfg)), "fence_reads"))
}
