package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/shrink"
	"github.com/locklab/locklab/sweep"
)

type exploreFlags struct {
	hunts           []string
	starts, maxSeed int
	first           uint64
	simTime         time.Duration
	progress        progressMode
	story           bool
	shrink          bool
	runsDir         string
	guided, compare bool
	// jobs is how many searches (sweeps, guided searches) run at once.
	jobs int
}

// progressMode is how explore shows its progress on stderr.
type progressMode int

const (
	// progressBar redraws a bar (a terminal).
	progressBar progressMode = iota
	// progressLines prints a line per finished sweep, and every few seconds
	// within a long one (a log file or a pipe).
	progressLines
	// progressNone prints nothing.
	progressNone
)

func newExploreCmd() *cobra.Command {
	var f exploreFlags
	var bar, all bool
	names := harness.HuntNames()
	cmd := &cobra.Command{
		Use:   "explore",
		Short: "Measure how many random-fault seeds it takes to rediscover each catalog counterexample",
		Long: `explore runs, for each hunt, the unsafe variant of a catalog scenario with random faults
(--nemesis random: swarm style, each seed draws the fault kinds, their weights and rate)
instead of its schedule, seed after seed, until a run fails a check with a violation of the
hunt's kind. The hunts are derived from the catalog: every unsafe variant declares the kind
of violation it shows, one of:
` + violationKindList() + `
It does so from several starting seeds (sweeps of --max-seeds each; -j of them at once) and
reports the seeds each sweep needed, their median (when a sweep found one), and the machine
time per seed. On a terminal stderr shows a progress bar; otherwise (a log file, a pipe, CI) a
line per finished sweep and, within a long sweep, every few seconds: seeds done, rate,
findings so far.

--guided replaces the swarm draws by a coverage-guided search (a corpus of schedules that
reached new coverage, mutated; deterministic from --first), and writes each finding, a mutated
schedule, as a run directory under --runs-dir; its fresh draws are the seeds a swarm sweep
from the same start runs, in order, with mutations (directed at the hunt's kind) interleaved.
--compare runs both searches from the same starts and prints runs to the first violation side
by side, marks the hard hunts (swarm's median above 20 runs) and ends with a line against the
goals (guided at least 2x fewer runs on the hard hunts, worse on none). --shrink shrinks each
first finding.

Hunts (--hunt takes a hunt, or a scenario with one hunt; --all, the default, runs every one):
  ` + strings.Join(names, "\n  ") + `

Exit codes: 0 every sweep found its violation; 3 some sweep found none within --max-seeds
(the output ends with a line naming those hunts); 2 usage error; 4 the harness crashed.
Without flags, explore exits 3: with the defaults (5 starts of at most 2000 seeds) a few of
the hardest hunts have a sweep that finds nothing, the same on every machine (the seeds a
sweep needs do not depend on it). A script that wants every sweep to find its violation checks
for 0; one that only wants explore to have run treats 3 as a result, not a failure.`,
		Example: `  locklab explore
  locklab explore --all --starts 9 --shrink
  locklab explore --hunt redlock-clock-jump --starts 9 --max-seeds 5000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.progress = progressOf(cmd, bar)
			if all && cmd.Flags().Changed("hunt") {
				return usage("--all and --hunt exclude each other: --all runs every hunt")
			}
			return runExplore(cmd.OutOrStdout(), cmd.ErrOrStderr(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.hunts, "hunt", names, "hunts to run (a hunt, or a scenario with one hunt)")
	fl.BoolVar(&all, "all", false, "run every hunt (the default without --hunt)")
	fl.IntVarP(&f.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "searches run at once (each sweep stays sequential: the seeds it needs do not depend on -j)")
	fl.IntVar(&f.starts, "starts", 5, "number of starting seeds (sweeps) per hunt")
	fl.Uint64Var(&f.first, "first", 1, "the first starting seed; sweep i starts at first + i*max-seeds")
	fl.IntVar(&f.maxSeed, "max-seeds", 2000, "seeds per sweep at most")
	fl.DurationVar(&f.simTime, "time", 60*time.Second, "simulated duration of each seed's run")
	fl.BoolVar(&bar, "progress", true, "show a progress bar on stderr: seeds done, rate, ETA (default: a bar on a terminal, "+
		"else a line per sweep; false: nothing)")
	fl.BoolVar(&f.story, "story", false, "print the story of each hunt's first finding")
	fl.BoolVar(&f.shrink, "shrink", false, "shrink each hunt's first finding to a minimal schedule that shows the hunt's violation (see locklab shrink), "+
		"written to --runs-dir/<hunt>-seed<N>-shrunk")
	fl.StringVar(&f.runsDir, "runs-dir", "runs", "where explore writes run directories (--shrink's minimal runs, --guided's findings)")
	fl.BoolVar(&f.guided, "guided", false, "coverage-guided search instead of swarm random (see below); --first is the first search's seed, --max-seeds its runs at most")
	fl.BoolVar(&f.compare, "compare", false, "run swarm random and guided side by side from the same --starts and print runs to the first violation of each, "+
		"median and speedup (use --starts 9 or more)")
	return cmd
}

// violationKinds are the kinds of violation a hunt looks for, each with what
// made the second holder get the lock: explore's help and the kinds table of
// docs/scenarios.md (locklab docs) are both printed from it.
var violationKinds = []struct{ kind, doc string }{
	{scenario.KindGCPause, "the earlier holder was paused across its lease deadline"},
	{scenario.KindClockJump, "a server whose clock jumped or drifted granted both holders"},
	{scenario.KindFailover, "the later grant came from a promoted replica"},
	{scenario.KindRestartRegrant, "a server that granted the earlier holder restarted empty and granted again"},
	{scenario.KindNonOwnerRelease, "a third client released a lock it no longer held (DEL unlock)"},
	{scenario.KindLeaderClockAhead, "a server whose clock was set ahead granted before the lease ran out"},
	{scenario.KindHolderClock, "a holder's own clock jumped or drifted around its grant"},
	{scenario.KindSessionExpiry, "a holder without a lease deadline was paused or cut off, its session expired"},
	{scenario.KindDelayedWrite, "a write delayed in the network was overtaken by another client's grant"},
}

// violationKindList is violationKinds as explore's help shows them, one a line.
func violationKindList() string {
	var lines []string
	for _, k := range violationKinds {
		lines = append(lines, "  "+pad(k.kind, 20)+k.doc)
	}
	return strings.Join(lines, "\n")
}

func runExplore(out, errOut io.Writer, f exploreFlags) error {
	if f.starts < 1 || f.maxSeed < 1 || f.simTime <= 0 {
		return usage("--starts, --max-seeds and --time must be positive")
	}
	if f.jobs < 1 {
		return usage("-j %d: want at least 1", f.jobs)
	}
	// Seed after seed of short-lived worlds: the sweep's collector setting.
	defer sweep.TuneGC()()
	var hunts []harness.Hunt
	for _, name := range f.hunts {
		h, err := harness.FindHunt(name)
		if err != nil {
			return usage("--hunt: %w", err)
		}
		h.Time = f.simTime
		hunts = append(hunts, h)
	}
	total := len(hunts) * f.starts * f.maxSeed
	if f.compare {
		total *= 2
	}
	bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(errOut), progressbar.OptionSetVisibility(f.progress == progressBar),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("seeds"),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
	var log *progressLog
	if f.progress == progressLines {
		log = newProgressLog(errOut, time.Now, total)
		fmt.Fprintf(errOut, "explore: %s x %s of at most %s, %v simulated each\n",
			count(len(hunts), "hunt"), count(f.starts, "sweep"), count(f.maxSeed, "seed"), f.simTime)
	}
	// The searches are independent: -j of them run at once, each sequential
	// (its seeds one after the other, its Wall its own), their results
	// placed by hunt and start so the table does not depend on -j. The
	// progress bar is safe for concurrent use; the line log and the
	// remaining total are not.
	var mu sync.Mutex
	// search runs one sweep (swarm) or one guided search, start i of hunt h.
	search := func(h harness.Hunt, i int, guided bool) (harness.Sweep, error) {
		what := "sweep"
		if guided {
			what = "guided"
		}
		label := fmt.Sprintf("%s %s %d/%d", h.Name, what, i+1, f.starts)
		bar.Describe(label)
		progress := func() {
			_ = bar.Add(1)
			mu.Lock()
			log.seed(label)
			mu.Unlock()
		}
		var sw harness.Sweep
		var err error
		if guided {
			sw, err = guidedSweep(h, f.first+uint64(i), f.first+uint64(i*f.maxSeed), f.maxSeed, progress)
		} else {
			sw, err = h.Sweep(f.first+uint64(i*f.maxSeed), f.maxSeed, progress)
		}
		if err != nil {
			return sw, err
		}
		mu.Lock()
		defer mu.Unlock()
		// A sweep that ended early will not run its remaining seeds.
		total -= f.maxSeed - sw.Seeds
		bar.ChangeMax(total)
		log.sweep(label, sw, f.maxSeed)
		return sw, nil
	}
	results, guidedResults, err := exploreAll(hunts, f, search)
	if err != nil {
		return err
	}
	_ = bar.Finish()
	switch {
	case f.compare:
		return printComparison(out, results, guidedResults)
	case f.guided:
		return printExplorations(out, guidedResults, f)
	}
	return printExplorations(out, results, f)
}

// exploreAll runs every search of the hunts — each start a swarm sweep, a
// guided search or both (--compare) — on -j workers, and places each
// result by hunt and start, so the tables do not depend on -j. After a
// search fails the rest are not run, and the first error is returned.
func exploreAll(hunts []harness.Hunt, f exploreFlags, search func(h harness.Hunt, i int, guided bool) (harness.Sweep, error)) (results, guidedResults []harness.Exploration, err error) {
	type task struct {
		hunt, start int
		guided      bool
	}
	var tasks []task
	results, guidedResults = make([]harness.Exploration, len(hunts)), make([]harness.Exploration, len(hunts))
	for hi, h := range hunts {
		results[hi], guidedResults[hi] = harness.Exploration{Hunt: h}, harness.Exploration{Hunt: h}
		for i := range f.starts {
			if !f.guided || f.compare {
				tasks = append(tasks, task{hi, i, false})
				results[hi].Sweeps = append(results[hi].Sweeps, harness.Sweep{})
			}
			if f.guided || f.compare {
				tasks = append(tasks, task{hi, i, true})
				guidedResults[hi].Sweeps = append(guidedResults[hi].Sweeps, harness.Sweep{})
			}
		}
	}
	errs := make([]error, len(tasks))
	next := make(chan int)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(f.jobs, len(tasks)) {
		wg.Go(func() {
			for ti := range next {
				if failed.Load() {
					continue // an earlier search failed: the rest are not run
				}
				tk := tasks[ti]
				sw, err := search(hunts[tk.hunt], tk.start, tk.guided)
				if err != nil {
					errs[ti] = err
					failed.Store(true)
					continue
				}
				if tk.guided {
					guidedResults[tk.hunt].Sweeps[tk.start] = sw
				} else {
					results[tk.hunt].Sweeps[tk.start] = sw
				}
			}
		})
	}
	for ti := range tasks {
		next <- ti
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return results, guidedResults, nil
}

func printExplorations(out io.Writer, results []harness.Exploration, f exploreFlags) error {
	anyFound := false
	for _, e := range results {
		anyFound = anyFound || e.Found() > 0
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	// A median of sweeps that found nothing would be a number of seeds that
	// showed nothing: the column is left out when no sweep found anything.
	median := func(e harness.Exploration) string { return "" }
	header := "HUNT\tKIND\tSEEDS TO FIRST VIOLATION\tFOUND\tNO FAULT FIRED\tWALL/SEED"
	if anyFound {
		median = func(e harness.Exploration) string { return medianText(e) + "\t" }
		header = "HUNT\tKIND\tSEEDS TO FIRST VIOLATION\tMEDIAN\tFOUND\tNO FAULT FIRED\tWALL/SEED"
	}
	fmt.Fprintln(tw, header)
	complete := true
	for _, e := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%d/%d\t%s\t%.1fms\n", e.Hunt.Name, e.Hunt.Kind,
			runsText(e), median(e), e.Found(), len(e.Sweeps), noFaultText(e), float64(e.WallPerSeed().Microseconds())/1000)
		complete = complete && e.Found() == len(e.Sweeps)
	}
	tw.Flush()
	fmt.Fprintln(out, "NO FAULT FIRED: the runs in which no fault took effect (the random nemesis drew none, or none fired); "+
		"they searched nothing, and count among the seeds all the same.")
	for _, e := range results {
		if e.Found() == 0 {
			seeds := 0
			for _, s := range e.Sweeps {
				seeds += s.Seeds
			}
			fmt.Fprintf(out, "\n%s found no %s violation in %s: raise --max-seeds or --starts\n",
				e.Hunt.Name, e.Hunt.Kind, count(seeds, "seed"))
			continue
		}
		for _, s := range e.Sweeps {
			if !s.Found {
				continue
			}
			if s.Finding != nil {
				if err := writeFinding(out, e.Hunt, s, f.runsDir); err != nil {
					return err
				}
			} else {
				t, err := e.Hunt.Test(s.Seed)
				if err != nil {
					return err
				}
				s.Finding = &t
				fmt.Fprintf(out, "\n%s first found at seed %d: %s\n", e.Hunt.Name, s.Seed,
					strings.Join(append([]string{"locklab", "run"}, t.WithDefaults().Args()...), " "))
			}
			t := *s.Finding
			if f.story {
				r, err := harness.Run(t)
				if err != nil {
					return err
				}
				for _, line := range scenario.Story(r) {
					fmt.Fprintf(out, "  %s\n", line)
				}
			}
			if f.shrink {
				if err := shrinkFinding(out, e.Hunt, t, f.runsDir); err != nil {
					return err
				}
			}
			break
		}
	}
	if !complete {
		fmt.Fprintf(out, "\n%s\n", incompleteLine(results, f.maxSeed))
		return exitError{judge.ExitUnknown}
	}
	return nil
}

// incompleteLine says why explore exits 3: which hunts had a sweep that
// found nothing within its budget, and how to search further.
func incompleteLine(results []harness.Exploration, maxSeeds int) string {
	var short []string
	sweeps, empty := 0, 0
	for _, e := range results {
		sweeps += len(e.Sweeps)
		empty += len(e.Sweeps) - e.Found()
		if e.Found() < len(e.Sweeps) {
			short = append(short, e.Hunt.Name)
		}
	}
	return fmt.Sprintf("exit 3: %d of %s found no violation within --max-seeds %d (%s); raise --max-seeds or --starts to search further",
		empty, count(sweeps, "sweep"), maxSeeds, strings.Join(short, ", "))
}

// noFaultText is how many of a hunt's runs fired no fault: "3 of 120 runs".
func noFaultText(e harness.Exploration) string {
	n, runs := e.NoFault()
	return fmt.Sprintf("%d of %s", n, count(runs, "run"))
}

// medianText is the median number of seeds the sweeps needed: "-" when none
// found a violation, ">N" when too few did for the median to be known (a
// sweep that found nothing needed more seeds than it ran).
func medianText(e harness.Exploration) string {
	switch {
	case e.Found() == 0:
		return "-"
	case 2*e.Found() <= len(e.Sweeps):
		return fmt.Sprintf(">%.1f", e.MedianSeeds())
	}
	return fmt.Sprintf("%.1f", e.MedianSeeds())
}

// progressLog prints explore's progress as lines, for a stderr that is not a
// terminal: one per finished sweep, and one every progressEvery within a long
// sweep. A nil *progressLog prints nothing.
type progressLog struct {
	w            io.Writer
	now          func() time.Time
	start, last  time.Time
	seeds, total int
	found        int
}

// progressEvery is the longest silence within a sweep.
const progressEvery = 5 * time.Second

func newProgressLog(w io.Writer, now func() time.Time, total int) *progressLog {
	t := now()
	return &progressLog{w: w, now: now, start: t, last: t, total: total}
}

// seed counts a finished seed and prints a line when the last one is
// progressEvery old.
func (p *progressLog) seed(label string) {
	if p == nil {
		return
	}
	p.seeds++
	if p.now().Sub(p.last) >= progressEvery {
		fmt.Fprintf(p.w, "explore: %s: %s\n", label, p.status())
	}
}

// sweep prints the outcome of a finished sweep.
func (p *progressLog) sweep(label string, sw harness.Sweep, maxSeeds int) {
	if p == nil {
		return
	}
	// The sweep ended early: its remaining seeds will not run.
	p.total -= maxSeeds - sw.Seeds
	what := fmt.Sprintf("nothing in %s from seed %d", count(sw.Seeds, "seed"), sw.Start)
	if sw.Found {
		p.found++
		what = fmt.Sprintf("found at seed %d, after %s", sw.Seed, count(sw.Seeds, "seed"))
	}
	fmt.Fprintf(p.w, "explore: %s: %s in %v; %s\n", label, what, sw.Wall.Round(time.Millisecond), p.status())
}

// status is the seeds done, the rate, the findings so far and the time left
// at most.
func (p *progressLog) status() string {
	p.last = p.now()
	elapsed := p.last.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.seeds) / elapsed.Seconds()
	}
	s := fmt.Sprintf("%d of at most %s done, %.0f seeds/s, %s so far", p.seeds, count(p.total, "seed"), rate,
		count(p.found, "finding"))
	if left := p.total - p.seeds; left > 0 && rate > 0 {
		s += fmt.Sprintf(", at most %v left", time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))
	}
	return s
}

// count is n and the word, plural unless n is 1: "1 seed", "2 seeds".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// shrinkFinding shrinks a hunt's finding to a minimal run that still shows a
// violation of the hunt's kind, written to dir/<hunt>-seed<N>-shrunk.
func shrinkFinding(out io.Writer, h harness.Hunt, t scenario.Test, dir string) error {
	r, err := harness.Run(t)
	if err != nil {
		return err
	}
	g, ok := shrink.TargetOf(r)
	if !ok {
		return fmt.Errorf("%s seed %d: the finding fails no check on a second run", h.Name, t.Seed)
	}
	g.Kind = h.Kind
	name := fmt.Sprintf("%s-seed%d-shrunk", strings.ReplaceAll(h.Name, "/", "-"), t.Seed)
	fmt.Fprintln(out)
	return shrinkInto(out, t, filepath.Join(dir, name), fmt.Sprintf("%s seed %d", h.Name, t.Seed), shrink.Options{Target: &g})
}
