package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/shrink"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

type runFlags struct {
	system, workload, storage, nemesis, nemesisFile, out, checks string
	clients                                                      int
	seed                                                         uint64
	simTime, checkBudget                                         time.Duration
	checkSteps                                                   int64
	fenceReads, shrink, liveComparable, verbose                  bool
	cuts                                                         string
	sysOpts, wlOpts                                              []string
	live                                                         livenessFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	var lf liveFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a lock system under a workload and faults, check the history, write a run directory",
		Example: `  locklab run --system redis --nemesis pause --seed 7
  locklab run --system redis -o fencing=true --storage fenced --nemesis pause --seed 7
  locklab run --system redis --nemesis-file schedule.json --time 30s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(cmd.Flags()); err != nil {
				return err
			}
			if !cmd.Flags().Changed("seed") {
				f.seed = uint64(time.Now().UnixNano()) % 1_000_000
			}
			if err := lf.validate(cmd.Flags()); err != nil {
				return err
			}
			if lf.live {
				return runLive(cmd, f, lf)
			}
			return runRun(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.system, "system", "redis", "lock system: "+strings.Join(system.Names(), ", "))
	fl.StringVar(&f.workload, "workload", "fenced-counter", "workload: "+strings.Join(workloads.Names(), ", "))
	fl.IntVar(&f.clients, "clients", 5, "number of clients")
	fl.DurationVar(&f.simTime, "time", 60*time.Second, "simulated duration")
	fl.Uint64Var(&f.seed, "seed", 0, "seed (default: drawn and printed)")
	fl.StringVar(&f.storage, "storage", "unfenced", "storage mode: unfenced, fenced or check ("+
		strings.Join(system.Sequencers(), ", ")+": CheckSequencer before each write)")
	fl.BoolVar(&f.fenceReads, "fence-reads", false, "fenced storage also fences reads")
	fl.StringVar(&f.cuts, "cuts", "hold", "what a partition does with the messages it catches: hold (a TCP connection: delivered at the heal, lost if the cut outlasts the 15 s connection timeout) or drop (datagrams)")
	fl.StringVar(&f.nemesis, "nemesis", "none", "faults drawn at random: none, random, or a list of "+kindList())
	fl.StringVar(&f.nemesisFile, "nemesis-file", "", "a fault schedule file (JSON) instead of --nemesis (not both)")
	fl.BoolVar(&f.liveComparable, "live-comparable", false, "with --nemesis random: draw only the fault kinds the system's live form can perform, as a live run does, so that the simulated and the live run of a seed draw one schedule (the run names the kinds left out)")
	fl.StringArrayVarP(&f.sysOpts, "opt", "o", nil, "system option key=value (repeatable), e.g. -o ttl=5s -o fencing=true")
	fl.StringArrayVarP(&f.wlOpts, "workload-opt", "w", nil, "workload option key=value (repeatable), e.g. -w hold=200ms")
	fl.StringVar(&f.checks, "checks", "", "comma-separated checks to run (default: every one that applies of "+strings.Join(scenario.RunCheckNames(), ", ")+"); +name adds a check to the default selection")
	fl.DurationVar(&f.checkBudget, "check-budget", 60*time.Second, "wall-clock budget of each key's search in the search-based checks (0: unbounded)")
	fl.Int64Var(&f.checkSteps, "check-steps", models.DefaultSteps, "step budget of each key's search, deterministic (-1: unbounded)")
	addLiveFlags(fl, &lf)
	fl.BoolVar(&f.shrink, "shrink", false, "when a check fails, also shrink the run to a minimal schedule that fails it the same way, written to <out>-shrunk (see locklab shrink)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "also print the story of the run: the faults, who held the lock when, with which grant and token, what the storage did (as repro does)")
	fl.StringVar(&f.out, "out", "", "run directory, used as named: a run directory from before is replaced whole, any other non-empty directory is refused (default: a new directory runs/<system>-<workload>-<storage>-<nemesis>-seed<N>/<UTC start time> in the store of runs, which keeps every run, points runs/latest at the newest and lists them all in runs/index.html)")
	f.live.register(fl)
	return cmd
}

// leftOutLine says which fault kinds a random nemesis does not draw
// because the system's live form cannot perform them ("" when it draws
// every kind, or the test's nemesis is not random).
func leftOutLine(t scenario.Test) string {
	if t.Schedule != nil || t.Nemesis != "random" {
		return ""
	}
	_, left, err := liveform.RandomKinds(t)
	if err != nil || len(left) == 0 {
		return ""
	}
	var kinds, whys []string
	for _, l := range left {
		kinds = append(kinds, string(l.Kind))
		whys = append(whys, fmt.Sprintf("%s: %s", l.Kind, l.Why))
	}
	return fmt.Sprintf("nemesis random draws no %s, which %s cannot perform live (%s)\n",
		strings.Join(kinds, ", "), t.System, strings.Join(whys, "; "))
}

func kindList() string {
	var ks []string
	for _, k := range nemesis.Kinds {
		ks = append(ks, string(k))
	}
	return strings.Join(ks, ", ") + ", clock"
}

// parseOpts parses repeated key=value flags; a key given twice is an error
// (the second would silently replace the first).
func parseOpts(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usage("%s %q: want key=value", flag, kv)
		}
		if old, dup := out[k]; dup {
			return nil, usage("%s %s is given twice (%s=%s and %s=%s): give it once", flag, k, k, old, k, v)
		}
		out[k] = v
	}
	return out, nil
}

// validate rejects typed values that would otherwise be replaced or ignored:
// a value the user typed is used or refused, never swapped for a default.
func (f runFlags) validate(fl *pflag.FlagSet) error {
	if err := noEmptyStrings(fl); err != nil {
		return err
	}
	switch {
	case fl.Changed("time") && f.simTime <= 0:
		return usage("--time %v: the simulated duration must be positive", f.simTime)
	case fl.Changed("clients") && (f.clients < 1 || f.clients > 1000):
		return usage("--clients %d: want 1 to 1000 clients", f.clients)
	case fl.Changed("nemesis") && fl.Changed("nemesis-file"):
		return usage("--nemesis and --nemesis-file exclude each other: the schedule file is the faults of the run")
	case f.fenceReads && f.storage != string(storage.Fenced):
		return usage("--fence-reads needs --storage fenced (an unfenced storage fences nothing)")
	case f.cuts != "drop" && f.cuts != "hold":
		return usage("--cuts %q: want drop or hold", f.cuts)
	}
	if err := checkBudgetFlags(f.checkBudget, f.checkSteps); err != nil {
		return err
	}
	_, err := checkNames(f.checks, fl.Changed("checks"))
	return err
}

// noEmptyStrings rejects a string flag typed empty: a command would treat it
// as not given and use the default.
func noEmptyStrings(fl *pflag.FlagSet) error {
	var err error
	fl.Visit(func(fg *pflag.Flag) {
		if err == nil && fg.Value.Type() == "string" && fg.Value.String() == "" {
			err = usage("--%s is empty: give a value or leave the flag out", fg.Name)
		}
	})
	return err
}

// checkBudgetFlags rejects search budgets that mean nothing.
func checkBudgetFlags(budget time.Duration, steps int64) error {
	if budget < 0 {
		return usage("--check-budget %v: want a positive duration, or 0 for no wall-clock bound", budget)
	}
	if steps == 0 || steps < -1 {
		return usage("--check-steps %d: want a positive number of steps, or -1 for no bound", steps)
	}
	return nil
}

// checkNames splits --checks; an empty name is an error.
func checkNames(list string, given bool) ([]string, error) {
	if !given {
		return nil, nil
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || n == "+" {
			return nil, usage("--checks %q: an empty check name", list)
		}
		names = append(names, n)
	}
	return names, nil
}

func (f runFlags) test(fl *pflag.FlagSet) (scenario.Test, error) {
	t := scenario.Test{
		System: f.system, Workload: f.workload, Clients: f.clients, Time: f.simTime, Seed: f.seed,
		Storage: storage.Mode(f.storage), FenceReads: f.fenceReads, Nemesis: f.nemesis, CheckBudget: f.checkBudget,
		CheckSteps: f.checkSteps, LiveComparable: f.liveComparable,
	}
	if f.cuts == "drop" {
		t.Cuts = "drop"
	}
	if f.checkBudget == 0 {
		t.CheckBudget = scenario.Unbounded
	}
	var err error
	if t.SystemOptions, err = parseOpts("--opt", f.sysOpts); err != nil {
		return t, err
	}
	if t.WorkloadOptions, err = parseOpts("--workload-opt", f.wlOpts); err != nil {
		return t, err
	}
	if t.Checks, err = checkNames(f.checks, fl.Changed("checks")); err != nil {
		return t, err
	}
	if f.nemesisFile != "" {
		s, err := nemesis.ReadFile(f.nemesisFile)
		if err != nil {
			return t, usageError{err}
		}
		t.Schedule = &s
	}
	f.live.apply(&t)
	return t.WithDefaults(), nil
}

func runRun(cmd *cobra.Command, f runFlags) error {
	t, err := f.test(cmd.Flags())
	if err != nil {
		return err
	}
	if err := t.Validate(); err != nil {
		return usageError{err}
	}
	out := cmd.OutOrStdout()
	prep, err := harness.Prepare(t)
	if err != nil {
		return usageError{err}
	}
	prep.RecordRecords() // results.json keeps the servers' grants and the storage's writes beside the history
	start := time.Now()
	dir, inStore := f.out, f.out == ""
	if inStore {
		// A new directory in the store: an earlier run of the same seed stays.
		if dir, err = storeRun(cmd.ErrOrStderr(), runName(t, f.nemesisFile), start); err != nil {
			return err
		}
		defer removeIfEmpty(dir)
	} else if err := reports.CheckOutDir(dir); err != nil {
		return err
	}
	command := replayCommand(t, f.nemesisFile, dir)
	if inStore {
		// Replayed, the run goes to a new directory of the store, so that the
		// replay keeps the run it replays.
		command = storeReplayCommand(t, f.nemesisFile, dir)
	}
	first := fmt.Sprintf("seed %d: %s\n", t.Seed, command)
	if t.LiveComparable {
		first += leftOutLine(t)
	}
	fmt.Fprint(out, first)
	res, err := runWatched(cmd, prep)
	if err != nil {
		if errors.Is(err, harness.ErrCrash) {
			return fmt.Errorf("%w\nreplay: %s", err, command)
		}
		return usageError{err}
	}
	wall := time.Since(start)
	run := judge.Report(res, command)
	speed := fmt.Sprintf("simulated %v in %v (%.0fx real time), %d kernel events\n",
		t.Time, wall.Round(time.Millisecond), t.Time.Seconds()/wall.Seconds(), res.KernelEvents)
	var rest strings.Builder
	if err := reports.PrintSummary(&rest, run, dir); err != nil {
		return err
	}
	if f.verbose {
		fmt.Fprintln(&rest, "\nstory:")
		for _, line := range scenario.Story(res) {
			fmt.Fprintf(&rest, "  %s\n", line)
		}
		fmt.Fprintln(&rest)
	}
	fmt.Fprintf(&rest, "report: %s\n", filepath.Join(dir, reports.ReportFile))
	run.Printed = first + speed + rest.String()
	if err := reports.WriteDir(dir, run); err != nil {
		fmt.Fprint(out, speed)
		_ = reports.PrintSummary(out, run, "")
		return err
	}
	recordRun(cmd.ErrOrStderr(), dir)
	fmt.Fprint(out, speed+rest.String())
	if f.shrink && res.Overall == models.Invalid {
		fmt.Fprintln(out)
		if err := shrinkInto(out, t, shrunkDir(dir), dir, shrink.Options{}); err != nil {
			return err
		}
	}
	if run.ExitCode != judge.ExitValid {
		return exitError{run.ExitCode}
	}
	return nil
}

// replayCommand is the command line that replays the run; a schedule read from
// a file is replayed from the copy in the run directory.
func replayCommand(t scenario.Test, nemesisFile, dir string) string {
	args := append([]string{"locklab", "run"}, t.Args()...)
	if nemesisFile != "" {
		args = append(args, "--nemesis-file", filepath.Join(dir, reports.ScheduleFile))
	}
	args = append(args, "--out", dir)
	return shellJoin(args)
}

// storeReplayCommand replays a run of the store into a new directory of the
// store: replayCommand without --out.
func storeReplayCommand(t scenario.Test, nemesisFile, dir string) string {
	args := append([]string{"locklab", "run"}, t.Args()...)
	if nemesisFile != "" {
		args = append(args, "--nemesis-file", filepath.Join(dir, reports.ScheduleFile))
	}
	return shellJoin(args)
}

// removeIfEmpty removes the directory reserved for a run that wrote nothing
// (it failed before its directory was written); a written one stays.
func removeIfEmpty(dir string) {
	_ = os.Remove(dir) // fails, and does nothing, unless dir is empty
}
