package harness

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// TestLoadTestReplaysARunDirectory: the test read back from a run directory
// (a random nemesis, so its drawn schedule) replays the run event for event,
// and names only the options that differ from their defaults.
func TestLoadTestReplaysARunDirectory(t *testing.T) {
	orig := scenario.Test{System: "redis", Clients: 3, Seed: 9, Time: 20 * time.Second, Nemesis: "pause,partition",
		SystemOptions: map[string]string{"ttl": "5s"}}
	r := run(t, orig)
	dir := filepath.Join(t.TempDir(), "r")
	require.NoError(t, reports.WriteDir(dir, judge.Report(r, "locklab run")))

	loaded, err := LoadTest(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ttl": "5s"}, loaded.SystemOptions)
	assert.Nil(t, loaded.WorkloadOptions)
	assert.Nil(t, loaded.Checks)
	require.NotNil(t, loaded.Schedule)
	assert.Equal(t, r.Schedule.Faults, loaded.Schedule.Faults)
	again := run(t, loaded)
	assert.Equal(t, r.Events, again.Events)

	_, err = LoadTest(t.TempDir())
	assert.ErrorContains(t, err, "read run directory")
}
