package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/locklab/locklab/guide"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

// guidedSweep is a guided search of hunt h from seed, as a sweep: its runs
// count as seeds, and its finding is the mutated test that showed the
// violation. Its fresh draws are the seeds from start, those of the swarm
// sweep it is compared with.
func guidedSweep(h harness.Hunt, seed, start uint64, maxRuns int, progress func()) (harness.Sweep, error) {
	o, err := guide.Search(guide.Config{Hunt: h, Seed: seed, Start: start, MaxRuns: maxRuns}, progress)
	if err != nil {
		return harness.Sweep{}, err
	}
	sw := harness.Sweep{Start: seed, Seeds: o.Runs, NoFault: o.NoFault, Found: o.Found, Wall: o.Wall}
	if o.Found {
		sw.Seed = o.Test.Seed
		sw.Finding = &o.Test
	}
	return sw, nil
}

// writeFinding writes a guided search's finding as a run directory under
// dir, so that its schedule replays, and prints the replay command.
func writeFinding(out io.Writer, h harness.Hunt, sw harness.Sweep, dir string) error {
	t := sw.Finding.WithDefaults()
	runDir := filepath.Join(dir, fmt.Sprintf("%s-guided%d", strings.ReplaceAll(h.Name, "/", "-"), sw.Start))
	if err := reports.CheckOutDir(runDir); err != nil {
		return err
	}
	r, err := harness.Run(t)
	if err != nil {
		return err
	}
	command := replayCommand(t, "schedule", runDir)
	run := judge.Report(r, command)
	if err := reports.WriteDir(runDir, run); err != nil {
		return err
	}
	recordRun(os.Stderr, runDir)
	fmt.Fprintf(out, "\n%s first found by the guided search from seed %d, after %s (%d faults): %s\n",
		h.Name, sw.Start, count(sw.Seeds, "run"), len(t.Schedule.Faults), command)
	return nil
}

// hardRuns is what makes a hunt hard: swarm random's median runs to the
// first violation above it (or swarm finding it in fewer than half its
// starts).
const hardRuns = 20

// hard reports whether a hunt is hard for swarm random: its median is above
// hardRuns, or it is unknown because fewer than half the sweeps found one.
func hard(s harness.Exploration) bool {
	return 2*s.Found() <= len(s.Sweeps) || s.MedianSeeds() > hardRuns
}

// printComparison prints, for each hunt, runs to the first violation by swarm
// random and by guided search, their medians over the starts and the
// speedup (swarm median / guided median), whether the hunt is hard, and a
// summary against the goals: guided at least 2x fewer runs on the hard
// hunts, and worse on none.
func printComparison(out io.Writer, swarm, guided []harness.Exploration) error {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "HUNT\tKIND\tHARD\tSWARM RUNS\tMEDIAN\tFOUND\tGUIDED RUNS\tMEDIAN\tFOUND\tSPEEDUP\tWALL/RUN SWARM\tGUIDED")
	complete := true
	var hardN, hardWon, worse []string
	for i, s := range swarm {
		g := guided[i]
		mark := "-"
		if hard(s) {
			mark = "hard"
			hardN = append(hardN, s.Hunt.Name)
			if x, ok := ratio(s, g); ok && x >= 2 {
				hardWon = append(hardWon, s.Hunt.Name)
			}
		}
		if x, ok := ratio(s, g); (ok && x < 1) || (!ok && 2*g.Found() <= len(g.Sweeps) && 2*s.Found() > len(s.Sweeps)) {
			worse = append(worse, s.Hunt.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%d/%d\t%s\t%.1fms\t%.1fms\n", s.Hunt.Name, s.Hunt.Kind, mark,
			runsText(s), medianText(s), s.Found(), len(s.Sweeps), runsText(g), medianText(g), g.Found(), len(g.Sweeps),
			speedup(s, g), ms(s), ms(g))
		complete = complete && s.Found() == len(s.Sweeps) && g.Found() == len(g.Sweeps)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nRuns are full simulated runs of the same length; >N: a search that found nothing in N runs. "+
		"SPEEDUP is the swarm median over the guided median (a lower bound \">\" when the swarm median is one). "+
		fmt.Sprintf("A hunt is hard when swarm random's median is above %d runs (or fewer than half its sweeps found one). ", hardRuns)+
		"The guided search's fresh draws are the swarm sweep's seeds, in order, so both meet the same luck.")
	fmt.Fprintf(out, "hard hunts: %d; guided at least 2x fewer runs on %d of them", len(hardN), len(hardWon))
	if miss := without(hardN, hardWon); len(miss) > 0 {
		fmt.Fprintf(out, " (not on %s)", strings.Join(miss, ", "))
	}
	fmt.Fprintf(out, "; guided worse (a higher median) on %d hunts", len(worse))
	if len(worse) > 0 {
		fmt.Fprintf(out, ": %s", strings.Join(worse, ", "))
	}
	fmt.Fprintln(out)
	sq, sr := noFaultOf(swarm)
	gq, gr := noFaultOf(guided)
	fmt.Fprintf(out, "no fault fired (runs that searched nothing) in %d of %s of swarm random and %d of %s of the guided search\n",
		sq, count(sr, "run"), gq, count(gr, "run"))
	if !complete {
		return exitError{judge.ExitUnknown}
	}
	return nil
}

// noFaultOf counts the runs of every exploration in which no fault fired,
// and every run.
func noFaultOf(es []harness.Exploration) (noFault, runs int) {
	for _, e := range es {
		n, r := e.NoFault()
		noFault, runs = noFault+n, runs+r
	}
	return noFault, runs
}

// ratio is swarm's median over guided's, when guided's median is known (it
// is a lower bound when swarm's is not).
func ratio(s, g harness.Exploration) (float64, bool) {
	if 2*g.Found() <= len(g.Sweeps) || g.MedianSeeds() == 0 {
		return 0, false
	}
	return s.MedianSeeds() / g.MedianSeeds(), true
}

// without is a without the names in b.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// runsText is the seeds (or runs) each sweep of an exploration took to its
// first violation, ">n" for one that found none in n: "3 >40 12".
func runsText(e harness.Exploration) string {
	var out []string
	for _, s := range e.Sweeps {
		n := fmt.Sprint(s.Seeds)
		if !s.Found {
			n = ">" + n
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

// speedup is swarm's median over guided's: "-" when guided's median is not
// known, ">x" when only swarm's is a lower bound.
func speedup(s, g harness.Exploration) string {
	if 2*g.Found() <= len(g.Sweeps) || g.MedianSeeds() == 0 {
		return "-"
	}
	x := s.MedianSeeds() / g.MedianSeeds()
	if 2*s.Found() <= len(s.Sweeps) {
		return fmt.Sprintf(">%.1fx", x)
	}
	return fmt.Sprintf("%.1fx", x)
}

func ms(e harness.Exploration) float64 { return float64(e.WallPerSeed().Microseconds()) / 1000 }
