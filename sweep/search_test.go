package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// defaultSettings is the default matrix's settings with the given rows.
func defaultSettings(t *testing.T, rows ...SearchedRow) SearchConfig {
	t.Helper()
	p, err := FindMatrixPreset("matrix")
	require.NoError(t, err)
	return SearchConfig{Preset: p.Name, Rows: rows, Columns: SearchColumns(), Budget: p.Budget, Time: Duration(p.Time),
		Clients: p.Clients, CostRuns: p.CostRuns, ShrinkRuns: p.ShrinkRuns}
}

// TestMustShowCellsAreUnsafe: the cells a reader checks first — Redis,
// ZooKeeper and raftkv, unfenced, under pauses — are found to corrupt data
// by the default matrix's search, each with a shrunk counterexample that
// replays from its run directory.
func TestMustShowCellsAreUnsafe(t *testing.T) {
	if testing.Short() {
		t.Skip("searches three cells")
	}
	defer TuneGC()()
	for _, system := range []string{"redis", "zookeeper", "raftkv"} {
		t.Run(system, func(t *testing.T) {
			row := NewSearchedRow(system, Config{System: system, Storage: storage.Unfenced}, "")
			c := defaultSettings(t, row)
			dir := t.TempDir()
			cell, _, err := SearchCell(c, row, "pause", CellOptions{Dir: dir})
			require.NoError(t, err)
			require.Equal(t, VerdictCorrupted, cell.Verdict, cell.Evidence.Line)
			f := cell.Findings[0]
			assert.Equal(t, VerdictCorrupted, f.Kind)
			assert.Contains(t, f.Checks, "critical-sections")
			require.NotEmpty(t, f.Faults)
			assert.LessOrEqual(t, len(f.Faults), 3, "shrunk: %v", f.Faults)
			for _, line := range f.Faults {
				assert.True(t, strings.HasPrefix(line, "pause "), line)
			}
			assert.Regexp(t, `^After a pause of c\d .* held "k" at once .*lost update`, f.Story)
			assert.Contains(t, f.Replay, "--nemesis-file "+filepath.Join(f.Dir, "schedule.json"))
			t.Logf("%s × pause: %s\n  faults: %v\n  story: %s\n  replay: %s", system, cell.Evidence.Line, f.Faults, f.Story, f.Replay)

			// The replay command's test, run again, is the run directory's run.
			test, err := harness.LoadTest(filepath.Join(dir, f.Dir))
			require.NoError(t, err)
			r, err := harness.Run(test)
			require.NoError(t, err)
			assert.Equal(t, models.Invalid, verdictOf(r, "critical-sections"), "the replay corrupts the data again")
			assert.Subset(t, []string{scenario.KindGCPause, scenario.KindSessionExpiry}, scenario.ViolationKinds(r.Events)[:1],
				"the holder paused past its lease or session")
		})
	}
}

// TestCellsAreDecidedFromTheirIDAlone: a cell searched twice is the same
// cell, whatever else the matrix holds.
func TestCellsAreDecidedFromTheirIDAlone(t *testing.T) {
	row := NewSearchedRow("redis fenced", Config{System: "redis", SystemOptions: map[string]string{"fencing": "true"}, Storage: storage.Fenced}, system.GuardFencing)
	c := defaultSettings(t, row)
	c.Budget = 40
	a, runsA, err := SearchCell(c, row, "partition", CellOptions{NoShrink: true})
	require.NoError(t, err)
	other := NewSearchedRow("redis", Config{System: "redis"}, "")
	c.Rows = append([]SearchedRow{other}, c.Rows...)
	b, runsB, err := SearchCell(c, row, "partition", CellOptions{NoShrink: true})
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, runsA, runsB)
	assert.Equal(t, 40, a.Evidence.Runs)
	assert.Equal(t, a.Evidence.Runs, a.Evidence.Fired+a.Evidence.Quiet, "every run is evidence or quiet")
}

// stopAfter is a progress that closes stop after n cells.
type stopAfter struct {
	n    int
	stop chan struct{}
	once sync.Once
}

func (s *stopAfter) Start(int, int) {}
func (s *stopAfter) Run()           {}
func (s *stopAfter) Cell(SearchedRow, SearchedCell) {
	if s.n--; s.n <= 0 {
		s.once.Do(func() { close(s.stop) })
	}
}

// TestInterruptedMatrixResumesToTheSameMatrix: a matrix stopped after a cell
// and resumed, at another -j, writes byte for byte the matrix.json of one
// run straight through; its directory is refused to other settings.
func TestInterruptedMatrixResumesToTheSameMatrix(t *testing.T) {
	c := SearchConfig{Preset: "test", Columns: []string{"pause", "crash"}, Budget: 15, Time: Duration(10 * time.Second), Clients: 2, CostRuns: 2, ShrinkRuns: 30,
		Rows: []SearchedRow{
			NewSearchedRow("Redis", Config{System: "redis"}, ""),
			NewSearchedRow("Redis + fencing", Config{System: "redis", SystemOptions: map[string]string{"fencing": "true"}, Storage: storage.Fenced}, system.GuardFencing),
		}}
	whole := filepath.Join(t.TempDir(), "whole")
	m, err := SearchMatrix(c, SearchOptions{Dir: whole, Jobs: 2})
	require.NoError(t, err)
	require.Len(t, m.Rows, 2)
	require.Len(t, m.Rows[0].Cells, 2)
	assert.NotNil(t, m.Rows[0].Cost)

	broken := filepath.Join(t.TempDir(), "broken")
	stop := &stopAfter{n: 1, stop: make(chan struct{})}
	_, err = SearchMatrix(c, SearchOptions{Dir: broken, Jobs: 1, Progress: stop, Stop: stop.stop})
	require.ErrorIs(t, err, ErrStopped)
	_, err = SearchMatrix(c, SearchOptions{Dir: broken, Jobs: 1})
	require.NoError(t, err)

	for _, name := range []string{MatrixJSON, MatrixText} {
		a, err := os.ReadFile(filepath.Join(whole, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(broken, name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "%s differs after a resume", name)
	}
	var back SearchedMatrix
	b, err := os.ReadFile(filepath.Join(whole, MatrixJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m, back)

	c.Budget = 16
	_, err = SearchMatrix(c, SearchOptions{Dir: whole, Jobs: 1})
	var gm *GridMismatchError
	require.True(t, errors.As(err, &gm), "%v", err)
	assert.Contains(t, err.Error(), "a matrix of other settings")
}

// TestEvidenceSaysWhatTheRunsShowed: the evidence line of a cell states its
// runs, the runs a fault fired in, the largest fault against the system's
// timing and the 95% bound, and never the word "safe".
func TestEvidenceSaysWhatTheRunsShowed(t *testing.T) {
	lease := timing{scale: 10 * time.Second, name: "the lease (ttl 10s)"}
	tests := []struct {
		name  string
		acc   evidenceAcc
		runs  int
		first map[string]*found
		want  string
		bound float64
	}{
		{"nothing fired", evidenceAcc{family: "pause", timing: lease, quiet: 300}, 300, nil,
			"no pause fired in any of the 300 runs: the cell says nothing", 0},
		{"no violation", evidenceAcc{family: "pause", timing: lease, fired: 400, largest: map[nemesis.Kind]float64{nemesis.Pause: float64(32 * time.Second)}}, 400, nil,
			"no violation found in 400 runs (400 with a pause fired, pauses up to 3.2x the lease (ttl 10s)): < 0.75% per run (95%)", 1 - math.Pow(0.05, 1.0/400)},
		{"quiet runs counted apart", evidenceAcc{family: "crash", timing: lease, fired: 290, quiet: 10, largest: map[nemesis.Kind]float64{nemesis.Crash: float64(5 * time.Second)}}, 300, nil,
			"no violation found in 300 runs (290 with a crash fired, crashes (time down) up to 0.5x the lease (ttl 10s); 10 runs without a crash fired, not counted): < 1.0% per run (95%)", 1 - math.Pow(0.05, 1.0/290)},
		{"lock broke, data intact", evidenceAcc{family: "pause", timing: lease, fired: 300, largest: map[nemesis.Kind]float64{nemesis.Pause: float64(20 * time.Second)}}, 300,
			map[string]*found{VerdictLockBroke: {runsTo: 12}},
			"lock broke in run 12; no data corruption found in 300 runs (300 with a pause fired, pauses up to 2.0x the lease (ttl 10s)): < 0.99% per run (95%)", 1 - math.Pow(0.05, 1.0/300)},
		{"runs shorter than a timeout", evidenceAcc{family: "pause", fired: 300, largest: map[nemesis.Kind]float64{nemesis.Pause: float64(46 * time.Second)},
			timing: timing{scale: 10 * time.Second, name: "the lease (10s)", run: 20 * time.Second, beyond: []string{"lock-delay 1m0s"}}}, 300, nil,
			"no violation found in 300 runs (300 with a pause fired, pauses up to 4.6x the lease (10s)): < 0.99% per run (95%)", 1 - math.Pow(0.05, 1.0/300)},
		{"corrupted", evidenceAcc{family: "random", timing: lease, fired: 7, largest: map[nemesis.Kind]float64{nemesis.Pause: float64(11 * time.Second), nemesis.ClockDrift: 0.25}}, 7,
			map[string]*found{VerdictCorrupted: {runsTo: 7}},
			"data corrupted in run 7 of the search (7 with a fault fired, pauses up to 1.1x the lease (ttl 10s), clock drift up to 25%)", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.acc.evidence(tc.runs, tc.first)
			assert.Equal(t, tc.want, e.Line)
			assert.InDelta(t, tc.bound, e.Bound, 1e-12)
			assert.NotRegexp(t, regexp.MustCompile(`(?i)\bsafe\b`), e.Line)
		})
	}
}

// TestSearchConfigRefusesBadSettings names what is wrong.
func TestSearchConfigRefusesBadSettings(t *testing.T) {
	row := NewSearchedRow("Redis", Config{System: "redis"}, "")
	tests := []struct {
		name   string
		change func(*SearchConfig)
		want   string
	}{
		{"budget 0", func(c *SearchConfig) { c.Budget = 0 }, "budget: 0 runs per cell"},
		{"unknown family", func(c *SearchConfig) { c.Columns = []string{"gc"} }, `unknown fault family "gc"`},
		{"no rows", func(c *SearchConfig) { c.Rows = nil }, "rows: the matrix has no rows"},
		{"a row that cannot run", func(c *SearchConfig) {
			c.Rows = []SearchedRow{NewSearchedRow("x", Config{System: "redis", SystemOptions: map[string]string{"ttl": "forever"}}, "")}
		}, "rows[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultSettings(t, row)
			tc.change(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDesignRowsAreTheRegisteredDesigns: the default matrix's rows are every
// registered design in each of its modes, by its users' name and guard.
func TestDesignRowsAreTheRegisteredDesigns(t *testing.T) {
	rows, err := DesignRows()
	require.NoError(t, err)
	n := 0
	for _, d := range system.Designs() {
		for _, m := range d.Modes {
			r := rows[n]
			assert.Equal(t, d.Name, r.Design)
			assert.Equal(t, d.System, r.System)
			assert.Equal(t, m.Guard, r.Guard)
			assert.Equal(t, m.Storage, r.Config.Storage)
			n++
		}
	}
	assert.Len(t, rows, n)
	for _, r := range rows {
		if r.Config.Storage == storage.Unfenced {
			assert.NotContains(t, strings.ToLower(r.Guard), "fencing", r.Design)
		}
	}
}
