package libmode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/placement"
	"github.com/locklab/locklab/storage"
)

func guidedConfig(fence, fenceReads bool) Config {
	cfg := setLockConfig(fence)
	cfg.Clients, cfg.Duration = 2, 5*time.Second
	if fence {
		cfg.Storage, cfg.FenceReads = storage.Fenced, fenceReads
	}
	return cfg
}

var lease = []placement.Timeout{{Name: "ttl", D: time.Second}}

// TestGuidedFindsThePause: every single pause of a client anchored at its
// acquire or read, ended at the other client's steps or lasting around the
// TTL: some lose an update (the pause outlives the lease and ends between
// the other's read and write), unfenced. Fenced on writes alone, a stale
// write that lands between the new holder's read and its write still
// loses an update (its token is the highest written yet); fenced on reads
// too, no placement corrupts the data.
func TestGuidedFindsThePause(t *testing.T) {
	faults, bound := Placements(guidedConfig(false, false), GuidedOptions{Sections: 1, Timeouts: lease})
	// 2 clients x 1 section x 2 steps x (8 end anchors + 3 lengths)
	require.Len(t, faults, 44)
	assert.Contains(t, bound, "all 44 single pauses")
	for _, f := range faults {
		assert.Equal(t, nemesis.Pause, f.Kind)
		require.NotNil(t, f.After)
	}

	s := Guided(t, guidedConfig(false, false), GuidedOptions{Sections: 1, Timeouts: lease})
	t.Log(s.Line())
	assert.Equal(t, 44, s.Runs)
	assert.Greater(t, s.Fired, 30)
	require.NotEmpty(t, s.Failing)
	lost, gcPause := 0, 0
	for _, r := range s.Failing {
		if r.Verdict("critical-sections") == models.Invalid {
			lost++
		}
		if slices.Contains(r.Kinds, "gc-pause") {
			gcPause++
		}
	}
	t.Logf("%d placements lose an update, %d classified gc-pause", lost, gcPause)
	assert.Positive(t, lost)
	assert.Positive(t, gcPause)

	writes := Guided(t, guidedConfig(true, false), GuidedOptions{Sections: 1, Timeouts: lease, StopAtFirst: true})
	require.NotEmpty(t, writes.Failing)
	assert.Equal(t, models.Invalid, writes.Failing[0].Verdict("critical-sections"), "write-only fencing: %s", writes.Failing[0].Faults)
	t.Logf("fenced on writes only, the first failing placement: %s", writes.Failing[0].Faults)

	fenced := Guided(t, guidedConfig(true, true), GuidedOptions{Sections: 1, Timeouts: lease})
	t.Log(fenced.Line())
	assert.Equal(t, 44, fenced.Runs)
	for _, r := range fenced.Failing {
		assert.Equal(t, models.Valid, r.Verdict("critical-sections"), r.Faults)
	}
	assert.NotEmpty(t, fenced.Failing, "the lock still breaks: mutual exclusion is invalid")
}

// TestSearch: random and guided search, the shrunk finding, its run
// directory with the report, and the replay line run back.
func TestSearch(t *testing.T) {
	rep := Search(t, guidedConfig(false, false), SearchOptions{Seeds: 4, Guided: GuidedOptions{Sections: 1}})
	text := rep.Text()
	t.Log(text)
	require.NotNil(t, rep.Finding)
	require.NotNil(t, rep.Shrunk, rep.ShrinkErr)
	assert.Equal(t, 4, rep.Random.Runs)
	assert.Equal(t, 44, rep.Guided.Runs)
	for _, want := range []string{"random: 4 runs", "guided: 44 runs", "shrunk ", `"kind": "pause"`, "libmode.Replay(t, cfg, `", "LIBMODE_REPLAY=", "report.html"} {
		assert.Contains(t, text, want)
	}
	for _, f := range []string{"report.html", "schedule.json", "history.jsonl", "results.json", "summary.txt"} {
		assert.FileExists(t, filepath.Join(rep.Dir, f))
	}
	results, err := os.ReadFile(filepath.Join(rep.Dir, "results.json"))
	require.NoError(t, err)
	assert.Contains(t, string(results), `"servers_record"`)
	assert.Contains(t, string(results), `"mode": "library"`)
	assert.Contains(t, string(results), filepath.Join(rep.Dir, "schedule.json"), "the replay line names the written schedule")

	// the replay line, run back
	line := rep.ReplayLine(rep.Shrunk.Result)
	for _, kv := range strings.Fields(line) {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "LIBMODE_") {
			t.Setenv(k, v)
		}
	}
	t.Setenv("LIBMODE_REPORT_DIR", t.TempDir())
	again := Search(t, guidedConfig(false, false), SearchOptions{})
	require.NotNil(t, again.Finding)
	assert.Zero(t, again.Guided.Runs)
	assert.True(t, sameEvents(rep.Shrunk.Result.Events, again.Finding.Events), "the replay gives the shrunk run's history")
}
