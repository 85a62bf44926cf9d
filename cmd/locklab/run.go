package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/locklab/locklab/backends/storage"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
)

type runFlags struct {
	system, workload, storage, nemesis, nemesisFile, out, checks string
	clients                                                      int
	seed                                                         uint64
	simTime, checkBudget                                         time.Duration
	checkSteps                                                   int64
	fenceReads                                                   bool
	sysOpts, wlOpts                                              []string
	live                                                         livenessFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a lock system under a workload and faults, check the history, write a run directory",
		Example: `  locklab run --system redis --nemesis pause --seed 7
  locklab run --system redis -o fencing=true --storage fenced --nemesis pause --seed 7
  locklab run --system redis --nemesis-file schedule.json --time 30s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("seed") {
				f.seed = uint64(time.Now().UnixNano()) % 1_000_000
			}
			return runRun(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.system, "system", "redis", "lock system: "+strings.Join(harness.SystemNames(), ", "))
	fl.StringVar(&f.workload, "workload", "fenced-counter", "workload: "+strings.Join(harness.WorkloadNames(), ", "))
	fl.IntVar(&f.clients, "clients", 5, "number of clients")
	fl.DurationVar(&f.simTime, "time", 60*time.Second, "simulated duration")
	fl.Uint64Var(&f.seed, "seed", 0, "seed (default: drawn and printed)")
	fl.StringVar(&f.storage, "storage", "unfenced", "storage mode: unfenced or fenced")
	fl.BoolVar(&f.fenceReads, "fence-reads", false, "fenced storage also fences reads")
	fl.StringVar(&f.nemesis, "nemesis", "none", "faults drawn at random: none, random, or a list of "+kindList())
	fl.StringVar(&f.nemesisFile, "nemesis-file", "", "a fault schedule file (JSON) instead of --nemesis")
	fl.StringArrayVarP(&f.sysOpts, "opt", "o", nil, "system option key=value (repeatable), e.g. -o ttl=5s -o fencing=true")
	fl.StringArrayVarP(&f.wlOpts, "workload-opt", "w", nil, "workload option key=value (repeatable), e.g. -w hold=200ms")
	fl.StringVar(&f.checks, "checks", "", "comma-separated checks to run (default: every one that applies of "+strings.Join(harness.CheckNames, ", ")+"); +name adds a check to the default selection")
	fl.DurationVar(&f.checkBudget, "check-budget", 60*time.Second, "wall-clock budget of each key's search in the search-based checks (0: unbounded)")
	fl.Int64Var(&f.checkSteps, "check-steps", 0, "step budget of each key's search, deterministic (0: the default, -1: unbounded)")
	fl.StringVar(&f.out, "out", "", "run directory (default runs/<system>-<workload>-<storage>-<nemesis>-seed<N>)")
	f.live.register(fl)
	return cmd
}

func kindList() string {
	var ks []string
	for _, k := range nemesis.Kinds {
		ks = append(ks, string(k))
	}
	return strings.Join(ks, ", ") + ", clock"
}

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
		out[k] = v
	}
	return out, nil
}

func (f runFlags) test() (harness.Test, error) {
	t := harness.Test{
		System: f.system, Workload: f.workload, Clients: f.clients, Time: f.simTime, Seed: f.seed,
		Storage: storage.Mode(f.storage), FenceReads: f.fenceReads, Nemesis: f.nemesis, CheckBudget: f.checkBudget,
		CheckSteps: f.checkSteps,
	}
	if f.checkBudget == 0 {
		t.CheckBudget = harness.Unbounded
	}
	var err error
	if t.SystemOptions, err = parseOpts("--opt", f.sysOpts); err != nil {
		return t, err
	}
	if t.WorkloadOptions, err = parseOpts("--workload-opt", f.wlOpts); err != nil {
		return t, err
	}
	if f.checks != "" {
		t.Checks = strings.Split(f.checks, ",")
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
	t, err := f.test()
	if err != nil {
		return err
	}
	if err := t.Validate(); err != nil {
		return usageError{err}
	}
	dir := f.out
	if dir == "" {
		nem := t.Nemesis
		if f.nemesisFile != "" {
			nem = strings.TrimSuffix(filepath.Base(f.nemesisFile), filepath.Ext(f.nemesisFile))
		}
		dir = filepath.Join("runs", fmt.Sprintf("%s-%s-%s-%s-seed%d", t.System, t.Workload, t.Storage, strings.ReplaceAll(nem, ",", "+"), t.Seed))
	}
	command := replayCommand(t, f.nemesisFile, dir)
	out := cmd.OutOrStdout()
	prep, err := harness.Prepare(t)
	if err != nil {
		return usageError{err}
	}
	fmt.Fprintf(out, "seed %d: %s\n", t.Seed, command)
	start := time.Now()
	res, err := runWatched(cmd, prep)
	if err != nil {
		if errors.Is(err, harness.ErrCrash) {
			return fmt.Errorf("%w\nreplay: %s", err, command)
		}
		return usageError{err}
	}
	wall := time.Since(start)
	run := res.Report(command)
	if err := reports.WriteDir(dir, run); err != nil {
		return err
	}
	fmt.Fprintf(out, "simulated %v in %v (%.0fx real time), %d kernel events\n",
		t.Time, wall.Round(time.Millisecond), t.Time.Seconds()/wall.Seconds(), res.KernelEvents)
	if err := reports.PrintSummary(out, run, dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, reports.ReportFile))
	if run.ExitCode != harness.ExitValid {
		return exitError{run.ExitCode}
	}
	return nil
}

// replayCommand is the command line that replays the run; a schedule read from
// a file is replayed from the copy in the run directory.
func replayCommand(t harness.Test, nemesisFile, dir string) string {
	args := append([]string{"locklab", "run"}, t.Args()...)
	if nemesisFile != "" {
		args = append(args, "--nemesis-file", filepath.Join(dir, reports.ScheduleFile))
	}
	args = append(args, "--out", dir)
	return shellJoin(args)
}
