package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/sweep"
)

type matrixFlags struct {
	preset, out, resume string
	systems, columns    []string
	budget, clients     int
	pairs               int
	simTime             time.Duration
	jobs                int
	progress            progressMode
}

// matrixLong is `locklab matrix --help`; it shows each preset's settings as
// the code defines them.
func matrixLong() string {
	var presets strings.Builder
	for _, p := range sweep.MatrixPresets() {
		fmt.Fprintf(&presets, "  %-7s %s;\n          every single-fault placement and %d pairs of them, then %d guided runs per cell at most,\n          each at least %v (fitted to each row's timeouts) with %d clients; rows of runs longer than %v make\n          proportionally fewer guided runs; cost from %d fault-free runs per row; each finding shrunk in at most %d runs\n",
			p.Name, p.Doc, p.Pairs, p.Budget, p.Time, p.Clients, sweep.GuidedRunTime, p.CostRuns, p.ShrinkRuns)
	}
	return `matrix decides the safety matrix: for every row (a lock design in one storage mode) and every
fault family (` + strings.Join(sweep.SearchColumns(), ", ") + `), a search aimed at that
cell in two parts. First systematic: every single fault of the family over a stated, bounded set
of placements — started right after a client's acquire or read in each of its first sections,
ended at another client's acquire, read (a few milliseconds either side) or write, or lasting
just short of, just past and 1.5x each timeout the design declares — then pairs of them; the
runs of each row are long enough for its timeouts (lease + lock-delay, a drift past the TTL).
Then a guided search (the guided explorer restricted to the family: faults placed on the lock's
protocol with durations drawn around the system's timing), up to a budget of runs.

The search of a cell goes on after a broken lock, fencing tokens out of order or a liveness
failure, looking for corrupted data, and stops at the first corruption. Each first finding of a
kind is shrunk to its fewest faults, told in one sentence, and written as a run directory
(runs/<row>-<family>-<kind>/) with the command that replays it byte for byte. A cell without a
violation states its evidence: its runs, the runs in which a fault of the family actually fired
(runs where none fired are counted apart and are no evidence), the largest fault relative to
the system's timing, and the 95% upper bound on the per-run rate of corruption. It never says
"safe": "no violation found in N runs".

Presets (flags given override their settings):
` + presets.String() + `
Every cell is deterministic from its row and column: the matrix is the same for any -j and
however often it is interrupted. Each finished cell is one fsync'd line of DIR/cells.jsonl;
started again with the same arguments (or --resume DIR) the matrix searches only the cells the
journal lacks. While it runs the directory is locked (DIR/sweep.lock): a second matrix of it is
refused (exit 2). It writes DIR/matrix.html (which designs kept the data intact under each fault
model, cheapest first, and the full table with every cell's evidence), DIR/safety-cost.png and
.svg, DIR/matrix.json, DIR/matrix.txt (the table, every cell's evidence and findings) and prints
the table. The default DIR is sweeps/matrix-<settings fingerprint>.

Exit codes: 0 the matrix is complete (whatever it says); 2 usage error, a directory of other
settings or in use; 4 a failure.`
}

func newMatrixCmd() *cobra.Command {
	f := matrixFlags{}
	var bar bool
	def := sweep.MatrixPresets()[0]
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "The safety matrix: every design under every fault family, each cell decided by a guided search with its evidence",
		Long:  matrixLong(),
		Example: `  locklab matrix
  locklab matrix --system redis,zookeeper --columns pause,random --budget 1000
  locklab matrix --preset full -j 2 --out sweeps/full
  locklab matrix --resume sweeps/full`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.progress = progressOf(cmd, bar)
			return runMatrix(cmd, f)
		},
	}
	fl := cmd.Flags()
	var names []string
	for _, p := range sweep.MatrixPresets() {
		names = append(names, p.Name)
	}
	fl.StringVar(&f.preset, "preset", def.Name, "the rows and settings: "+strings.Join(names, " or ")+" (see above)")
	fl.IntVar(&f.budget, "budget", def.Budget, "guided runs per cell at most, after the placements (overrides the preset's)")
	fl.IntVar(&f.pairs, "pairs", def.Pairs, "pairs of placements per cell, after the single ones (overrides the preset's; 0: none)")
	fl.DurationVar(&f.simTime, "time", def.Time, "simulated duration of each run (overrides the preset's)")
	fl.IntVar(&f.clients, "clients", def.Clients, "clients of each run (overrides the preset's)")
	fl.StringSliceVar(&f.systems, "system", nil, "only the rows of these systems (default: all)")
	fl.StringSliceVar(&f.columns, "columns", nil, "fault families (default: "+strings.Join(sweep.SearchColumns(), ",")+")")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "cells searched at once")
	fl.StringVar(&f.out, "out", "", "matrix directory (default sweeps/matrix-<fingerprint>: the same arguments resume the same matrix)")
	fl.StringVar(&f.resume, "resume", "", "finish the matrix in this directory with its own settings (no other settings flags)")
	cellProgressFlag(fl, &bar)
	return cmd
}

// config builds the matrix the flags describe.
func (f matrixFlags) config(cmd *cobra.Command) (sweep.SearchConfig, error) {
	changed := cmd.Flags().Changed
	p, err := sweep.FindMatrixPreset(f.preset)
	if err != nil {
		return sweep.SearchConfig{}, usage("--preset: %v", err)
	}
	if changed("budget") {
		if f.budget < 1 {
			return sweep.SearchConfig{}, usage("--budget %d: want at least 1 run per cell", f.budget)
		}
		p.Budget = f.budget
	}
	if changed("pairs") {
		if f.pairs < 0 {
			return sweep.SearchConfig{}, usage("--pairs %d: want 0 or more pairs per cell", f.pairs)
		}
		p.Pairs = f.pairs
	}
	if changed("time") {
		if f.simTime <= 0 {
			return sweep.SearchConfig{}, usage("--time %v: must be positive", f.simTime)
		}
		p.Time = f.simTime
	}
	if changed("clients") {
		if f.clients < 1 || f.clients > 1000 {
			return sweep.SearchConfig{}, usage("--clients %d: want 1..1000", f.clients)
		}
		p.Clients = f.clients
	}
	for _, col := range f.columns {
		if !slices.Contains(sweep.SearchColumns(), col) {
			return sweep.SearchConfig{}, usage("--columns: %v", suggest.Unknown("fault family", col, sweep.SearchColumns()))
		}
	}
	c, err := p.Config()
	if err != nil {
		return c, err
	}
	if len(f.columns) > 0 {
		c.Columns = slices.Compact(slices.Clone(f.columns))
	}
	if err := knownSystems(f.systems); err != nil {
		return c, err
	}
	if c, err = c.Only(f.systems); err != nil {
		return c, usage("--system: %v", err)
	}
	if err := c.Validate(); err != nil {
		return c, usageError{err}
	}
	return c, nil
}

func runMatrix(cmd *cobra.Command, f matrixFlags) error {
	if f.jobs < 1 {
		return usage("-j %d: want at least 1", f.jobs)
	}
	var c sweep.SearchConfig
	dir := f.out
	if f.resume != "" {
		for _, fl := range []string{"preset", "budget", "pairs", "time", "clients", "system", "columns", "out"} {
			if cmd.Flags().Changed(fl) {
				return usage("--resume takes the settings from %s: --%s cannot change them", filepath.Join(f.resume, sweep.SearchManifestFile), fl)
			}
		}
		var err error
		if c, err = sweep.ReadSearchConfig(f.resume); err != nil {
			return usageError{err}
		}
		dir = f.resume
	} else {
		var err error
		if c, err = f.config(cmd); err != nil {
			return err
		}
	}
	if dir == "" {
		dir = filepath.Join(defaultSweepsDir, "matrix-"+c.Fingerprint())
	}
	errOut := cmd.ErrOrStderr()
	fmt.Fprintf(errOut, "matrix %s: %d rows × %d fault families = %d cells, each every single-fault placement of its family, %d pairs of them and up to %d guided runs, runs of at least %v (fitted to each row's timeouts) with %d clients, on %d workers\n",
		dir, len(c.Rows), len(c.Columns), len(c.Rows)*len(c.Columns), c.Pairs, c.Budget, time.Duration(c.Time), c.Clients, f.jobs)
	start := time.Now()
	prog := newMatrixProgress(errOut, f.progress)
	m, err := sweep.SearchMatrix(c, sweep.SearchOptions{Dir: dir, Jobs: f.jobs, Progress: prog})
	prog.finish()
	if err != nil {
		return sweepError(err)
	}
	wall := time.Since(start)
	out := cmd.OutOrStdout()
	if err := sweep.WriteSearchedText(out, m, false); err != nil {
		return err
	}
	ran := prog.runs.Load()
	fmt.Fprintf(out, "\n%s simulated runs in %v (%.0f runs/s); %d cells searched now, %d recorded before\n", thousands(ran),
		wall.Round(time.Second), float64(ran)/max(wall.Seconds(), 1e-9), prog.searched, prog.before)
	fmt.Fprintf(out, "every cell's evidence and findings: %s\nmatrix: %s\n", filepath.Join(dir, sweep.MatrixText), filepath.Join(dir, sweep.MatrixJSON))
	return nil
}

// matrixProgress shows a matrix's progress: a bar of cells on a terminal
// (with the runs, their rate and the time left), or a line per finished
// cell.
type matrixProgress struct {
	w     io.Writer
	mode  progressMode
	bar   *progressbar.ProgressBar
	start time.Time
	runs  atomic.Int64
	// mu guards the bar's description, which runs and cells both update.
	mu                      sync.Mutex
	cells, before, searched int
	lastDraw                time.Time
}

func newMatrixProgress(w io.Writer, mode progressMode) *matrixProgress {
	return &matrixProgress{w: w, mode: mode}
}

func (p *matrixProgress) Start(cells, done int) {
	p.start, p.cells, p.before = time.Now(), cells, done
	if p.mode == progressBar {
		p.bar = progressbar.NewOptions(cells, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("cells"), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
		_ = p.bar.Set(done)
	}
	if done > 0 && p.mode != progressNone {
		fmt.Fprintf(p.w, "matrix: resuming: %d of %d cells recorded before\n", done, cells)
	}
}

// describe is the runs so far and their rate.
func (p *matrixProgress) describe() string {
	n := p.runs.Load()
	return fmt.Sprintf("%s runs, %.0f runs/s", thousands(n), float64(n)/max(time.Since(p.start).Seconds(), 1e-9))
}

func (p *matrixProgress) Run() {
	p.runs.Add(1)
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.lastDraw) >= 200*time.Millisecond {
		p.lastDraw = time.Now()
		p.bar.Describe(p.describe())
	}
}

func (p *matrixProgress) Cell(row sweep.SearchedRow, cell sweep.SearchedCell) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.searched++
	done := p.before + p.searched
	switch p.mode {
	case progressBar:
		p.bar.Describe(p.describe())
		_ = p.bar.Add(1)
	case progressLines:
		elapsed := time.Since(p.start)
		eta := ""
		if done < p.cells {
			eta = fmt.Sprintf(", about %v left", time.Duration(float64(elapsed)/float64(p.searched)*float64(p.cells-done)).Round(time.Second))
		}
		fmt.Fprintf(p.w, "matrix: %d/%d cells, %s%s: %s · %s × %s: %s\n", done, p.cells, p.describe(), eta,
			row.Design, row.Storage, cell.Column, cell.Evidence.Line)
	}
}

func (p *matrixProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
