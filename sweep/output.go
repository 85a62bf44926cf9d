package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

// Output files of a finished sweep.
const (
	MatrixJSON = "matrix.json"
	MatrixCSV  = "matrix.csv"
	MatrixHTML = "matrix.html"
	// PlotName is the safety-vs-cost plot (PlotName.png and PlotName.svg).
	PlotName = "safety-cost"
)

// Finish writes a finished sweep directory's matrix: it builds the matrix
// from records.jsonl, keeps the run directory of each cell's first failing
// seed (rerunning it, on jobs workers, unless keep is KeepNone or the
// directory is there already), and writes matrix.json, matrix.csv,
// matrix.html and the plot. It holds the directory locked (LockDir).
func Finish(dir string, keep Keep, jobs int) (Matrix, error) {
	if _, err := ReadManifest(dir); err != nil {
		return Matrix{}, err
	}
	unlock, err := LockDir(dir)
	if err != nil {
		return Matrix{}, err
	}
	defer unlock()
	if err := removeLeftovers(dir); err != nil {
		return Matrix{}, err
	}
	mx, err := BuildMatrix(dir)
	if err != nil {
		return Matrix{}, err
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return Matrix{}, err
	}
	if err := keepFailures(dir, m.Grid, mx, keep, jobs); err != nil {
		return Matrix{}, err
	}
	for r := range mx.Rows {
		for c := range mx.Rows[r].Cells {
			f := mx.Rows[r].Cells[c].First
			if f != nil && !isRunDir(filepath.Join(dir, f.Dir)) {
				f.Dir = ""
			}
		}
	}
	if err := writeJSON(filepath.Join(dir, MatrixJSON), mx); err != nil {
		return mx, err
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, MatrixCSV), func(w io.Writer) error { return writeCSV(w, mx) }); err != nil {
		return mx, err
	}
	png, svg, err := plotSafetyCost(mx)
	if err != nil {
		return mx, err
	}
	for name, b := range map[string][]byte{PlotName + ".png": png, PlotName + ".svg": svg} {
		if err := reports.WriteFileAtomic(filepath.Join(dir, name), func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return mx, err
		}
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, MatrixHTML), func(w io.Writer) error { return writeHTML(w, mx, png) }); err != nil {
		return mx, err
	}
	return mx, nil
}

func isRunDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "results.json"))
	return err == nil
}

// keepFailures writes the run directory of each cell's first failing seed.
func keepFailures(dir string, g Grid, mx Matrix, keep Keep, jobs int) error {
	if keep == KeepNone {
		return nil
	}
	defer TuneGC()()
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var eg errgroup.Group
	eg.SetLimit(jobs)
	for r, mr := range mx.Rows {
		for c, cell := range mr.Cells {
			if cell.First == nil || isRunDir(filepath.Join(dir, cell.First.Dir)) {
				continue
			}
			run := g.RunAt((r*len(g.Columns)+c)*g.Seeds + int(cell.First.Seed-g.FirstSeed))
			eg.Go(func() error {
				t := g.Test(run)
				res, err := harness.Run(t)
				if err != nil {
					return fmt.Errorf("keeping run %s: %w", run.ID, err)
				}
				out := filepath.Join(dir, cell.First.Dir)
				if err := reports.WriteDir(out, judge.Report(res, ReplayCommand(t, cell.First.Dir))); err != nil {
					return fmt.Errorf("keeping run %s: %w", run.ID, err)
				}
				return nil
			})
		}
	}
	return eg.Wait()
}

// writeCSV writes one line per row and column.
func writeCSV(w io.Writer, mx Matrix) error {
	cw := csv.NewWriter(w)
	header := []string{"row_id", "design", "storage", "column", "state", "seeds", "violated", "corrupted", "lock_broke",
		"unknown", "liveness_failed", "failing_checks", "acquire_success", "stall_max_ms", "first_seed", "first_reason",
		"replay", "run_dir", "baseline_acquire_p50_ms", "baseline_acquire_p99_ms", "baseline_cs_per_s", "baseline_messages_per_acquire"}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for _, mr := range mx.Rows {
		var cost []string
		if mr.Cost != nil {
			cost = []string{f(mr.Cost.AcquireP50MS), f(mr.Cost.AcquireP99MS), f(mr.Cost.CSPerSecond), f(mr.Cost.MessagesPerAcquire)}
		} else {
			cost = []string{"", "", "", ""}
		}
		for _, c := range mr.Cells {
			var checks []string
			for _, k := range slices.Sorted(maps.Keys(c.FailingChecks)) {
				checks = append(checks, fmt.Sprintf("%s:%d", k, c.FailingChecks[k]))
			}
			first := []string{"", "", "", ""}
			if c.First != nil {
				first = []string{strconv.FormatUint(c.First.Seed, 10), c.First.Reason, c.First.Replay, c.First.Dir}
			}
			rec := []string{mr.Row.ID, mr.Row.Design, mr.Row.Storage, c.Column, c.State, strconv.Itoa(c.Seeds),
				strconv.Itoa(c.Violated), strconv.Itoa(c.Corrupted), strconv.Itoa(c.LockBroke), strconv.Itoa(c.Unknown),
				strconv.Itoa(c.LivenessFailed), strings.Join(checks, " "), f(c.AcquireSuccess), f(c.StallMaxMS)}
			rec = append(append(rec, first...), cost...)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
