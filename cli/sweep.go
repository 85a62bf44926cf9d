package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/locklab/locklab/sweep"
	"github.com/locklab/locklab/system"
)

// defaultSweepsDir holds the sweep directories of sweeps without --out (the
// repository's .gitignore ignores it).
const defaultSweepsDir = "sweeps"

type sweepFlags struct {
	preset, gridFile, seeds, shard, resume, keep, out string
	systems, columns                                  []string
	first                                             uint64
	simTime                                           time.Duration
	jobs, shards                                      int
	progress                                          progressMode
}

// Presets of `locklab sweep --preset`.
var sweepPresets = map[string]struct {
	seeds   int
	simTime time.Duration
	doc     string
}{
	// matrix is the random grid `locklab matrix` ran before it searched
	// each cell: 2 random seeds of 20 s per cell, a handful of draws (see
	// `locklab matrix` for the safety matrix). 20 s runs keep the
	// differences between unfenced, fenced and fenced+reads; 10 s runs
	// lose them.
	"matrix": {seeds: 2, simTime: 20 * time.Second, doc: "every design under every fault family, 2 random seeds of 20s (the safety matrix is locklab matrix)"},
	"full":   {seeds: 20, simTime: 60 * time.Second, doc: "the same with 20 seeds of 60s"},
}

const sweepLong = `sweep runs a grid: rows (a lock design — a system with options — in a storage mode:
unfenced, fenced, or fenced with fenced reads) × columns (fault families: ` + "none, pause, crash,\npartition, clock-jump, clock-drift, delay, random" + `) × seeds. Each is one simulated run, judged
by the usual checks. By default the rows are every registered system with its defaults and every
design among the catalog's variants, each in every storage mode it supports; --grid FILE reads
a grid from JSON instead:

  {"rows": [{"system": "redis", "system_options": {"fencing": "true"}, "storage": "fenced"},
            {"system": "raftkv"}],
   "columns": ["none", "pause", "random"], "seeds": 20, "first_seed": 1, "time": "30s"}

(a row without "storage" runs in every mode its design supports; fields left out keep the
flags' values).

Runs go to -j worker threads (default: every core); each world stays single-threaded and
deterministic, and the output does not depend on -j. Each finished run appends one line to
DIR/journal.jsonl (fsync'd in batches); started again with the same arguments (or --resume
DIR) a sweep runs only what the journal lacks, so a killed sweep loses nothing. The output
directory then holds records.jsonl (one record per run, grid order), matrix.json, matrix.csv,
matrix.html and safety-cost.png/.svg, and the run directory of each cell's first failing seed
under runs/ (--keep).

--shard i/n runs the runs whose index is i modulo n; --shard auto reads i from Kubernetes
Indexed Jobs (JOB_COMPLETION_INDEX), Slurm arrays (SLURM_ARRAY_TASK_ID) or GNU parallel
(PARALLEL_SEQ), and n from --shards or LOCKLAB_SHARDS. A shard writes no matrix: combine the
shards with 'locklab merge'.

While it runs, a sweep holds DIR/sweep.lock locked: a second sweep of the same directory is
refused (exit 2) with the first one's pid. The kernel drops the lock however the first one
ends, so a killed sweep is resumed by the same command.

Exit codes: 0 the sweep finished (whatever the matrix says); 2 usage error, a directory of
another grid or in use by another sweep; 4 a failure (a damaged journal: the message says
how to repair it).`

func newSweepCmd() *cobra.Command {
	return sweepCommand("sweep", "Run every design under every fault family over many random seeds (a grid of seeds; the searched safety matrix is locklab matrix)", "")
}

func sweepCommand(name, short, preset string) *cobra.Command {
	f := sweepFlags{preset: preset}
	var bar bool
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Long:  sweepLong,
		Example: `  locklab sweep --preset matrix -j 2 --out sweeps/m
  locklab sweep --system redis,redlock --columns none,pause,random --seeds 50 --time 30s
  locklab sweep --grid grid.json --shard auto --shards 4 --out shard-$PARALLEL_SEQ
  locklab sweep --resume sweeps/m`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.progress = progressOf(cmd, bar)
			return runSweep(cmd, f)
		},
	}
	fl := cmd.Flags()
	if preset == "" {
		fl.StringVar(&f.preset, "preset", "", "a named grid: matrix (2 random seeds of 20s per cell) or full (20 seeds of 60s); flags given override its seeds and time")
	}
	fl.StringVar(&f.gridFile, "grid", "", "a grid file (JSON) instead of the catalog's rows")
	fl.StringSliceVar(&f.systems, "system", nil, "only the rows of these systems (default: all)")
	fl.StringSliceVar(&f.columns, "columns", nil, "fault families (default: "+strings.Join(sweep.Columns(), ",")+")")
	fl.StringVar(&f.seeds, "seeds", "10", "seeds per cell: N (from --first-seed) or a range A..B")
	fl.Uint64Var(&f.first, "first-seed", 1, "the first seed of --seeds N")
	fl.DurationVar(&f.simTime, "time", 60*time.Second, "simulated duration of each run")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "worlds run at once")
	fl.StringVar(&f.shard, "shard", "", "run one shard of the grid: i/n (0 <= i < n) or auto")
	fl.IntVar(&f.shards, "shards", 0, "the number of shards of --shard auto (default: LOCKLAB_SHARDS or SLURM_ARRAY_TASK_COUNT)")
	fl.StringVar(&f.resume, "resume", "", "finish the sweep in this directory with its own grid (no other grid flags)")
	fl.StringVar(&f.keep, "keep", "failures", "full run directories to keep: failures (each cell's first failing seed), all or none")
	fl.StringVar(&f.out, "out", "", "sweep directory (default sweeps/<grid fingerprint>[-shard-i-of-n]: the same arguments resume the same sweep)")
	cellProgressFlag(fl, &bar)
	return cmd
}

// grid builds the grid the flags describe.
func (f sweepFlags) grid(cmd *cobra.Command) (sweep.Grid, error) {
	changed := cmd.Flags().Changed
	g := sweep.Grid{Columns: sweep.Columns(), FirstSeed: f.first, Time: sweep.Duration(f.simTime)}
	seeds := f.seeds
	if p, ok := sweepPresets[f.preset]; ok {
		if !changed("seeds") {
			seeds = strconv.Itoa(p.seeds)
		}
		if !changed("time") {
			g.Time = sweep.Duration(p.simTime)
		}
	} else if f.preset != "" {
		return g, usage("--preset %q: want matrix or full", f.preset)
	}
	if a, b, ok := strings.Cut(seeds, ".."); ok {
		lo, err1 := strconv.ParseUint(a, 10, 64)
		hi, err2 := strconv.ParseUint(b, 10, 64)
		if err1 != nil || err2 != nil || hi < lo || changed("first-seed") {
			return g, usage("--seeds %q: want N or a range A..B with A <= B (not with --first-seed)", seeds)
		}
		g.FirstSeed, g.Seeds = lo, int(hi-lo+1)
	} else {
		n, err := strconv.Atoi(seeds)
		if err != nil || n < 1 {
			return g, usage("--seeds %q: want a number of seeds >= 1 or a range A..B", seeds)
		}
		g.Seeds = n
	}
	if g.Time <= 0 {
		return g, usage("--time %v: must be positive", time.Duration(g.Time))
	}
	if len(f.columns) > 0 {
		g.Columns = f.columns
	}
	rows, err := sweep.CatalogRows()
	if err != nil {
		return g, err
	}
	g.Rows = rows
	if f.gridFile != "" {
		if g, err = sweep.ReadGridFile(f.gridFile, g); err != nil {
			return g, usageError{err}
		}
	}
	if err := knownSystems(f.systems); err != nil {
		return g, err
	}
	if len(f.systems) > 0 {
		var keep []sweep.Row
		for _, r := range g.Rows {
			for _, s := range f.systems {
				if r.Config.System == s {
					keep = append(keep, r)
				}
			}
		}
		if len(keep) == 0 {
			return g, usage("--system %s: no row of the grid runs these systems", strings.Join(f.systems, ","))
		}
		g.Rows = keep
	}
	if err := g.Validate(); err != nil {
		return g, usageError{err}
	}
	return g, nil
}

func runSweep(cmd *cobra.Command, f sweepFlags) error {
	keep, err := sweep.ParseKeep(f.keep)
	if err != nil {
		return usageError{err}
	}
	if f.jobs < 1 {
		return usage("-j %d: want at least 1", f.jobs)
	}
	var shard sweep.Shard
	switch {
	case f.shard == "auto":
		if shard, err = sweep.AutoShard(f.shards, os.Getenv); err != nil {
			return usageError{err}
		}
	case f.shard != "":
		if shard, err = sweep.ParseShard(f.shard); err != nil {
			return usageError{err}
		}
	}
	var g sweep.Grid
	dir := f.out
	if f.resume != "" {
		for _, fl := range []string{"preset", "grid", "system", "columns", "seeds", "first-seed", "time", "out"} {
			if cmd.Flags().Lookup(fl) != nil && cmd.Flags().Changed(fl) {
				return usage("--resume takes the grid from %s: --%s cannot change it", filepath.Join(f.resume, sweep.ManifestFile), fl)
			}
		}
		m, err := sweep.ReadManifest(f.resume)
		if err != nil {
			return usageError{err}
		}
		g, dir = m.Grid, f.resume
		if f.shard == "" {
			shard = m.Shard
		}
	} else if g, err = f.grid(cmd); err != nil {
		return err
	}
	if dir == "" {
		dir = filepath.Join(defaultSweepsDir, g.Fingerprint())
		if !shard.Whole() {
			dir += fmt.Sprintf("-shard-%d-of-%d", shard.Index, shard.Count)
		}
	}
	errOut := cmd.ErrOrStderr()
	total := 0
	for i := range g.NumRuns() {
		if shard.Has(i) {
			total++
		}
	}
	fmt.Fprintf(errOut, "sweep %s: %d rows × %d fault families × %d seeds of %v = %d runs (shard %s: %d) on %d workers\n",
		dir, len(g.Rows), len(g.Columns), g.Seeds, time.Duration(g.Time), g.NumRuns(), shard, total, f.jobs)
	// The directory stays locked from the first run to the matrix: a second
	// sweep of it is refused, naming this one.
	unlock, err := sweep.LockDir(dir)
	if err != nil {
		return sweepError(err)
	}
	defer unlock()
	start := time.Now()
	prog := newSweepProgress(errOut, f.progress, len(g.Rows)*len(g.Columns))
	ran, err := sweep.Sweep(g, sweep.Options{Dir: dir, Jobs: f.jobs, Shard: shard, Keep: keep, Progress: prog})
	prog.finish()
	if err != nil {
		return sweepError(err)
	}
	wall := time.Since(start)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%d runs in %v (%.1f runs/s), %d recorded before\n", ran, wall.Round(time.Millisecond),
		float64(ran)/wall.Seconds(), total-ran)
	if !shard.Whole() {
		fmt.Fprintf(out, "shard %s done: %s\nmerge the shards: locklab merge --out DIR %s ...\n", shard, dir, dir)
		return nil
	}
	return finishMatrix(out, dir, keep, f.jobs)
}

// sweepError is the exit of a sweep that could not start or go on: a
// directory of another grid, or one another sweep is writing, is refused as a
// usage error (exit 2); anything else is a failure (exit 4).
func sweepError(err error) error {
	var gm *sweep.GridMismatchError
	var le *sweep.LockedError
	if errors.As(err, &gm) || errors.As(err, &le) {
		return usageError{err}
	}
	return err
}

// finishMatrix writes the matrix of a complete sweep directory and prints
// its verdicts.
func finishMatrix(out io.Writer, dir string, keep sweep.Keep, jobs int) error {
	mx, err := sweep.Finish(dir, keep, jobs)
	if err != nil {
		return err
	}
	for _, v := range mx.Verdicts {
		fmt.Fprintln(out, v)
	}
	fmt.Fprintf(out, "matrix: %s\n", filepath.Join(dir, sweep.MatrixHTML))
	return nil
}

func newMergeCmd() *cobra.Command {
	var out, keep string
	var jobs int
	cmd := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Combine the shards of a sweep (or interrupted sweeps of one grid) and write the matrix",
		Long: `merge reads the journals of sweep directories of one grid — the shards of a sharded sweep —
and writes a complete sweep directory with its matrix. It refuses directories of different
grids and an incomplete set (resume the missing shard first). A run recorded by two directories
must be recorded byte for byte the same: running a shard twice is a free determinism check.

Exit codes: 0 merged; 2 usage error, other grids or missing runs; 4 two directories disagree on
a run, or another failure.`,
		Example: `  locklab merge --out sweeps/merged shards/*`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usage("merge: give the sweep directories to merge")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := sweep.ParseKeep(keep)
			if err != nil {
				return usageError{err}
			}
			if out == "" {
				return usage("--out: give the directory of the merged sweep")
			}
			unlock, err := sweep.LockDir(out)
			if err != nil {
				return sweepError(err)
			}
			defer unlock()
			rep, err := sweep.Merge(out, args)
			var me *sweep.MismatchError
			if errors.As(err, &me) {
				return usageError{err}
			}
			if err != nil {
				return sweepError(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "merged %d runs from %d directories", rep.Runs, len(args))
			if rep.Duplicates > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "; %d runs recorded twice agree byte for byte", rep.Duplicates)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return finishMatrix(cmd.OutOrStdout(), out, k, jobs)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory of the merged sweep (required)")
	cmd.Flags().StringVar(&keep, "keep", "failures", "run directories to keep: failures (rerun each cell's first failing seed), all (as failures) or none")
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.GOMAXPROCS(0), "worlds run at once when keeping failing seeds")
	return cmd
}

// sweepProgress shows a sweep's progress: a bar on a terminal, or a line per
// finished cell.
type sweepProgress struct {
	w          io.Writer
	mode       progressMode
	bar        *progressbar.ProgressBar
	start      time.Time
	total      int
	done, ran  int
	violations int
	cells      int
	cellsDone  int
}

func newSweepProgress(w io.Writer, mode progressMode, cells int) *sweepProgress {
	return &sweepProgress{w: w, mode: mode, cells: cells}
}

func (p *sweepProgress) Start(total, done int) {
	p.start, p.total, p.done = time.Now(), total, done
	if p.mode == progressBar {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("runs"), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		_ = p.bar.Set(done)
	}
	if done > 0 && p.mode != progressNone {
		fmt.Fprintf(p.w, "sweep: resuming: %d of %d runs recorded before\n", done, total)
	}
}

func (p *sweepProgress) Done(run sweep.Run, rec sweep.Record) {
	p.done++
	p.ran++
	if rec.Violated() {
		p.violations++
	}
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%d violations", p.violations))
		_ = p.bar.Add(1)
	}
}

func (p *sweepProgress) Cell(row sweep.Row, column string, violated, n int) {
	p.cellsDone++
	if p.mode != progressLines {
		return
	}
	elapsed := time.Since(p.start)
	rate := float64(p.ran) / elapsed.Seconds()
	eta := ""
	if rate > 0 && p.done < p.total {
		eta = fmt.Sprintf(", %v left", time.Duration(float64(p.total-p.done)/rate*float64(time.Second)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "sweep: %s × %s: %d/%d seeds violated; %d/%d runs, %.0f runs/s%s, %d violations so far\n",
		row.Name, column, violated, n, p.done, p.total, rate, eta, p.violations)
}

func (p *sweepProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// knownSystems refuses a --system name no system is registered under, with
// the registry's suggestion ("did you mean "redis"?").
func knownSystems(names []string) error {
	for _, n := range names {
		if _, err := system.Find(n); err != nil {
			return usage("--system: %v", err)
		}
	}
	return nil
}
