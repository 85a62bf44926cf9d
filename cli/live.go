package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// liveFlags are the flags run and repro add for live mode.
type liveFlags struct {
	live  bool
	scale float64
}

func addLiveFlags(fl *pflag.FlagSet, lf *liveFlags) {
	fl.BoolVar(&lf.live, "live", false, "run in real time against the real library or server (systems: "+strings.Join(live.Notes(), ", ")+
		"): same checks and run directory, not replayable byte for byte")
	fl.Float64Var(&lf.scale, "scale", 1, "with --live: multiply every duration (run time, faults, workload and system timing) by this factor")
}

func (lf liveFlags) validate(fl *pflag.FlagSet) error {
	if fl.Changed("scale") && !lf.live {
		return usage("--scale needs --live (a simulated run costs no real time)")
	}
	if lf.scale <= 0 || lf.scale > 100 {
		return usage("--scale %v: want a factor in (0, 100]", lf.scale)
	}
	return nil
}

// interruptible is a context cancelled by Ctrl-C or SIGTERM: the run stops
// and its servers are stopped; a second signal kills them and exits at once.
func interruptible() (context.Context, context.CancelFunc) {
	return proc.StopOnSignal(context.Background())
}

// liveCommand is the command that runs t live again; withOut: into dir
// (otherwise into a new directory of the store).
func liveCommand(t scenario.Test, nemesisFile, dir string, scale float64, withOut bool) string {
	args := append([]string{"locklab", "run", "--live"}, t.Args()...)
	if scale != 1 {
		args = append(args, "--scale", fmt.Sprint(scale))
	}
	if nemesisFile != "" {
		args = append(args, "--nemesis-file", filepath.Join(dir, reports.ScheduleFile))
	}
	if withOut {
		args = append(args, "--out", dir)
	}
	return shellJoin(args)
}

// liveLines describe a live run: what ran, for how long, and that it does not replay.
func liveLines(res scenario.Result) string {
	l, _ := res.SystemFigures["live"].(map[string]any)
	vs, _ := l["versions"].(map[string]string)
	var names []string
	for k := range vs {
		names = append(names, k+" "+vs[k])
	}
	sort.Strings(names)
	return fmt.Sprintf("live: %v of real time (%s)\nlive: %s\n", l["wall_time"], strings.Join(names, "; "), live.NotReplayable)
}

func runLive(cmd *cobra.Command, f runFlags, lf liveFlags) error {
	t, err := f.test(cmd.Flags())
	if err != nil {
		return err
	}
	// The command names the test as given; the run scales it.
	given := t
	dir, inStore := f.out, f.out == ""
	if inStore {
		// A new directory in the store: an earlier run of the same seed stays.
		if dir, err = storeRun(cmd.ErrOrStderr(), filepath.Join("live", runName(t, f.nemesisFile)), time.Now()); err != nil {
			return err
		}
		defer removeIfEmpty(dir)
	} else if err := reports.CheckOutDir(dir); err != nil {
		return err
	}
	if why := live.UnreachableOut(t, dir); why != "" {
		if inStore {
			return usage("%s, the run directory in the store of runs: %s; choose another with --out", dir, why)
		}
		return usage("--out %s: %s", dir, why)
	}
	servers, err := serversScratch(dir)
	if err != nil {
		return err
	}
	p, err := live.Prepare(t, live.Config{Scale: lf.scale, Dir: servers})
	if err != nil {
		os.RemoveAll(servers)
		return usageError{err}
	}
	// A run of the store, run again, goes to a new directory of the store.
	command := liveCommand(given, f.nemesisFile, dir, lf.scale, !inStore)
	out := cmd.OutOrStdout()
	first := fmt.Sprintf("seed %d (live): %s\n", t.Seed, command) + leftOutLine(t)
	if w := judge.DrewNoFault(p.Test, p.Schedule); w != "" {
		// Said before the run spends its real time, not only after it.
		first += fmt.Sprintf("WARNING: %s\n", w)
	}
	fmt.Fprint(out, first)
	ctx, cancel := interruptible()
	defer cancel()
	res, err := p.Run(ctx)
	interrupted := errors.Is(err, live.ErrInterrupted)
	if err != nil && !interrupted {
		err = keepServers(servers, err)
		if errors.Is(err, harness.ErrCrash) {
			return err
		}
		return usageError{err}
	}
	err = writeLive(out, first, command, dir, servers, res, interrupted, err)
	os.RemoveAll(servers) // gone already when it was moved into the run directory
	recordRun(cmd.ErrOrStderr(), dir)
	return err
}

// keepServers keeps the servers' data and logs of a run that failed (a
// server that did not start: its log says why) and says where they are;
// an empty directory is removed.
func keepServers(servers string, err error) error {
	if entries, rerr := os.ReadDir(servers); rerr != nil || len(entries) == 0 {
		os.RemoveAll(servers)
		return err
	}
	return fmt.Errorf("%w (the servers' data and logs are kept in %s)", err, servers)
}

// serversScratch makes the directory where a live run's real servers keep
// their data and logs: beside the run directory (on its file system), moved
// into it as servers/ once the run directory is written.
func serversScratch(dir string) (string, error) {
	parent, base := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("live servers' directory: %w", err)
	}
	s, err := os.MkdirTemp(parent, "."+base+".servers-")
	if err != nil {
		return "", fmt.Errorf("live servers' directory: %w", err)
	}
	return s, nil
}

// moveServers moves the servers' directory into the written run directory
// (an empty one, of a system that starts no server, is dropped).
func moveServers(servers, dir string) error {
	if entries, err := os.ReadDir(servers); err != nil || len(entries) == 0 {
		return nil
	}
	if err := os.Rename(servers, filepath.Join(dir, reports.ServersDir)); err != nil {
		return fmt.Errorf("move the servers' data and logs into %s: %w", dir, err)
	}
	return nil
}

func writeLive(out io.Writer, first, command, dir, servers string, res scenario.Result, interrupted bool, runErr error) error {
	run := judge.Report(res, command)
	head := liveLines(res)
	if interrupted {
		head += fmt.Sprintf("live: %v: the verdicts judge the history up to the interruption\n", runErr)
	}
	var rest strings.Builder
	// head says what the report's live note says: the summary is printed
	// before the note is added, so the banner is said once.
	if err := reports.PrintSummary(&rest, run, dir); err != nil {
		return err
	}
	markLive(&run, res)
	fmt.Fprintf(&rest, "report: %s\n", filepath.Join(dir, reports.ReportFile))
	run.Printed = first + head + rest.String()
	if err := reports.WriteDir(dir, run); err != nil {
		return err
	}
	if err := moveServers(servers, dir); err != nil {
		return err
	}
	fmt.Fprint(out, head+rest.String())
	if interrupted {
		return exitError{judge.ExitUnknown}
	}
	if run.ExitCode != judge.ExitValid {
		return exitError{run.ExitCode}
	}
	return nil
}

// markLive marks a live run's report: results.json's extra.live, and a note
// under the verdict of report.html.
func markLive(run *reports.Run, res scenario.Result) {
	run.Extra["live"] = res.SystemFigures["live"]
	run.Notes = append(run.Notes, strings.ReplaceAll(strings.TrimSpace(liveLines(res)), "\n", "; "))
}

// runReproLive runs scenario variants live and compares their verdicts with
// the expectations (the simulated ones: a mismatch is a finding about the model).
func runReproLive(out io.Writer, s scenario.Scenario, variants []scenario.Variant, f reproFlags, lf liveFlags) error {
	ctx, cancel := interruptible()
	defer cancel()
	mismatches, skipped, missing, unreachable := 0, 0, 0, 0
	for _, v := range variants {
		if sys := v.ReproTest().System; !slices.Contains(live.Systems(), sys) {
			if !f.all {
				return usageError{fmt.Errorf("%s/%s: system %q has no live form (live: %s)", s.Name, v.Name, sys, strings.Join(live.Notes(), ", "))}
			}
			fmt.Fprintf(out, "%s/%s (live): SKIPPED: system %s has no live form (live: %s)\n", s.Name, v.Name, sys, strings.Join(live.Systems(), ", "))
			skipped++
			continue
		}
		why := live.Unavailable(v.ReproTest())
		if _, err := live.Prepare(v.ReproTest(), live.Config{Scale: lf.scale}); why == "" && errors.Is(err, live.ErrNotLive) {
			why = err.Error()
		}
		if why != "" && f.all {
			fmt.Fprintf(out, "%s/%s (live): SKIPPED: %s\n", s.Name, v.Name, why)
			skipped++
			continue
		}
		dir := filepath.Join(f.out, "live", s.Name, v.Name)
		if why := live.UnreachableOut(v.ReproTest(), dir); why != "" {
			// Refused before any server starts: the other variants run.
			if !f.all {
				return usage("--out %s: %s", f.out, why)
			}
			fmt.Fprintf(out, "%s/%s (live): SKIPPED: --out %s: %s\n", s.Name, v.Name, f.out, why)
			skipped++
			unreachable++
			continue
		}
		if err := reports.CheckOutDir(dir); err != nil {
			return err
		}
		// The live lines of the try that counts are said under the
		// variant's header, which printOutcomeLive prints.
		var tail strings.Builder
		o, servers, err := reproLiveTries(ctx, out, &tail, s, v, dir, f.tries, lf, live.Repro)
		var notInstalled *proc.MissingError
		if err != nil && errors.As(err, &notInstalled) {
			// A server that is not installed is not a usage error: skip
			// the variants that need it and run the rest.
			if !f.all {
				return fmt.Errorf("%s/%s (live): %w", s.Name, v.Name, notInstalled)
			}
			fmt.Fprintf(out, "%s/%s (live): SKIPPED: %v\n", s.Name, v.Name, notInstalled)
			skipped++
			missing++
			continue
		}
		if err != nil {
			return err
		}
		err = printOutcomeLive(out, s, o, dir, f.verbose, lf.scale, tail.String())
		if err == nil {
			err = moveServers(servers, dir)
		}
		os.RemoveAll(servers)
		if err != nil {
			return err
		}
		if !o.Match() {
			mismatches++
		}
	}
	if f.all {
		ran := len(variants) - skipped
		line := fmt.Sprintf("%s (live): %d of %d variants matched", s.Name, ran-mismatches, ran)
		if skipped > 0 {
			var why []string
			for _, c := range []struct {
				n    int
				what string
			}{{missing, "for a server that is not installed"}, {unreachable, "for an --out the server's user cannot reach"},
				{skipped - missing - unreachable, "with no live form or refused live"}} {
				if c.n > 0 {
					why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
				}
			}
			line += fmt.Sprintf(" (%d skipped: %s)", skipped, strings.Join(why, ", "))
		}
		fmt.Fprintln(out, line)
		if ran == 0 && missing > 0 {
			return fmt.Errorf("%s: no variant ran live: %d need a server that is not installed (see the SKIPPED lines)", s.Name, missing)
		}
		if ran == 0 && unreachable > 0 {
			return usage("--out %s: no variant ran live: the server's user cannot reach the directory (see the SKIPPED lines)", f.out)
		}
		if ran == 0 {
			return usageError{fmt.Errorf("%s: no variant has a live form (live: %s)", s.Name, strings.Join(live.Systems(), ", "))}
		}
	}
	if mismatches > 0 {
		return exitError{judge.ExitInvalid}
	}
	return nil
}

// reproLiveTries runs variant v live up to tries times, until its outcome
// matches the variant's expectations and every fault fired: a real-time run
// can miss the moment its story needs (raftkv-leader-clock-ahead: the new
// leader is elected 1 to 3 s after the cut, and the holder it must overrule
// releases 2.5 s after it), while a model that disagrees with the real
// system misses every try. Each missed try is said in a line; the outcome
// returned is the last try's, with the directory holding its servers' data
// and logs; repro runs one try (live.Repro). A server that is not installed is a *proc.MissingError, and the
// servers' directory is then removed.
func reproLiveTries(ctx context.Context, out, final io.Writer, s scenario.Scenario, v scenario.Variant, dir string, tries int,
	lf liveFlags, repro func(context.Context, scenario.Variant, live.Config) (harness.Outcome, error)) (harness.Outcome, string, error) {
	var missed []string
	for try := 1; ; try++ {
		start := time.Now()
		servers, err := serversScratch(dir)
		if err != nil {
			return harness.Outcome{}, "", err
		}
		o, err := repro(ctx, v, live.Config{Scale: lf.scale, Dir: servers})
		var notInstalled *proc.MissingError
		if errors.As(err, &notInstalled) {
			os.RemoveAll(servers)
			return o, "", err
		}
		if err != nil {
			err = keepServers(servers, err)
			if errors.Is(err, harness.ErrCrash) || errors.Is(err, live.ErrInterrupted) {
				return o, "", err
			}
			return o, "", usageError{err}
		}
		var short []string
		for _, m := range o.Mismatches {
			m, _, _ = strings.Cut(m, " (") // the check and the verdicts, without the reason
			short = append(short, m)
		}
		miss := strings.Join(short, "; ")
		if miss == "" {
			miss = notFired(o.Result)
		}
		if miss == "" || try >= tries {
			fmt.Fprint(final, liveLines(o.Result))
			fmt.Fprintf(final, "live: wall time %v\n", time.Since(start).Round(time.Millisecond))
			if tries > 1 {
				verdict := "MATCH"
				if !o.Match() {
					verdict = "MISMATCH"
				}
				fmt.Fprintf(final, "live: %s in try %d of at most %d", verdict, try, tries)
				if len(missed) > 0 {
					fmt.Fprintf(final, " (%d missed before: %s)", len(missed), strings.Join(missed, " | "))
				}
				fmt.Fprintln(final)
			}
			return o, servers, nil
		}
		os.RemoveAll(servers)
		missed = append(missed, miss)
		fmt.Fprintf(out, "%s/%s (live): try %d of at most %d missed (%s); trying again\n", s.Name, v.Name, try, tries, miss)
	}
}

// notFired says which scheduled fault of a live run did not fire ("" when
// every one did).
func notFired(r scenario.Result) string {
	for _, f := range r.FaultOutcomes {
		if !f.Fired {
			return fmt.Sprintf("fault %d (%s) did not fire: %s", f.Fault, f.Kind, f.DidNotFire)
		}
	}
	return ""
}

// printOutcomeLive prints a live variant's outcome; liveText, the live
// lines of its try (what ran, the wall time, in which try it matched), is
// said under its header.
func printOutcomeLive(out io.Writer, s scenario.Scenario, o harness.Outcome, dir string, verbose bool, scale float64, liveText string) error {
	t := o.Variant.ReproTest().WithDefaults()
	command := liveCommand(t, scheduleFile(t), dir, scale, true)
	return printOutcomeUnder(out, s, o, dir, verbose, command, liveText)
}
