package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// Files of a sweep directory.
const (
	// ManifestFile holds the grid, its fingerprint and the shard.
	ManifestFile = "sweep.json"
	// RecordsFile holds the records in the grid's order, written when the
	// sweep (or merge) completes.
	RecordsFile = "records.jsonl"
	// RunsDir holds the kept run directories.
	RunsDir = "runs"
)

// Keep says which runs get a full run directory.
type Keep string

// Keep values.
const (
	// KeepFailures keeps the first failing seed of each cell (the default).
	KeepFailures Keep = "failures"
	// KeepAll keeps every run.
	KeepAll Keep = "all"
	// KeepNone keeps none.
	KeepNone Keep = "none"
)

// ParseKeep reads a --keep value.
func ParseKeep(s string) (Keep, error) {
	switch k := Keep(s); k {
	case KeepFailures, KeepAll, KeepNone:
		return k, nil
	}
	return "", fmt.Errorf("--keep %q: want all, failures or none", s)
}

// Shard is a deterministic 1/Count of a grid: the runs whose index modulo
// Count is Index. The zero Shard is the whole grid.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Has reports whether the shard runs the run at index i.
func (s Shard) Has(i int) bool { return s.Count <= 1 || i%s.Count == s.Index }

// Whole reports whether the shard is the whole grid.
func (s Shard) Whole() bool { return s.Count <= 1 }

func (s Shard) String() string {
	if s.Whole() {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Manifest is sweep.json: what a sweep directory holds.
type Manifest struct {
	Format      string `json:"format"`
	Fingerprint string `json:"fingerprint"`
	Shard       Shard  `json:"shard"`
	Grid        Grid   `json:"grid"`
}

// manifestFormat names the manifest's format.
const manifestFormat = "locklab-sweep/1"

// Progress is told what a sweep does. Methods are called from one goroutine.
type Progress interface {
	// Start: total runs in the shard, done of them already recorded.
	Start(total, done int)
	// Done: a run finished.
	Done(run Run, rec Record)
	// Cell: every run of a cell in this shard has finished; violated of n
	// seeds showed a safety violation.
	Cell(row Row, column string, violated, n int)
}

// Options configure a sweep.
type Options struct {
	// Dir is the sweep directory.
	Dir string
	// Jobs is the number of worlds run at once. Default GOMAXPROCS.
	Jobs int
	// Shard selects the runs of this process.
	Shard Shard
	// Keep says which runs keep a run directory (KeepAll is done during the
	// sweep; KeepFailures when the matrix is written).
	Keep Keep
	// Progress, when set, is told of each finished run and cell.
	Progress Progress
	// Stop, when closed, ends the sweep after the runs under way (for
	// tests of resumption); nil: never.
	Stop <-chan struct{}
}

// ErrStopped is returned when Options.Stop ended a sweep early.
var ErrStopped = errors.New("sweep stopped before it finished")

// GridMismatchError says that a directory holds a sweep of another grid or
// shard.
type GridMismatchError struct{ Dir, Why string }

func (e *GridMismatchError) Error() string {
	return fmt.Sprintf("%s holds %s: give another --out, or --resume %s to finish that sweep", e.Dir, e.Why, e.Dir)
}

// ReadManifest reads dir's sweep.json.
func ReadManifest(dir string) (Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return Manifest{}, fmt.Errorf("sweep directory: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Format != manifestFormat {
		return Manifest{}, fmt.Errorf("%s: format %q, want %q", filepath.Join(dir, ManifestFile), m.Format, manifestFormat)
	}
	if m.Fingerprint != m.Grid.Fingerprint() {
		return Manifest{}, fmt.Errorf("%s: the fingerprint does not match its grid (edited by hand?)", filepath.Join(dir, ManifestFile))
	}
	return m, nil
}

// prepareDir creates dir with its manifest, or checks that the manifest there
// is the same grid and shard (a resume).
func prepareDir(dir string, m Manifest) error {
	old, err := ReadManifest(dir)
	switch {
	case err == nil:
		if old.Fingerprint != m.Fingerprint {
			return &GridMismatchError{Dir: dir, Why: "a sweep of another grid (fingerprint " + old.Fingerprint + ", this one " + m.Fingerprint + ")"}
		}
		if old.Shard != m.Shard {
			return &GridMismatchError{Dir: dir, Why: "shard " + old.Shard.String() + " of this grid, not " + m.Shard.String()}
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if entries, err := os.ReadDir(dir); err == nil && slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() != LockFile }) {
		return &GridMismatchError{Dir: dir, Why: "other files (no " + ManifestFile + ")"}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep directory: %w", err)
	}
	return writeJSON(filepath.Join(dir, ManifestFile), m)
}

func writeJSON(path string, v any) error {
	return reports.WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// removeLeftovers removes what a killed sweep leaves half written: the
// run directories being written or swapped (runs/.<name>.new-* and
// .<name>.old-*) and the temporary files of atomic writes (.<file>.tmp-*).
// The directory must be locked. A run whose directory is removed has no
// record (its record is appended after its directory is written) or is a
// kept failure that Finish writes again.
func removeLeftovers(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, RunsDir)} {
		entries, err := os.ReadDir(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sweep directory: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, ".") || !(strings.Contains(name, ".new-") || strings.Contains(name, ".old-") || strings.Contains(name, ".tmp-")) {
				continue
			}
			if err := os.RemoveAll(filepath.Join(d, name)); err != nil {
				return fmt.Errorf("removing what a killed sweep left: %w", err)
			}
		}
	}
	return nil
}

// span locates a run's line in a journal (len 0: not recorded).
type span struct {
	off int64
	len int32
}

// Sweep runs the shard's runs of the grid that dir's journal does not hold
// yet, on o.Jobs workers, appending each record to the journal as it
// finishes; then it writes records.jsonl (the shard's records in grid order).
// It returns the number of runs it ran. It holds the directory locked
// (LockDir): a second sweep of the same directory is refused with a
// *LockedError naming the first one's pid.
func Sweep(g Grid, o Options) (int, error) {
	if o.Keep == "" {
		o.Keep = KeepFailures
	}
	m := Manifest{Format: manifestFormat, Fingerprint: g.Fingerprint(), Shard: o.Shard, Grid: g}
	spans := make([]span, g.NumRuns())
	journalPath := filepath.Join(o.Dir, JournalFile)
	var ran int
	err := journaled(o.Dir, func() error { return prepareDir(o.Dir, m) }, JournalFile, func(line []byte, off int64) error {
		i, _, err := parseRecord(g, line)
		if err != nil {
			return err
		}
		if spans[i].len == 0 {
			spans[i] = span{off, int32(len(line))}
			return nil
		}
		// A run is deterministic: recorded twice, it is recorded the same.
		prev, err := readSpan(journalPath, spans[i])
		if err != nil {
			return err
		}
		if !bytes.Equal(prev, line) {
			return fmt.Errorf("run %s is recorded before (at byte %d) differently", g.RunAt(i).ID, spans[i].off)
		}
		return nil
	}, func(j *journal) (err error) {
		ran, err = sweepPending(g, o, spans, j)
		return err
	}, func() error {
		return writeRecords(filepath.Join(o.Dir, RecordsFile), g, o.Shard, func(i int) ([]byte, error) {
			return readSpan(journalPath, spans[i])
		})
	})
	return ran, err
}

// sweepPending runs the shard's runs that spans do not locate yet,
// appending each record to j and locating it in spans, and tells
// o.Progress of every run and cell.
func sweepPending(g Grid, o Options, spans []span, j *journal) (int, error) {
	var pending []int
	total, done := 0, 0
	cellLeft := make([]int, len(g.Rows)*len(g.Columns))
	cellViolated := make([]int, len(cellLeft))
	cellN := make([]int, len(cellLeft))
	for i := range spans {
		if !o.Shard.Has(i) {
			continue
		}
		total++
		cellN[i/g.Seeds]++
		if spans[i].len > 0 {
			done++
			continue
		}
		pending = append(pending, i)
		cellLeft[i/g.Seeds]++
	}
	if o.Progress != nil {
		o.Progress.Start(total, done)
	}
	return runPool(g, o, pending, func(r Run, rec Record) error {
		sp, err := j.appendJSON(rec)
		if err != nil {
			return err
		}
		spans[r.Index] = sp
		cell := r.Index / g.Seeds
		if rec.Violated() {
			cellViolated[cell]++
		}
		if o.Progress != nil {
			o.Progress.Done(r, rec)
			if cellLeft[cell]--; cellLeft[cell] == 0 {
				o.Progress.Cell(g.Rows[r.Row], r.Column, cellViolated[cell], cellN[cell])
			}
		}
		return nil
	})
}

// sweepGCPercent is the garbage collector's target while a sweep runs. A
// world allocates quickly but keeps little (a sweep's live heap is ~30 MB
// and flat), so at the default 100 the collector's background work takes a
// large share of the CPU — at -j 1 it runs on the otherwise idle cores, at
// -j N it competes with the worlds, which cost a third of the throughput of
// -j 2 on two cores. At 800 the heap peaks at a few hundred MB and -j 2 runs
// at ~94% of twice -j 1 (BenchmarkSweep).
const sweepGCPercent = 800

// sweepMemoryLimit caps the heap the higher GC percent allows: past it the
// collector works harder rather than the heap growing.
const sweepMemoryLimit = 1 << 30

// TuneGC sets the collector for a sweep — or any command that runs many
// simulated worlds one after another, such as explore and shrink — unless the
// user set GOGC or GOMEMLIMIT, and returns the function that restores the
// settings.
func TuneGC() (restore func()) {
	var undo []func()
	if os.Getenv("GOGC") == "" {
		old := debug.SetGCPercent(sweepGCPercent)
		undo = append(undo, func() { debug.SetGCPercent(old) })
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		old := debug.SetMemoryLimit(sweepMemoryLimit)
		undo = append(undo, func() { debug.SetMemoryLimit(old) })
	}
	return func() {
		for _, f := range undo {
			f()
		}
	}
}

func readSpan(path string, s span) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, s.len)
	if _, err := f.ReadAt(b, s.off); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// writeRecords writes the shard's records in grid order; line gives run i's
// record line.
func writeRecords(path string, g Grid, shard Shard, line func(i int) ([]byte, error)) error {
	return reports.WriteFileAtomic(path, func(w io.Writer) error {
		for i := range g.NumRuns() {
			if !shard.Has(i) {
				continue
			}
			b, err := line(i)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(b, '\n')); err != nil {
				return err
			}
		}
		return nil
	})
}

// runPool runs the pending runs on o.Jobs workers and hands each record to
// done, in the order they finish, from the calling goroutine. Results are
// buffered so that workers go on while done fsyncs the journal.
func runPool(g Grid, o Options, pending []int, done func(Run, Record) error) (int, error) {
	runs := make([]Run, len(pending))
	for i, p := range pending {
		runs[i] = g.RunAt(p)
	}
	return pool(runs, o.Jobs, 4, o.Stop, func(r Run) (Record, error) { return runOne(g, o, r) }, done)
}

// runOne runs one world and condenses it; with KeepAll it also writes the
// run's directory.
func runOne(g Grid, o Options, r Run) (Record, error) {
	t := g.Test(r)
	res, err := harness.Run(t)
	if err != nil {
		if errors.Is(err, harness.ErrCrash) {
			return Record{ID: r.ID, Overall: "unknown", Crash: oneLine(err.Error())}, nil
		}
		return Record{}, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if o.Keep == KeepAll {
		dir := filepath.Join(o.Dir, RunDir(g, r))
		if err := reports.WriteDir(dir, judge.Report(res, ReplayCommand(t, dir))); err != nil {
			return Record{}, fmt.Errorf("run %s: %w", r.ID, err)
		}
	}
	rec := NewRecord(r.ID, res)
	res.Release() // the record is all the sweep keeps
	return rec, nil
}

// RunDir is the run's directory, relative to the sweep directory.
func RunDir(g Grid, r Run) string {
	return filepath.Join(RunsDir, fmt.Sprintf("%s-%s-seed%d", g.Rows[r.Row].ID, r.Column, r.Seed))
}

// ReplayCommand is the `locklab run` command that replays test t into dir.
func ReplayCommand(t scenario.Test, dir string) string {
	args := append([]string{"locklab", "run"}, t.Args()...)
	args = append(args, "--out", dir)
	return shellJoin(args)
}

// shellJoin joins a command's words, each quoted for a POSIX shell when it
// needs it.
func shellJoin(args []string) string {
	args = slices.Clone(args)
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			args[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(args, " ")
}
