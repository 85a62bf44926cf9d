package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

func newScenariosCmd() *cobra.Command {
	var show, variant string
	cmd := &cobra.Command{
		Use:   "scenarios",
		Short: "List the named counterexamples, or print one's fault schedule",
		Long: `scenarios lists the catalog: one line per scenario with its variants and what it shows.
With --show NAME it prints the fault schedule of a variant (default: the first) as JSON,
in the format 'locklab run --nemesis-file' reads, so it can be saved, edited and replayed;
the run command that goes with it is printed on stderr.`,
		Example: `  locklab scenarios
  locklab scenarios --show redis-failover --variant unsafe > failover.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if show == "" {
				listScenarios(cmd.OutOrStdout())
				return nil
			}
			return showSchedule(cmd.OutOrStdout(), cmd.ErrOrStderr(), show, variant)
		},
	}
	cmd.Flags().StringVar(&show, "show", "", "print the fault schedule of this scenario")
	cmd.Flags().StringVar(&variant, "variant", "", "the variant to show (default: the first)")
	return cmd
}

// listScenarios prints the catalog in termWidth columns: each scenario's name
// and variants on its first line(s), what it shows indented below, a blank
// line between scenarios.
func listScenarios(w io.Writer) {
	width := len("SCENARIO")
	for _, s := range scenario.Catalog() {
		width = max(width, utf8.RuneCountInString(s.Name))
	}
	fmt.Fprintf(w, "%sVARIANTS\n%sWHAT IT SHOWS\n", pad("SCENARIO", width+2), strings.Repeat(" ", 4))
	for _, s := range scenario.Catalog() {
		var names []string
		for _, v := range s.Variants {
			names = append(names, v.Name)
		}
		fmt.Fprintln(w)
		for i, l := range wrap(strings.Join(names, ", "), termWidth-width-2) {
			name := ""
			if i == 0 {
				name = s.Name
			}
			fmt.Fprintf(w, "%s%s\n", pad(name, width+2), l)
		}
		for _, l := range wrap(s.Doc, termWidth-4) {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// findVariant looks a variant up, as a usage error when it does not exist.
func findVariant(name, variant string) (scenario.Scenario, scenario.Variant, error) {
	s, err := scenario.Find(name)
	if err != nil {
		return s, scenario.Variant{}, usageError{err}
	}
	v, err := s.FindVariant(variant)
	if err != nil {
		return s, v, usageError{err}
	}
	return s, v, nil
}

func showSchedule(out, errOut io.Writer, name, variant string) error {
	_, v, err := findVariant(name, variant)
	if err != nil {
		return err
	}
	t := v.ReproTest().WithDefaults()
	sched := nemesis.Schedule{Faults: []nemesis.Fault{}}
	if t.Schedule != nil {
		sched = *t.Schedule
	}
	if _, err := out.Write(sched.JSON()); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "# %s / %s: %s\n# run it: %s --nemesis-file FILE\n", name, v.Name, v.Doc,
		strings.Join(append([]string{"locklab", "run"}, t.Args()...), " "))
	return nil
}

type reproFlags struct {
	variant, out string
	all, verbose bool
	tries        int
	live         liveFlags
}

func newReproCmd() *cobra.Command {
	var f reproFlags
	var lf liveFlags
	cmd := &cobra.Command{
		Use:   "repro NAME",
		Short: "Run a named scenario and compare its verdicts with what it must show",
		Long: `repro runs a scenario variant (default: the first; --all: every variant), prints each
check's verdict next to the expected one, the story of the run (faults, who held the lock
when, with which grant and token, what the storage did), and MATCH or MISMATCH. Each run
is written to a run directory (default runs/repro/NAME/VARIANT) with the command that
replays it.

With --live a variant runs in real time against the real system; one that misses its
expectation (or whose faults did not all fire) runs again, up to --tries times, each miss
said in a line, and the outcome says in which try it matched: a real-time run can miss
the moment its story needs, while a model that disagrees with the real system misses
every try.

Exit codes: 0 every variant matched; 1 a variant did not match its expectation;
2 usage error; 4 the harness crashed.`,
		Example: `  locklab repro redlock-clock-jump --variant unsafe
  locklab repro redis-failover --all`,
		Args: reproArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := lf.validate(cmd.Flags()); err != nil {
				return err
			}
			if cmd.Flags().Changed("tries") && !lf.live {
				return usage("--tries needs --live (a simulated run gives the same outcome every time)")
			}
			if f.tries < 1 {
				return usage("--tries %d: want at least one try", f.tries)
			}
			f.live = lf
			return runRepro(cmd.OutOrStdout(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.variant, "variant", "", "the variant to run (default: the first)")
	fl.BoolVar(&f.all, "all", false, "run every variant")
	fl.StringVar(&f.out, "out", filepath.Join("runs", "repro"), "base directory of the run directories")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print the checks' counterexamples in full")
	fl.IntVar(&f.tries, "tries", 5, "with --live: run a variant up to this many times, until it matches and every fault fired "+
		"(a real-time run can miss the moment its story needs; a model that disagrees with the real system misses every try)")
	addLiveFlags(fl, &lf)
	return cmd
}

// reproArgs wants the one scenario repro runs; without it, the usage error
// lists the catalog, a scenario a line, so the next command can be typed.
func reproArgs(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		var b strings.Builder
		fmt.Fprintln(&b, "repro needs the name of the scenario to run, one of:")
		scenarioLines(&b)
		fmt.Fprint(&b, "('locklab scenarios' lists each one's variants and what it shows in full)")
		return usageError{errors.New(b.String())}
	}
	return usage("repro runs one scenario, got %d: %s", len(args), strings.Join(args, " "))
}

// scenarioLines lists the catalog a scenario a line: its name and the
// beginning of what it shows, cut to termWidth.
func scenarioLines(w io.Writer) {
	width := 0
	for _, s := range scenario.Catalog() {
		width = max(width, utf8.RuneCountInString(s.Name))
	}
	for _, s := range scenario.Catalog() {
		fmt.Fprintf(w, "  %s%s\n", pad(s.Name, width+2), oneLine(s.Doc, termWidth-width-4))
	}
}

// oneLine is text's beginning that fits in width, cut between words with
// "…" when the rest does not fit.
func oneLine(text string, width int) string {
	lines := wrap(text, width-2) // room for " …"
	if len(lines) == 1 {
		return lines[0]
	}
	return strings.TrimRight(lines[0], ",;:") + " …"
}

func runRepro(out io.Writer, name string, f reproFlags) error {
	s, v, err := findVariant(name, f.variant)
	if err != nil {
		return err
	}
	variants := []scenario.Variant{v}
	if f.all {
		if f.variant != "" {
			return usage("--all and --variant exclude each other")
		}
		variants = s.Variants
	}
	if f.live.live {
		return runReproLive(out, s, variants, f, f.live)
	}
	mismatches := 0
	for _, v := range variants {
		o, err := harness.ReproWith(v, runRecorded)
		if err != nil {
			if errors.Is(err, harness.ErrCrash) {
				return err
			}
			return usageError{err}
		}
		if err := printOutcome(out, s, o, filepath.Join(f.out, s.Name, v.Name), f.verbose, ""); err != nil {
			return err
		}
		if !o.Match() {
			mismatches++
		}
	}
	if f.all {
		fmt.Fprintf(out, "%s: %d of %d variants matched\n", s.Name, len(variants)-mismatches, len(variants))
	}
	if mismatches > 0 {
		return exitError{judge.ExitInvalid}
	}
	return nil
}

// runRecorded runs a test keeping the servers' record of grants, which the
// run's report shows beside the history, and the storage's record of writes.
func runRecorded(t scenario.Test) (scenario.Result, error) {
	p, err := harness.Prepare(t)
	if err != nil {
		return scenario.Result{}, err
	}
	p.RecordRecords()
	return p.Run()
}

// printOutcome prints and writes one variant's outcome; command replays it
// ("": the simulated run's command).
func printOutcome(out io.Writer, s scenario.Scenario, o harness.Outcome, dir string, verbose bool, command string) error {
	return printOutcomeUnder(out, s, o, dir, verbose, command, "")
}

// printOutcomeUnder is printOutcome with head, lines said under the
// variant's header and replay line.
func printOutcomeUnder(out io.Writer, s scenario.Scenario, o harness.Outcome, dir string, verbose bool, command, head string) error {
	v, r := o.Variant, o.Result
	if command == "" {
		command = replayCommand(r.Test, scheduleFile(r.Test), dir)
	}
	run := judge.Report(r, command)
	if _, live := r.SystemFigures["live"]; live {
		markLive(&run, r)
	}
	if len(v.Expect) > 0 || v.Assert != nil {
		run.Expected = &reports.Expected{Scenario: s.Name, Variant: v.Name, Verdicts: maps.Clone(v.Expect),
			Match: o.Match(), Mismatches: slices.Clone(o.Mismatches)}
	}
	story := scenario.Story(r)
	run.Attachments = append(run.Attachments, reports.Attachment{Name: "story.txt", Label: "story",
		Write: func(w io.Writer) error { _, err := io.WriteString(w, strings.Join(story, "\n")+"\n"); return err }})
	if err := reports.WriteDir(dir, run); err != nil {
		return err
	}
	recordRun(os.Stderr, dir)
	fmt.Fprintf(out, "== %s / %s\n%s\nreplay: %s\n", s.Name, v.Name, v.Doc, command)
	fmt.Fprintf(out, "%s\n", head)
	if w := run.FaultWarning(); w != "" {
		fmt.Fprintf(out, "WARNING: %s\n\n", w)
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  CHECK\tEXPECTED\tGOT\t")
	for _, vd := range r.Verdicts {
		want, asserted := v.Expect[vd.Check]
		mark := ""
		switch {
		case !asserted:
			want, mark = "-", ""
		case want == vd.Result:
			mark = "ok"
		default:
			mark = "MISMATCH"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", vd.Check, want, strings.ToUpper(string(vd.Result)), mark)
	}
	if v.Assert != nil {
		mark := "ok"
		if err := v.Assert(r); err != nil {
			mark = "MISMATCH"
		}
		fmt.Fprintf(tw, "  (assertion)\tholds\t\t%s\n", mark)
	}
	tw.Flush()
	for _, vd := range r.Verdicts {
		if vd.Result != models.Valid {
			fmt.Fprintf(out, "  %s: %s\n", vd.Check, vd.Reason)
		}
		if vd.Counterexample == nil {
			continue
		}
		lines := reports.ExplanationLines(vd.Counterexample.Explanation, r.Events)
		for i, line := range lines {
			if i == 4 && !verbose {
				fmt.Fprintf(out, "      ... (%d more lines with -v)\n", len(lines)-i)
				break
			}
			fmt.Fprintf(out, "      %s\n", line)
		}
	}
	fmt.Fprintln(out, "\nstory:")
	for _, line := range story {
		fmt.Fprintf(out, "  %s\n", line)
	}
	if o.Match() {
		fmt.Fprintf(out, "\nMATCH  (run directory: %s)\n\n", dir)
		return nil
	}
	fmt.Fprintln(out, "\nMISMATCH:")
	for _, m := range o.Mismatches {
		fmt.Fprintf(out, "  %s\n", m)
	}
	fmt.Fprintf(out, "(run directory: %s)\n\n", dir)
	return nil
}

// scheduleFile is non-empty when the test's schedule is replayed from the run
// directory's copy.
func scheduleFile(t scenario.Test) string {
	if t.Schedule != nil {
		return reports.ScheduleFile
	}
	return ""
}
