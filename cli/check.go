package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

type checkFlags struct {
	checks, storage, resource, out string
	format                         string
	initial, opts                  []string
	fenceReads                     bool
	steps                          int64
	budget                         time.Duration
}

// checkConfig is the configuration of a `locklab check` run as results.json
// records it, every value spelled out.
type checkConfig struct {
	History string `json:"history"`
	// Format is the history's format: locklab or jepsen.
	Format string `json:"format"`
	// Checks are the checks as asked ("default": every one that applies).
	Checks     []string `json:"checks"`
	Storage    string   `json:"storage"`
	FenceReads bool     `json:"fence_reads"`
	Resource   string   `json:"resource"`
	// Initial are the resource's initial values as given (none: unknown).
	Initial []string `json:"initial"`
	// Options are the -o options as given.
	Options map[string]string `json:"options"`
	// Steps is the step budget of each key's search (-1: unbounded).
	Steps int64 `json:"check_steps"`
	// Budget is the wall-clock budget of each key's search ("unbounded").
	Budget string `json:"check_budget"`
}

// flagOptions are the check options (-o) that a flag of check also sets:
// giving both would silently let one replace the other.
var flagOptions = map[string]string{"steps": "--check-steps", "time": "--check-budget", "storage": "--storage",
	"fence-reads": "--fence-reads", "resource": "--resource"}

// validate rejects typed values that would be replaced or ignored.
func (f checkFlags) validate(fl *pflag.FlagSet) error {
	if err := noEmptyStrings(fl); err != nil {
		return err
	}
	if err := checkBudgetFlags(f.budget, f.steps); err != nil {
		return err
	}
	opts, err := parseOpts("--opt", f.opts)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if flag, ok := flagOptions[k]; ok && fl.Changed(strings.TrimPrefix(flag, "--")) {
			return usage("-o %s=%s and %s both set it: give one", k, opts[k], flag)
		}
	}
	if !slices.Contains(historyFormats, f.format) {
		return usage("--format %q: want %s", f.format, strings.Join(historyFormats, " or "))
	}
	if f.fenceReads && f.storage != "fenced" {
		return usage("--fence-reads needs --storage fenced (an unfenced storage fences nothing)")
	}
	_, err = checkNames(f.checks, fl.Changed("checks"))
	return err
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check HISTORY.jsonl|HISTORY.edn",
		Short: "Check a history recorded anywhere (the locklab history format, or a Jepsen lock test's history.edn)",
		Long: `check reads a history in the locklab format (JSON Lines, version 1: see
'go doc github.com/locklab/locklab/history'), or with --format jepsen the
history.edn of a Jepsen lock test, or its directory in Jepsen's store
(:acquire/:release or :lock/:unlock operations, nemesis operations as faults,
the history's order as the order in time; the mapping is in the same
documentation, "Jepsen histories"), runs the checks on it and prints the
verdicts with their counterexamples. The exit codes are those of run:
0 valid, 1 a safety check invalid, 2 bad input (the error names file:line),
3 undecided or a liveness failure, 5 the lock broke but the data is safe (only
mutual-exclusion or lease invalid; critical-sections and fencing-tokens valid).

By default every check that applies to the history runs; the others are listed
with the reason. A check named with --checks always runs, and says unknown when
it cannot decide. Initial values of the resource are unknown unless given with
--initial (any first value is then accepted).`,
		Example: `  locklab check runs/redis-fenced-counter-unfenced-pause-seed7/history.jsonl
  locklab check my.jsonl --initial '*=0' --storage fenced --out my-report
  locklab check my.jsonl --checks lease,fencing-tokens -o stall=5s
  locklab check --format jepsen store/latest/history.edn
  locklab check --format jepsen store/etcd-lock/20170101T120000.000Z`,
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return usage("check needs a history file: the history.jsonl of a run directory " +
					"(locklab check runs/latest/history.jsonl), one of your own in the same format, or a Jepsen history.edn with --format jepsen")
			case 1:
				return nil
			}
			return usage("check reads one history file, got %d: %s", len(args), strings.Join(args, " "))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(cmd.Flags()); err != nil {
				return err
			}
			return runCheck(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "locklab", "the history's format: locklab (JSON Lines) or jepsen (a Jepsen history.edn of a lock test)")
	fl.StringVar(&f.checks, "checks", "", "comma-separated checks to run (default: every one that applies of "+strings.Join(scenario.CheckNames, ", ")+"); +name adds a check to the default selection")
	fl.StringArrayVar(&f.initial, "initial", nil, "initial value of a resource key, key=value (repeatable; *=value for every key)")
	fl.StringVar(&f.storage, "storage", "unfenced", "storage mode: fenced (it rejects stale tokens: check its accepted tokens, and run the fencing check by default) or unfenced")
	fl.BoolVar(&f.fenceReads, "fence-reads", false, "the fenced storage fences reads too")
	fl.StringVar(&f.resource, "resource", "auto", "resource shape: auto, counter, stock or list")
	fl.StringArrayVarP(&f.opts, "opt", "o", nil, "check option key=value (repeatable): "+strings.Join(models.ConfigKeys, ", "))
	fl.Int64Var(&f.steps, "check-steps", models.DefaultSteps, "step budget of each key's search, deterministic (-1: unbounded)")
	fl.DurationVar(&f.budget, "check-budget", 60*time.Second, "wall-clock budget of each key's search (0: unbounded)")
	fl.StringVar(&f.out, "out", "", "also write a run directory (history, results.json, summary, Porcupine visualizations); a run directory from before is replaced whole, any other non-empty directory is refused")
	return cmd
}

// config turns the flags into the checks' configuration.
func (f checkFlags) config() (models.Config, error) {
	var cfg models.Config
	set := func(flag, key, val string) error {
		if err := cfg.Set(key, val); err != nil {
			return usage("%s: %w", flag, err)
		}
		return nil
	}
	if err := set("--storage", "storage", f.storage); err != nil {
		return cfg, err
	}
	if err := set("--resource", "resource", f.resource); err != nil {
		return cfg, err
	}
	cfg.ReadsFenced = f.fenceReads
	cfg.Budget = models.Budget{Steps: f.steps, Time: f.budget}
	if f.steps < 0 {
		cfg.Budget.Steps = -1
	}
	for _, kv := range f.initial {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cfg, usage("--initial %q: want key=value", kv)
		}
		if err := set("--initial", "initial", k+":"+v); err != nil {
			return cfg, err
		}
	}
	opts, err := parseOpts("--opt", f.opts)
	if err != nil {
		return cfg, err
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if err := set("--opt", k, opts[k]); err != nil {
			return cfg, err
		}
	}
	if _, ok := opts["steps"]; ok && (cfg.Budget.Steps == 0 || cfg.Budget.Steps < -1) {
		return cfg, usage("-o steps=%s: want a positive number of steps, or -1 for no bound", opts["steps"])
	}
	if _, ok := opts["time"]; ok && cfg.Budget.Time < 0 {
		return cfg, usage("-o time=%s: want a positive duration, or 0 for no wall-clock bound", opts["time"])
	}
	return cfg, nil
}

func runCheck(cmd *cobra.Command, path string, f checkFlags) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	names, err := checkNames(f.checks, cmd.Flags().Changed("checks"))
	if err != nil {
		return err
	}
	if f.format == "jepsen" {
		path = history.JepsenPath(path) // a directory of Jepsen's store: its history.edn
	}
	events, jepsen, err := readHistory(path, f.format)
	if err != nil {
		var pe *history.ParseError
		if inRun := filepath.Join(path, reports.HistoryFile); errors.Is(err, history.ErrIsDirectory) && fileExists(inRun) {
			return usage("%w (the run directory's history is %s)", err, inRun)
		}
		if errors.As(err, &pe) && f.format == "locklab" && strings.HasSuffix(path, ".edn") {
			return usage("%w (a Jepsen history? add --format jepsen)", err)
		}
		if errors.As(err, &pe) && f.format == "jepsen" && looksLikeJSON(path) {
			return usage("%w (JSON, not EDN: a history in the locklab format is read without --format jepsen)", err)
		}
		if errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) ||
			errors.Is(err, history.ErrIsDirectory) {
			return usageError{err}
		}
		return err
	}
	var jepsenSkipped []models.Skipped
	asked := names // as results.json records them
	if jepsen != nil && !cmd.Flags().Changed("checks") {
		if tokensGranted(events) {
			// A Jepsen history names no storage that fences: the tokens
			// are judged because the history records them.
			names = []string{"+fencing-tokens"}
			asked = names
		}
		if names, jepsenSkipped, err = jepsenChecks(cfg, names, events); err != nil {
			return usageError{err}
		}
	}
	if f.out != "" {
		if err := reports.CheckOutDir(f.out); err != nil {
			return err
		}
	}
	read := jepsenLines(jepsen, names)
	var checked judge.Checked
	if jepsenSkipped == nil || len(names) > 0 {
		if checked, err = judge.CheckHistory(cfg, names, events); err != nil {
			return usageError{err}
		}
	}
	if jepsenSkipped != nil {
		checked.Skipped = jepsenSkipped
	}
	run := reports.Run{
		Command:  checkCommand(path, f),
		Config:   f.record(path, asked, cfg),
		Events:   events,
		Verdicts: checked.Verdicts,
		Overall:  models.Overall(checked.Verdicts),
		ExitCode: judge.ExitCode(checked.Verdicts),
		Summary:  models.Summarize(events),
		Extra:    map[string]any{"checks": checked.Record(cfg.Budget)},
	}
	if jepsen != nil {
		run.Extra["jepsen"] = jepsenRecord(jepsen)
	}
	if len(checked.Verdicts) == 0 {
		run.ExitCode = judge.ExitUnknown
	}
	out := cmd.OutOrStdout()
	if f.out != "" {
		run.Attachments = judge.Attachments(checked.Verdicts)
		if run.Printed, err = checkOutput(path, run, checked, f.out, read); err != nil {
			return err
		}
		if err := reports.WriteDir(f.out, run); err != nil {
			text, _ := checkOutput(path, run, checked, "", read)
			fmt.Fprint(out, text)
			return err
		}
		recordRun(cmd.ErrOrStderr(), f.out)
	}
	text, err := checkOutput(path, run, checked, f.out, read)
	if err != nil {
		return err
	}
	fmt.Fprint(out, text)
	if run.ExitCode != judge.ExitValid {
		return exitError{run.ExitCode}
	}
	return nil
}

// fileExists reports whether path is a regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// checkOutput is what check prints: the history's size, what reading it
// made of it (read: a Jepsen history's account), the summary (with
// the run directory dir, when set), the counterexamples and the checks left
// out.
func checkOutput(path string, run reports.Run, checked judge.Checked, dir, read string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", path, history.Plural(len(run.Events), "event", ""))
	b.WriteString(read)
	if err := reports.PrintSummary(&b, run, dir); err != nil {
		return "", err
	}
	if err := judge.PrintCounterexamples(&b, checked.Verdicts); err != nil {
		return "", err
	}
	for _, s := range checked.Skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.Check, s.Reason)
	}
	if len(checked.Verdicts) == 0 {
		fmt.Fprintln(&b, "no check applies to this history: nothing was judged (exit 3)")
	}
	return b.String(), nil
}

func (f checkFlags) record(path string, names []string, cfg models.Config) checkConfig {
	opts, _ := parseOpts("--opt", f.opts)
	if opts == nil {
		opts = map[string]string{}
	}
	c := checkConfig{History: path, Format: f.format, Checks: names, Storage: "unfenced", FenceReads: cfg.ReadsFenced, Resource: f.resource,
		Initial: f.initial, Options: opts, Steps: cfg.Budget.Steps, Budget: "unbounded"}
	if cfg.StorageFenced {
		c.Storage = "fenced"
	}
	if cfg.Resource != "" {
		c.Resource = string(cfg.Resource)
	}
	if len(c.Checks) == 0 {
		c.Checks = []string{"default"}
	}
	if c.Initial == nil {
		c.Initial = []string{}
	}
	switch {
	case c.Steps == 0:
		c.Steps = models.DefaultSteps
	case c.Steps < 0:
		c.Steps = -1
	}
	if cfg.Budget.Time > 0 {
		c.Budget = cfg.Budget.Time.String()
	}
	return c
}

// checkCommand is the command line that repeats the check.
func checkCommand(path string, f checkFlags) string {
	args := []string{"locklab", "check", path, "--storage", f.storage}
	if f.format != "locklab" {
		args = append(args, "--format", f.format)
	}
	if f.checks != "" {
		args = append(args, "--checks", f.checks)
	}
	if f.resource != "auto" {
		args = append(args, "--resource", f.resource)
	}
	if f.fenceReads {
		args = append(args, "--fence-reads")
	}
	for _, kv := range f.initial {
		args = append(args, "--initial", kv)
	}
	for _, kv := range f.opts {
		args = append(args, "-o", kv)
	}
	if f.steps != models.DefaultSteps {
		args = append(args, "--check-steps", fmt.Sprint(f.steps))
	}
	if f.budget != 60*time.Second {
		args = append(args, "--check-budget", f.budget.String())
	}
	if f.out != "" {
		args = append(args, "--out", f.out)
	}
	return shellJoin(args)
}

// shellJoin joins a command line, quoting the arguments a shell would split
// or expand.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if strings.ContainsAny(a, " \t'\"$*?") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// historyFormats are the formats check reads.
var historyFormats = []string{"locklab", "jepsen"}

// readHistory reads the history in path in the given format; a Jepsen
// history comes with what its reading left out.
func readHistory(path, format string) ([]history.Event, *history.Jepsen, error) {
	if format != "jepsen" {
		events, err := history.ReadFile(path)
		return events, nil, err
	}
	h, err := history.ReadJepsenFile(path)
	if err != nil {
		return nil, nil, err
	}
	return h.Events, &h, nil
}

// tokensGranted reports whether an acquire returned a fencing token.
func tokensGranted(events []history.Event) bool {
	return slices.ContainsFunc(events, func(e history.Event) bool {
		return e.F == history.FAcquire && e.Type == history.OK && e.Token != nil
	})
}

// jepsenLiveness is why liveness does not judge a Jepsen history unless
// asked to.
const jepsenLiveness = "a Jepsen lock test's generator acquires and releases at random, nested acquires among them, which the lock refuses " +
	"at once (:already-held): the share of acquires that succeed says little of the lock's availability, and Knossos judges safety alone " +
	"(--checks +liveness runs it)"

// jepsenChecks is the default selection of checks (names: nil, or
// +fencing-tokens) for a Jepsen history, as the names of the checks to run
// and the checks left out with the reason: every check that applies but
// liveness (see jepsenLiveness).
func jepsenChecks(cfg models.Config, names []string, events []history.Event) ([]string, []models.Skipped, error) {
	checks, skipped, err := cfg.Select(names, events)
	if err != nil {
		return nil, nil, err
	}
	run := []string{}
	for _, c := range checks {
		if c.Name() == "liveness" {
			skipped = append(skipped, models.Skipped{Check: c.Name(), Reason: jepsenLiveness})
			continue
		}
		run = append(run, c.Name())
	}
	if skipped == nil {
		skipped = []models.Skipped{}
	}
	return run, skipped, nil
}

// jepsenRecord is what results.json says of a Jepsen history's reading:
// its operations, what was left out, and how far its times stepped back
// (max_ns; line stepped back behind behind_line).
func jepsenRecord(h *history.Jepsen) map[string]any {
	left := map[string]int{}
	for _, l := range h.Left {
		left[l.What] = l.Count
	}
	steps := map[string]any{"count": h.Steps.Count}
	if h.Steps.Count > 0 {
		steps["max_ns"], steps["line"], steps["behind_line"] = h.Steps.Max, h.Steps.Line, h.Steps.Behind
	}
	return map[string]any{"operations": h.Ops, "left_out": left, "time_steps": steps}
}

// jepsenLines is what check says of a Jepsen history it read: its
// operations and faults, what the reading left out, how far its times
// stepped back, and why fencing-tokens runs when it does.
func jepsenLines(h *history.Jepsen, names []string) string {
	if h == nil {
		return ""
	}
	var b strings.Builder
	faults := 0
	for _, e := range h.Events {
		if e.Type == history.Start {
			faults++
		}
	}
	fmt.Fprintf(&b, "read as a Jepsen history: %s, %s\n", history.Plural(h.Ops, "operation", ""), history.Plural(faults, "fault", ""))
	if len(h.Left) > 0 {
		left := make([]string, len(h.Left))
		for i, l := range h.Left {
			left[i] = l.String()
		}
		fmt.Fprintf(&b, "left out: %s\n", strings.Join(left, ", "))
	}
	b.WriteString(h.Steps.String() + "\n")
	if slices.Contains(names, "fencing-tokens") {
		b.WriteString("fencing-tokens runs: the grants carry tokens\n")
	}
	return b.String()
}

// looksLikeJSON reports whether the file in path begins with a JSON object.
func looksLikeJSON(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte(`{"`))
}
