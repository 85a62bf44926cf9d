package sweep

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// smallGrid is a grid of a few runs: redis unfenced and redis with tokens and
// fenced storage, without faults and under random pauses, seeds 7 and 8 (both
// pause a holder across its lease).
func smallGrid(t *testing.T) Grid {
	t.Helper()
	return Grid{
		Rows: []Row{
			NewRow(Config{System: "redis"}),
			NewRow(Config{System: "redis", SystemOptions: map[string]string{"fencing": "true"}, Storage: storage.Fenced}),
		},
		Columns: []string{"none", "pause"}, FirstSeed: 7, Seeds: 2, Time: Duration(60 * time.Second),
	}
}

// outputs are the files of a finished sweep whose bytes must not depend on
// how it ran.
var outputs = []string{RecordsFile, MatrixJSON, MatrixCSV, MatrixHTML, PlotName + ".png", PlotName + ".svg", ManifestFile}

func sweepTo(t *testing.T, g Grid, o Options) string {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "sweep")
	}
	_, err := Sweep(g, o)
	require.NoError(t, err)
	_, err = Finish(o.Dir, o.Keep, o.Jobs)
	require.NoError(t, err)
	return o.Dir
}

// whole is the small grid swept once with -j 1 and --keep failures, shared by
// the tests that compare with it.
var whole struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if whole.dir != "" {
		os.RemoveAll(filepath.Dir(whole.dir))
	}
	os.Exit(code)
}

func wholeSweep(t *testing.T) string {
	t.Helper()
	whole.once.Do(func() {
		tmp, err := os.MkdirTemp("", "sweep-test")
		if err != nil {
			whole.err = err
			return
		}
		whole.dir = filepath.Join(tmp, "whole")
		if _, whole.err = Sweep(smallGrid(t), Options{Dir: whole.dir, Jobs: 1}); whole.err == nil {
			_, whole.err = Finish(whole.dir, KeepFailures, 1)
		}
	})
	require.NoError(t, whole.err)
	return whole.dir
}

func requireSameOutputs(t *testing.T, want, got string) {
	t.Helper()
	for _, f := range outputs {
		a, err := os.ReadFile(filepath.Join(want, f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(got, f))
		require.NoError(t, err)
		assert.Equal(t, string(a), string(b), "%s differs between %s and %s", f, want, got)
	}
}

func TestOutputDoesNotDependOnJobs(t *testing.T) {
	g := smallGrid(t)
	one := wholeSweep(t)
	two := sweepTo(t, g, Options{Jobs: 2})
	requireSameOutputs(t, one, two)
}

func TestMatrixTellsCorruptedFromSafe(t *testing.T) {
	dir := wholeSweep(t)
	mx, err := BuildMatrix(dir)
	require.NoError(t, err)
	require.Len(t, mx.Rows, 2)
	unfenced, fenced := mx.Rows[0], mx.Rows[1]
	assert.Equal(t, StateSafe, unfenced.Cells[0].State, "redis without faults")
	assert.Equal(t, StateCorrupted, unfenced.Cells[1].State, "redis unfenced under pauses")
	assert.Equal(t, StateLockBroke, fenced.Cells[1].State, "fenced redis under pauses: the lock breaks, the data holds")
	require.NotNil(t, unfenced.Cells[1].First)
	first := unfenced.Cells[1].First
	assert.Contains(t, first.Replay, "locklab run --system redis")
	assert.FileExists(t, filepath.Join(dir, first.Dir, "report.html"), "the first failing seed's run directory is kept")
	require.NotNil(t, fenced.Cost)
	assert.Greater(t, fenced.Cost.CSPerSecond, 0.0)
	assert.Contains(t, mx.Verdicts[0], "redis: unfenced: data corrupted under pause")
	assert.Contains(t, mx.Verdicts[1], "under pause (what saved the data: fencing tokens checked by the storage)")
}

// TestLockBrokeNamesWhatSavedTheData: a row whose lock broke with its data
// intact names its guard (system.GuardOf) — fencing only for fenced rows,
// the transaction, the compare-and-set, etcd's guarded Txn or the sequencer
// check otherwise — and an unfenced row with no guard says that nothing but
// the lock guards its data; no unfenced row says fencing.
func TestLockBrokeNamesWhatSavedTheData(t *testing.T) {
	tests := []struct {
		config Config
		want   string
	}{
		{Config{System: "redis", SystemOptions: map[string]string{"fencing": "true"}, Storage: storage.Fenced},
			"(what saved the data: fencing tokens checked by the storage)"},
		{Config{System: "redis", SystemOptions: map[string]string{"fencing": "true"}, Storage: storage.Fenced, FenceReads: true},
			"(what saved the data: fencing tokens checked by the storage on reads and writes)"},
		{Config{System: "database", SystemOptions: map[string]string{"mode": "optimistic"}},
			"(what saved the data: a compare-and-set on the row's version)"},
		{Config{System: "database", SystemOptions: map[string]string{"resource": "db"}},
			"(what saved the data: the database transaction)"},
		{Config{System: "etcd", SystemOptions: map[string]string{"resource": "etcd"}},
			"(what saved the data: etcd's guarded Txn)"},
		{Config{System: "chubby", Storage: storage.Check},
			"(what saved the data: the storage checks the sequencer with the lock service)"},
		{Config{System: "redis"},
			"(data intact, though nothing but the lock guards it: no seed happened to corrupt it)"},
	}
	for _, tc := range tests {
		row := NewRow(tc.config)
		t.Run(row.Name, func(t *testing.T) {
			mx := Matrix{Columns: []string{"none", "pause"}, Rows: []MatrixRow{{Row: row, Cells: []Cell{
				{Column: "none", State: StateSafe},
				{Column: "pause", State: StateLockBroke, FailingChecks: map[string]int{"lease": 1, "mutual-exclusion": 1}},
			}}}}
			v := verdicts(mx)
			require.Len(t, v, 1)
			assert.Contains(t, v[0], "lock broke (lease, mutual-exclusion) under pause "+tc.want)
			if row.Config.Storage == storage.Unfenced {
				assert.NotContains(t, v[0], "fencing")
			}
		})
	}
}

func TestShardsMergeToTheWholeSweep(t *testing.T) {
	g := smallGrid(t)
	whole := wholeSweep(t)
	var dirs []string
	for i := range 4 {
		dir := filepath.Join(t.TempDir(), "shard")
		_, err := Sweep(g, Options{Dir: dir, Jobs: 1, Shard: Shard{Index: i, Count: 4}})
		require.NoError(t, err)
		dirs = append(dirs, dir)
	}
	// A shard run twice is a free determinism check: it must agree byte for byte.
	dirs = append(dirs, dirs[1])
	merged := filepath.Join(t.TempDir(), "merged")
	report, err := Merge(merged, dirs)
	require.NoError(t, err)
	assert.Equal(t, g.NumRuns()/4, report.Duplicates)
	_, err = Finish(merged, KeepFailures, 2)
	require.NoError(t, err)
	requireSameOutputs(t, whole, merged)
}

func TestMergeRefusesWhatDoesNotFit(t *testing.T) {
	g := smallGrid(t)
	g.Seeds, g.Columns = 1, []string{"none"}
	a := filepath.Join(t.TempDir(), "a")
	_, err := Sweep(g, Options{Dir: a, Jobs: 1, Shard: Shard{Index: 0, Count: 2}})
	require.NoError(t, err)
	other := g
	other.FirstSeed = 2
	b := filepath.Join(t.TempDir(), "b")
	_, err = Sweep(other, Options{Dir: b, Jobs: 1, Shard: Shard{Index: 1, Count: 2}})
	require.NoError(t, err)
	_, err = Merge(filepath.Join(t.TempDir(), "m"), []string{a, b})
	require.ErrorContains(t, err, "another grid")

	c := filepath.Join(t.TempDir(), "c")
	require.NoError(t, os.MkdirAll(c, 0o755))
	_, err = Sweep(g, Options{Dir: c, Jobs: 1, Shard: Shard{Index: 1, Count: 2}})
	require.NoError(t, err)
	// Tamper with one record: the shards no longer agree on a run.
	journal := filepath.Join(c, JournalFile)
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(journal, []byte(replaceFirst(string(data), `"messages":`, `"messages":1`)), 0o644))
	_, err = Merge(filepath.Join(t.TempDir(), "m2"), []string{a, c, c})
	require.NoError(t, err, "the same directory twice agrees with itself")
	d := filepath.Join(t.TempDir(), "d")
	_, err = Sweep(g, Options{Dir: d, Jobs: 1, Shard: Shard{Index: 1, Count: 2}})
	require.NoError(t, err)
	_, err = Merge(filepath.Join(t.TempDir(), "m3"), []string{a, c, d})
	require.ErrorContains(t, err, "disagree")

	_, err = Merge(filepath.Join(t.TempDir(), "m4"), []string{a})
	require.ErrorContains(t, err, "missing")
}

func replaceFirst(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

func TestResumeAfterATornJournal(t *testing.T) {
	g := smallGrid(t)
	whole := wholeSweep(t)
	dir := filepath.Join(t.TempDir(), "resumed")
	// A sweep stopped early leaves part of the journal; cut its last line in
	// half as a kill in the middle of a write would.
	stop := make(chan struct{})
	close(stop)
	_, err := Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stop, Keep: KeepNone})
	require.ErrorIs(t, err, ErrStopped)
	data, err := os.ReadFile(filepath.Join(whole, JournalFile))
	require.NoError(t, err)
	lines := splitLines(data)
	torn := append(append([]byte{}, lines[0]...), lines[1][:len(lines[1])/2]...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, JournalFile), torn, 0o644))
	ran, err := Sweep(g, Options{Dir: dir, Jobs: 2, Keep: KeepNone})
	require.NoError(t, err)
	assert.Equal(t, g.NumRuns()-1, ran, "the finished run is not repeated; the torn one is")
	_, err = Finish(dir, KeepFailures, 2)
	require.NoError(t, err)
	requireSameOutputs(t, whole, dir)
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, b[start:i+1])
			start = i + 1
		}
	}
	return out
}

func TestResumeRefusesAnotherGrid(t *testing.T) {
	g := smallGrid(t)
	g.Seeds, g.Columns = 1, []string{"none"}
	dir := filepath.Join(t.TempDir(), "s")
	_, err := Sweep(g, Options{Dir: dir, Jobs: 2, Keep: KeepNone})
	require.NoError(t, err)
	g.Seeds++
	_, err = Sweep(g, Options{Dir: dir, Jobs: 2})
	var gm *GridMismatchError
	require.ErrorAs(t, err, &gm)
}

func TestCatalogRowsComeFromTheRegistries(t *testing.T) {
	rows, err := CatalogRows()
	require.NoError(t, err)
	systems := map[string]bool{}
	ids := map[string]bool{}
	for _, r := range rows {
		systems[r.Config.System] = true
		assert.False(t, ids[r.ID], "row %s twice", r.Name)
		ids[r.ID] = true
	}
	for _, s := range system.Names() {
		assert.True(t, systems[s], "system %s has a row", s)
	}
	names := map[string]bool{}
	for _, r := range rows {
		names[r.Name] = true
	}
	for _, want := range []string{"redis · unfenced", "redis fencing=true · fenced", "redis fencing=true · fenced+reads",
		"redlock token=external · fenced+reads", "raftkv · fenced+reads", "control · unfenced"} {
		assert.True(t, names[want], "row %q", want)
	}
	assert.False(t, names["redis · fenced"], "redis without fencing=true grants no tokens: no fenced row")
}

func TestRunIDsAreStable(t *testing.T) {
	g := smallGrid(t)
	for i := range g.NumRuns() {
		r := g.RunAt(i)
		j, ok := g.IndexOf(r.ID)
		require.True(t, ok)
		assert.Equal(t, i, j)
	}
	_, ok := g.IndexOf(g.Rows[0].ID + "/none/99")
	assert.False(t, ok)
	assert.Equal(t, "80be773a20", g.Rows[0].ID, "a row's id is a hash of its configuration")
}
