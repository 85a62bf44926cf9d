package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/shrink"
	"github.com/locklab/locklab/sweep"
)

type shrinkFlags struct {
	out     string
	maxRuns int
	kind    string
}

func newShrinkCmd() *cobra.Command {
	var f shrinkFlags
	cmd := &cobra.Command{
		Use:   "shrink RUN_DIR",
		Short: "Reduce a failing run to a minimal schedule that fails the same check the same way",
		Long: `shrink reads a failing run directory (results.json and schedule.json: the faults that ran,
drawn or given) and searches for the smallest run that still fails the same check with the
same kind of violation (gc-pause, clock-jump, failover, ...): delta debugging over the fault
list, then each fault made shorter and smaller (duration, jump, delay, drift) and moved as
late as it can go, then fewer clients and a shorter run. Every candidate is a deterministic
simulated run, so the search itself is deterministic.

It writes the minimal run as a run directory (its schedule.json replays with
'locklab run --nemesis-file', its report and story.txt) and ends with a line such as
"shrunk 14 faults to 1 in 63 runs (0.9 s)".

Exit codes: 0 shrunk; 2 usage error (not a run directory, or a run that fails no check);
4 the harness crashed.`,
		Example: `  locklab run --system redis --nemesis random --seed 63 --out runs/r63
  locklab shrink runs/r63            # writes runs/r63-shrunk`,
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return usage("shrink needs the run directory of a failing run (as 'locklab run --out DIR' writes it)")
			case 1:
				return nil
			}
			return usage("shrink takes one run directory, got %d: %s", len(args), strings.Join(args, " "))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.maxRuns < 1 {
				return usage("--max-runs %d: want a positive number of runs", f.maxRuns)
			}
			t, err := loadRun(args[0])
			if err != nil {
				return err
			}
			live := isLiveRun(args[0])
			if live {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is a live run: shrink searches in the simulator, so every candidate, and the minimal run, "+
					"is a simulated run of the same test (replay the minimal run with --live to see it against the real servers)\n", args[0])
			}
			out := f.out
			if out == "" {
				out = shrunkDir(args[0])
			}
			opts := shrink.Options{MaxRuns: f.maxRuns}
			// Every candidate is a short-lived world: the sweep's collector setting.
			defer sweep.TuneGC()()
			if f.kind != "" {
				if !slices.Contains(scenario.Kinds, f.kind) {
					return usage("--kind %q: want one of %s", f.kind, strings.Join(scenario.Kinds, ", "))
				}
				r, err := harness.Run(t)
				if err != nil {
					return err
				}
				g, ok := shrink.TargetOf(r)
				if !ok {
					return notFailing(args[0], live, shrink.ErrNotFailing)
				}
				g.Kind = f.kind
				opts.Target = &g
			}
			err = shrinkInto(cmd.OutOrStdout(), t, out, args[0], opts)
			if errors.Is(err, shrink.ErrNotFailing) {
				return notFailing(args[0], live, shrink.ErrNotFailing)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&f.out, "out", "", "run directory of the minimal run (default RUN_DIR-shrunk)")
	cmd.Flags().IntVar(&f.maxRuns, "max-runs", 1000, "candidate runs at most")
	cmd.Flags().StringVar(&f.kind, "kind", "", "the kind of violation to keep when the run shows several (default: the first its overlaps show); "+
		"one of "+strings.Join(scenario.Kinds, ", "))
	return cmd
}

// isLiveRun says whether the run directory holds a live run (its
// results.json has the live figures).
func isLiveRun(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	if err != nil {
		return false
	}
	var r struct {
		Extra map[string]json.RawMessage `json:"extra"`
	}
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	_, ok := r.Extra["live"]
	return ok
}

// notFailing is the usage error of a run that fails no check; of a live run,
// it says that its simulated replay is what passed.
func notFailing(dir string, live bool, err error) error {
	if live {
		return usage("%s: a live run, and its simulated replay, the run shrink searches from, fails no check: "+
			"nothing to shrink in the simulator (the live failure did not reproduce there)", dir)
	}
	return usageError{fmt.Errorf("%s: %w", dir, err)}
}

// loadRun reads the test a run directory ran; a directory that is not a run
// directory is refused saying what it lacks.
func loadRun(dir string) (scenario.Test, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return scenario.Test{}, usage("%s: no such directory", dir)
	case err != nil:
		return scenario.Test{}, usageError{err}
	case !fi.IsDir():
		return scenario.Test{}, usage("%s is a file, not a run directory: shrink reads the directory a run wrote", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, reports.ResultsFile)); errors.Is(err, fs.ErrNotExist) {
		return scenario.Test{}, usage("%s is not a run directory: it has no %s (a run directory, as 'locklab run' writes it, "+
			"holds %s, %s and, when faults ran, %s)", dir, reports.ResultsFile, reports.ResultsFile, reports.HistoryFile, reports.ScheduleFile)
	}
	t, err := harness.LoadTest(dir)
	if _, serr := os.Stat(filepath.Join(dir, reports.ScheduleFile)); errors.Is(err, fs.ErrNotExist) && errors.Is(serr, fs.ErrNotExist) {
		return t, usage("%s is not a whole run directory: its %s says faults ran, but it has no %s, the faults that ran",
			dir, reports.ResultsFile, reports.ScheduleFile)
	}
	if err != nil {
		return t, usageError{err}
	}
	return t, nil
}

// shrinkInto shrinks t, writes the minimal run's directory dir (with its
// story) and prints the story, the replay command and the summary line; from
// names the failing run in results.json.
func shrinkInto(out io.Writer, t scenario.Test, dir, from string, opts shrink.Options) error {
	if err := reports.CheckOutDir(dir); err != nil {
		return err
	}
	o, err := shrink.Shrink(t, opts)
	switch {
	case errors.Is(err, shrink.ErrNotFailing):
		return usageError{fmt.Errorf("%s: %w", from, err)}
	case err != nil:
		return err
	}
	command := replayCommand(o.Minimal, "schedule", dir)
	run := judge.Report(o.Result, command)
	run.Extra["shrink"] = map[string]any{"from": from, "target": o.Target, "faults_before": o.FaultsBefore,
		"faults_after": o.FaultsAfter, "runs": o.Runs, "wall": o.Wall.Round(time.Millisecond).String(),
		"clients_before": o.Original.Clients, "time_before": o.Original.Time.String()}
	story := scenario.StoryOf(o.Result, o.Target.Kind)
	run.Attachments = append(run.Attachments, reports.Attachment{Name: "story.txt", Label: "story",
		Write: func(w io.Writer) error { _, err := io.WriteString(w, strings.Join(story, "\n")+"\n"); return err }})
	var b strings.Builder
	fmt.Fprintf(&b, "shrinking %s: %s\n", from, o.Target)
	fmt.Fprintf(&b, "minimal run: %s\n", command)
	for _, line := range story {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	fmt.Fprintf(&b, "report: %s\n", filepath.Join(dir, reports.ReportFile))
	if ch := o.Changes(); len(ch) > 0 {
		fmt.Fprintf(&b, "also: %s\n", strings.Join(ch, ", "))
	}
	fmt.Fprintln(&b, o.Line())
	run.Printed = b.String()
	if err := reports.WriteDir(dir, run); err != nil {
		return err
	}
	recordRun(os.Stderr, dir)
	_, err = io.WriteString(out, b.String())
	return err
}

// shrunkDir is the default directory of a run's shrunk run: RUN_DIR-shrunk
// beside it, the directory a link such as runs/latest names rather than
// the link.
func shrunkDir(runDir string) string {
	if real, err := filepath.EvalSymlinks(runDir); err == nil {
		if rel, err := filepath.Rel(".", real); err == nil && !strings.HasPrefix(rel, "..") {
			real = rel
		}
		runDir = real
	}
	return strings.TrimSuffix(filepath.Clean(runDir), string(filepath.Separator)) + "-shrunk"
}
