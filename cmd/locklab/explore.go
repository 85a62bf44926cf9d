package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/locklab/locklab/harness"
)

type exploreFlags struct {
	hunts           []string
	starts, maxSeed int
	first           uint64
	simTime         time.Duration
	progress, story bool
}

func newExploreCmd() *cobra.Command {
	var f exploreFlags
	var names []string
	for _, h := range harness.Hunts {
		names = append(names, h.Name)
	}
	cmd := &cobra.Command{
		Use:   "explore",
		Short: "Measure how many random-fault seeds it takes to rediscover each catalog counterexample",
		Long: `explore runs, for each hunt, the unsafe variant of a catalog scenario with random faults
(--nemesis random: swarm style, each seed draws the fault kinds, their weights and rate)
instead of its schedule, seed after seed, until a run shows a violation of the hunt's kind:
a gc-pause (the earlier holder paused across its lease deadline), a clock-jump (a second
grant before the first lease ran out, from a server whose clock jumped or drifted), a
failover (a second grant from a promoted replica). It does so from several starting seeds
(sweeps of --max-seeds each, one after the other) and reports the seeds each sweep needed,
their median, and the machine time per seed.

Hunts: ` + strings.Join(names, ", ") + `

Exit codes: 0 every sweep found its violation; 3 some sweep found none within --max-seeds;
2 usage error; 4 the harness crashed.`,
		Example: `  locklab explore
  locklab explore --hunt redlock+clock-jump --starts 9 --max-seeds 5000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("progress") {
				f.progress = isTerminal(cmd.ErrOrStderr())
			}
			return runExplore(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.hunts, "hunt", names, "hunts to run")
	fl.IntVar(&f.starts, "starts", 5, "number of starting seeds (sweeps) per hunt")
	fl.Uint64Var(&f.first, "first", 1, "the first starting seed; sweep i starts at first + i*max-seeds")
	fl.IntVar(&f.maxSeed, "max-seeds", 2000, "seeds per sweep at most")
	fl.DurationVar(&f.simTime, "time", 60*time.Second, "simulated duration of each seed's run")
	fl.BoolVar(&f.progress, "progress", true, "show a progress bar on stderr: seeds done, rate, ETA (default: when stderr is a terminal)")
	fl.BoolVar(&f.story, "story", false, "print the story of each hunt's first finding")
	return cmd
}

func runExplore(out, errOut io.Writer, f exploreFlags) error {
	if f.starts < 1 || f.maxSeed < 1 || f.simTime <= 0 {
		return usage("--starts, --max-seeds and --time must be positive")
	}
	var hunts []harness.Hunt
	for _, name := range f.hunts {
		h, err := harness.FindHunt(name)
		if err != nil {
			return usageError{err}
		}
		h.Time = f.simTime
		hunts = append(hunts, h)
	}
	total := len(hunts) * f.starts * f.maxSeed
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(errOut), progressbar.OptionSetVisibility(f.progress),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("seeds"),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
	var results []harness.Exploration
	for _, h := range hunts {
		e := harness.Exploration{Hunt: h}
		for i := range f.starts {
			bar.Describe(fmt.Sprintf("%s sweep %d/%d", h.Name, i+1, f.starts))
			sw, err := h.Sweep(f.first+uint64(i*f.maxSeed), f.maxSeed, func() { _ = bar.Add(1) })
			if err != nil {
				return err
			}
			// A sweep that ended early will not run its remaining seeds.
			total -= f.maxSeed - sw.Seeds
			bar.ChangeMax(total)
			e.Sweeps = append(e.Sweeps, sw)
		}
		results = append(results, e)
	}
	_ = bar.Finish()
	return printExplorations(out, results, f.story)
}

func printExplorations(out io.Writer, results []harness.Exploration, story bool) error {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HUNT\tCOUNTEREXAMPLE\tSEEDS TO FIRST VIOLATION\tMEDIAN\tFOUND\tWALL/SEED")
	complete := true
	for _, e := range results {
		var seeds []string
		for _, s := range e.Sweeps {
			n := fmt.Sprint(s.Seeds)
			if !s.Found {
				n = ">" + n
			}
			seeds = append(seeds, n)
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%.1f\t%d/%d\t%.1fms\n", e.Hunt.Name, e.Hunt.Scenario, e.Hunt.Variant,
			strings.Join(seeds, " "), e.MedianSeeds(), e.Found(), len(e.Sweeps), float64(e.WallPerSeed().Microseconds())/1000)
		complete = complete && e.Found() == len(e.Sweeps)
	}
	tw.Flush()
	for _, e := range results {
		for _, s := range e.Sweeps {
			if !s.Found {
				continue
			}
			t, err := e.Hunt.Test(s.Seed)
			if err != nil {
				return err
			}
			t = t.WithDefaults()
			fmt.Fprintf(out, "\n%s first found at seed %d: %s\n", e.Hunt.Name, s.Seed,
				strings.Join(append([]string{"locklab", "run"}, t.Args()...), " "))
			if story {
				r, err := harness.Run(t)
				if err != nil {
					return err
				}
				for _, line := range harness.Story(r) {
					fmt.Fprintf(out, "  %s\n", line)
				}
			}
			break
		}
	}
	if !complete {
		return exitError{harness.ExitUnknown}
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
