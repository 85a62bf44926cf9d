package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/reports/browser"
)

type reportFlags struct {
	index      bool
	screenshot bool
	browser    string
	height     int
}

func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report RUN_DIR | report --index [STORE]",
		Short: "Regenerate report.html and the plots of a stored run directory, or the index page of the store of runs",
		Long: `report regenerates report.html and the plots (PNG and SVG) of a run directory
from what it stores: results.json, history.jsonl and schedule.json. The same
directory always gives the same files, byte for byte. A directory holding only
a history.jsonl gets a report without verdicts.

With --index it writes instead the index page of the store of runs, STORE/index.html
(default runs/index.html): every run directory under STORE, newest first, with its
system, workload, storage, the faults that fired, the seed, the verdict, when it ran
and a link to its report. locklab writes it after each run it writes into the store.

With --screenshot it also opens the report in headless Chromium, checks that the
page rendered its verdict and every image, and saves the top of the page as
report.png in the run directory.

Exit codes: 0 the report was written; 2 usage error; 4 the directory could not
be read or the report not written (or, with --screenshot, the page did not render).`,
		Example: `  locklab report runs/latest
  locklab report --screenshot runs/redis-fenced-counter-unfenced-pause-seed7/latest
  locklab report --index`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.index {
				if len(args) > 1 {
					return usage("report --index takes at most one directory, the store of runs, got %d: %s", len(args), strings.Join(args, " "))
				}
				return nil
			}
			if len(args) == 0 {
				return usage("report needs a run directory (or --index for the index page of the store of runs)")
			}
			if len(args) > 1 {
				return usage("report takes one run directory, got %d: %s (--index writes the page listing them all)", len(args), strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(cmd.Flags()); err != nil {
				return err
			}
			if f.index {
				store := reports.StoreDir
				if len(args) == 1 {
					store = args[0]
				}
				return runIndex(cmd.OutOrStdout(), store)
			}
			return runReport(cmd.OutOrStdout(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.index, "index", false, "write the index page of the store of runs (STORE/index.html, default runs/) instead of a run's report")
	fl.BoolVar(&f.screenshot, "screenshot", false, "open the report in headless Chromium, check it rendered, save "+reports.ScreenshotFile)
	fl.StringVar(&f.browser, "browser", "", "browser executable for --screenshot (default: chromium or chrome on PATH)")
	fl.IntVar(&f.height, "screenshot-height", 2400, "height in pixels of the page's top that --screenshot captures")
	return cmd
}

// validate rejects flags that would be ignored or replaced.
func (f reportFlags) validate(fl *pflag.FlagSet) error {
	if err := noEmptyStrings(fl); err != nil {
		return err
	}
	if f.index && f.screenshot {
		return usage("--index and --screenshot exclude each other: --screenshot captures a run's report")
	}
	for _, name := range []string{"browser", "screenshot-height"} {
		if fl.Changed(name) && !f.screenshot {
			return usage("--%s applies to --screenshot, which is not given", name)
		}
	}
	if f.height <= 0 {
		return usage("--screenshot-height %d: want a positive number of pixels", f.height)
	}
	return nil
}

func runReport(out io.Writer, dir string, f reportFlags) error {
	if err := reportableDir(dir); err != nil {
		return err
	}
	start := time.Now()
	w, err := reports.Regenerate(dir)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	printReportFiles(out, dir, w, elapsed)
	if f.screenshot {
		return screenshot(out, dir, f)
	}
	return nil
}

// reportableDir refuses what is not a run directory, saying what it is: a
// path that does not exist, a file, the store of runs or the runs of one
// test (both with their latest link: which command the user likely meant),
// or a directory without a history.
func reportableDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usage("report: %s does not exist", dir)
	case err != nil:
		return usage("report: %s: %w", dir, err)
	case !st.IsDir():
		return usage("report: %s is a file, not a run directory: report reads the directory a run wrote", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.HistoryFile)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	latest := filepath.Join(dir, reports.LatestLink)
	if _, err := os.Stat(latest); err == nil {
		if _, err := os.Stat(filepath.Join(dir, reports.IndexFile)); err == nil {
			return usage("report: %s is the store of runs, not a run directory: 'locklab report %s' regenerates the newest run's report, "+
				"'locklab report --index %s' the index page", dir, latest, dir)
		}
		return usage("report: %s holds the runs of one test, not a run directory: 'locklab report %s' regenerates the newest one's report", dir, latest)
	}
	return usage("report: %s is not a run directory: it has no %s", dir, reports.HistoryFile)
}

// printReportFiles prints where the report is and how big its files are.
func printReportFiles(out io.Writer, dir string, w reports.Written, elapsed time.Duration) {
	size := func(name string) int64 {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		return st.Size()
	}
	var png, svg int64
	for _, p := range w.Plots {
		if strings.HasSuffix(p, ".png") {
			png += size(p)
		} else {
			svg += size(p)
		}
	}
	fmt.Fprintf(out, "report: %s (%s; %d plots: %s PNG, %s SVG) in %v\n", filepath.Join(dir, w.Report),
		kb(size(w.Report)), len(w.Plots)/2, kb(png), kb(svg), elapsed.Round(time.Millisecond))
}

func kb(n int64) string { return fmt.Sprintf("%.0f KB", float64(n)/1024) }

// screenshot opens the report in a headless browser and checks what it
// shows. The screenshot is written beside report.png and renamed over it
// once the page rendered, so a failure leaves no half-written image.
func screenshot(out io.Writer, dir string, f reportFlags) error {
	shot := filepath.Join(dir, reports.ScreenshotFile)
	tmp, err := os.CreateTemp(dir, "."+reports.ScreenshotFile+".tmp-*.png")
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	page, err := browser.Render(filepath.Join(dir, reports.ReportFile), browser.Options{
		Browser: f.browser, Screenshot: tmp.Name(), Height: f.height})
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if page.Rendered != "ok" || page.Overall == "" {
		return fmt.Errorf("screenshot: %s did not render (verdict %q, %d of %d images loaded, %d broken)",
			shot, page.Overall, page.Loaded, page.Images, page.Broken)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), shot); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	fmt.Fprintf(out, "screenshot: %s (rendered verdict %s, %d of %d images loaded)\n", shot, page.Overall, page.Loaded, page.Images)
	return nil
}

// runIndex writes the index page of the store of runs store.
func runIndex(out io.Writer, store string) error {
	if st, err := os.Stat(store); err != nil || !st.IsDir() {
		return usage("report --index: %s is not a directory (the store of runs, where 'locklab run' writes run directories)", store)
	}
	n, err := reports.WriteIndex(store)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "index: %s (%s)\n", filepath.Join(store, reports.IndexFile), count(n, "run"))
	return nil
}
