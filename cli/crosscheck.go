package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/workloads"
)

// Files of a crosscheck directory.
const (
	crossJSON     = "crosscheck.json"
	crossMarkdown = "crosscheck.md"
)

const crosscheckLong = `crosscheck runs the same random fault schedules in the simulator and live, for every
system with a live form (or those of --system), and tabulates, check by check, whether the two
worlds reach the same verdict.

For each system it draws --seeds schedules (seeds --first-seed, --first-seed+1, ...; with
--nemesis random the simulated run draws only the fault kinds the live form can perform, as
run --live-comparable does, so both worlds run one schedule.json). Each seed runs once in the
simulator, then live with every duration multiplied by --scale (as run --live --scale does).
A live run that disagrees with the simulated one on a check, or in which a fault that fired in
the simulated run did not fire, runs again, up to --tries times: a real-time run can miss the
millisecond a story needs, while a model that differs from the real system disagrees in every
try. Systems run one after another, one live run at a time.

The directory (--out) holds crosscheck.json (every pair: the schedule, both worlds' verdicts and
reasons per try, each disagreement with a cause line) and crosscheck.md (the table: per system
and check, the pairs compared, agreeing in the first try and in the last; then every
disagreement with its seed, both verdicts and its cause), both rewritten atomically after each
pair, and under runs/ the run directories of each disagreeing pair (the simulated run and each
live try). Started again with the same arguments, it keeps the pairs already done.

A system whose server is not installed, or whose live form refuses the options, is skipped with
the reason (the table says so). A disagreement's cause line is what the runs themselves tell: a
fault that did not fire, a later try that agreed (timing), a budget that ran out, a write that
landed late, and where each fault on a client landed in its cycle in each world ("the pause c3:
simulated after read ok, live try 1 in acquire"); a disagreement that every try repeats says so,
for a reader to trace to the model or to the live harness.

Exit codes: 0 the crosscheck finished (whatever it measured); 1 with --strict, a check that
disagreed in every try; 2 usage error; 3 interrupted (what ran is written); 4 a failure.`

type crosscheckFlags struct {
	systems                         []string
	nemesis, workload, storage, out string
	clients, seeds, tries           int
	first                           uint64
	simTime, checkBudget            time.Duration
	scale                           float64
	sysOpts                         []string
	strict                          bool
	progress                        progressMode
}

func newCrosscheckCmd() *cobra.Command {
	var f crosscheckFlags
	var bar bool
	cmd := &cobra.Command{
		Use:   "crosscheck",
		Short: "Run the same random fault schedules in the simulator and live, and tabulate the verdicts' agreement per check",
		Long:  crosscheckLong,
		Example: `  locklab crosscheck --seeds 30 --scale 0.3 --out crosscheck-out
  locklab crosscheck --system redis --seeds 2 --tries 3 --strict --out /tmp/cc`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.progress = progressOf(cmd, bar)
			return runCrosscheck(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.systems, "system", nil, "only these live systems (default: every one: "+strings.Join(live.Systems(), ", ")+")")
	fl.StringVar(&f.nemesis, "nemesis", "random", "fault family of the schedules: random (the kinds the live form can perform) or a list of "+kindList())
	fl.StringVar(&f.workload, "workload", "fenced-counter", "workload: "+strings.Join(workloads.Names(), ", "))
	fl.StringVar(&f.storage, "storage", "unfenced", "storage mode: unfenced or fenced")
	fl.IntVar(&f.clients, "clients", 3, "number of clients")
	fl.DurationVar(&f.simTime, "time", 20*time.Second, "duration of each run (live: multiplied by --scale)")
	fl.IntVar(&f.seeds, "seeds", 30, "schedules per system")
	fl.Uint64Var(&f.first, "first-seed", 1, "the first seed")
	fl.Float64Var(&f.scale, "scale", 1, "multiply every duration of the live runs (run time, faults, workload and system timing) by this factor")
	fl.IntVar(&f.tries, "tries", 2, "live runs of a seed at most, while a check disagrees or a fault the simulated run fired did not fire")
	fl.DurationVar(&f.checkBudget, "check-budget", 60*time.Second, "wall-clock budget of each key's search in the search-based checks (0: unbounded)")
	fl.StringArrayVarP(&f.sysOpts, "opt", "o", nil, "system option key=value (repeatable), applied to every system that has it; a system without it is skipped, saying why")
	fl.BoolVar(&f.strict, "strict", false, "exit 1 when a check disagrees in every live try")
	fl.StringVar(&f.out, "out", "", "the crosscheck's directory (required)")
	fl.BoolVar(&bar, "progress", true, "show progress on stderr (default: a bar on a terminal, else a line per pair; false: nothing)")
	return cmd
}

// crossParams are what a crosscheck ran with: a directory of other
// parameters is not resumed.
type crossParams struct {
	Systems  []string          `json:"systems"`
	Nemesis  string            `json:"nemesis"`
	Workload string            `json:"workload"`
	Storage  string            `json:"storage"`
	Clients  int               `json:"clients"`
	Time     string            `json:"time"`
	Seeds    []uint64          `json:"seeds"`
	Scale    float64           `json:"scale"`
	Tries    int               `json:"tries"`
	Options  map[string]string `json:"options,omitempty"`
}

// crossCheck is crosscheck.json.
type crossCheck struct {
	Params  crossParams   `json:"params"`
	Started string        `json:"started"`
	Updated string        `json:"updated"`
	Load    string        `json:"load,omitempty"`
	Systems []crossSystem `json:"systems"`
}

type crossSystem struct {
	System  string       `json:"system"`
	Skipped string       `json:"skipped,omitempty"`
	Checks  []crossCount `json:"checks"`
	Pairs   []crossPair  `json:"pairs"`
}

// crossCount counts one check's agreement over a system's pairs.
type crossCount struct {
	Check    string `json:"check"`
	Compared int    `json:"compared"`
	// AgreeFirst: the first live try agreed; AgreeLast: the last one did.
	AgreeFirst int `json:"agree_first_try"`
	AgreeLast  int `json:"agree_last_try"`
}

type crossVerdict struct {
	Check  string `json:"check"`
	Result string `json:"result"`
	Reason string `json:"reason"`
}

type crossTry struct {
	Verdicts []crossVerdict `json:"verdicts,omitempty"`
	// Phases say what each client a fault hit was doing when it began.
	Phases []string `json:"client_phases,omitempty"`
	// NotFired names a fault that fired in the simulated run and not in
	// this one.
	NotFired string   `json:"not_fired,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	Wall     string   `json:"wall_time"`
	Error    string   `json:"error,omitempty"`
}

type crossPair struct {
	Seed uint64 `json:"seed"`
	// SameSchedule: the live run's schedule, unscaled, is the simulated one.
	SameSchedule  bool               `json:"same_schedule"`
	Schedule      nemesis.Schedule   `json:"schedule"`
	SimCommand    string             `json:"sim_command"`
	LiveCommand   string             `json:"live_command"`
	Sim           []crossVerdict     `json:"sim"`
	SimNotFired   string             `json:"sim_not_fired,omitempty"`
	SimPhases     []string           `json:"sim_client_phases,omitempty"`
	Tries         []crossTry         `json:"live_tries"`
	Disagreements []crossDisagreeing `json:"disagreements,omitempty"`
	// Error: no live try ran to the end (each try's error is in Tries).
	Error string `json:"error,omitempty"`
}

// crossDisagreeing is a check on which some live try disagreed.
type crossDisagreeing struct {
	Check string   `json:"check"`
	Sim   string   `json:"sim"`
	Live  []string `json:"live"`
	// Persistent: every live try disagreed.
	Persistent bool   `json:"persistent"`
	Cause      string `json:"cause"`
	SimReason  string `json:"sim_reason"`
	LiveReason string `json:"live_reason"`
}

func (f crosscheckFlags) validate() error {
	if f.out == "" {
		return usage("--out: the crosscheck's directory is required")
	}
	if f.seeds < 1 {
		return usage("--seeds %d: want at least 1", f.seeds)
	}
	if f.tries < 1 {
		return usage("--tries %d: want at least 1", f.tries)
	}
	if f.scale <= 0 || f.scale > 100 {
		return usage("--scale %v: want a factor in (0, 100]", f.scale)
	}
	if f.clients < 1 {
		return usage("--clients %d: want at least 1", f.clients)
	}
	for _, s := range f.systems {
		if !slices.Contains(live.Systems(), s) {
			return usage("--system %s: no live form (live: %s)", s, strings.Join(live.Systems(), ", "))
		}
	}
	if f.storage != string(storage.Unfenced) && f.storage != string(storage.Fenced) {
		return usage("--storage %s: want unfenced or fenced", f.storage)
	}
	return nil
}

func (f crosscheckFlags) params() (crossParams, error) {
	p := crossParams{Systems: f.systems, Nemesis: f.nemesis, Workload: f.workload, Storage: f.storage, Clients: f.clients,
		Time: f.simTime.String(), Scale: f.scale, Tries: f.tries}
	if len(p.Systems) == 0 {
		p.Systems = live.Systems()
	}
	for i := range f.seeds {
		p.Seeds = append(p.Seeds, f.first+uint64(i))
	}
	var err error
	if p.Options, err = parseOpts("--opt", f.sysOpts); err != nil {
		return p, err
	}
	if len(p.Options) == 0 {
		p.Options = nil
	}
	return p, nil
}

// test is the test of one pair (the simulated run's; live scales it).
func (p crossParams) test(sys string, seed uint64) scenario.Test {
	d, _ := time.ParseDuration(p.Time)
	t := scenario.Test{System: sys, Workload: p.Workload, Clients: p.Clients, Time: d, Seed: seed,
		Storage: storage.Mode(p.Storage), Nemesis: p.Nemesis, LiveComparable: p.Nemesis == "random", SystemOptions: p.Options}
	return t.WithDefaults()
}

func runCrosscheck(cmd *cobra.Command, f crosscheckFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	params, err := f.params()
	if err != nil {
		return err
	}
	if f.nemesis != "random" {
		if _, err := nemesis.ParseKinds(f.nemesis); err != nil {
			return usage("--nemesis %s: %v", f.nemesis, err)
		}
	}
	if _, err := workloads.Find(f.workload); err != nil {
		return usage("--workload %s: unknown (known: %s)", f.workload, strings.Join(workloads.Names(), ", "))
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("crosscheck directory: %w", err)
	}
	cc, err := resumeCrosscheck(f.out, params)
	if err != nil {
		return err
	}
	budget := f.checkBudget
	if budget == 0 {
		budget = scenario.Unbounded
	}
	ctx, cancel := interruptible()
	defer cancel()
	pr := newCrossProgress(cmd.ErrOrStderr(), f.progress, len(params.Systems)*len(params.Seeds))
	done := 0
	for _, s := range cc.Systems {
		done += len(s.Pairs)
		if s.Skipped != "" {
			done += len(params.Seeds) - len(s.Pairs)
		}
	}
	pr.start(done)
	var runErr error
	for i := range cc.Systems {
		cs := &cc.Systems[i]
		if cs.Skipped != "" {
			continue
		}
		if why := crossUnavailable(params.test(cs.System, params.Seeds[0]), f.out, f.scale); why != "" {
			cs.Skipped = why
			pr.skip(cs.System, why, len(params.Seeds)-len(cs.Pairs))
			if err := writeCrosscheck(f.out, cc); err != nil {
				return err
			}
			continue
		}
		for _, seed := range params.Seeds {
			if slices.ContainsFunc(cs.Pairs, func(p crossPair) bool { return p.Seed == seed }) {
				continue
			}
			t := params.test(cs.System, seed)
			t.CheckBudget = budget
			pair, err := crossPairRun(ctx, f.out, t, f.scale, f.tries)
			var missing *proc.MissingError
			if errors.As(err, &missing) {
				cs.Skipped = missing.Error()
				pr.skip(cs.System, cs.Skipped, len(params.Seeds)-len(cs.Pairs))
				break
			}
			if err != nil {
				runErr = err
				break
			}
			cs.Pairs = append(cs.Pairs, pair)
			slices.SortFunc(cs.Pairs, func(a, b crossPair) int { return cmpUint(a.Seed, b.Seed) })
			cs.Checks = crossCounts(cs.Pairs)
			if err := writeCrosscheck(f.out, cc); err != nil {
				return err
			}
			pr.pair(cs.System, pair)
		}
		if err := writeCrosscheck(f.out, cc); err != nil {
			return err
		}
		if runErr != nil {
			break
		}
	}
	pr.finish()
	out := cmd.OutOrStdout()
	fmt.Fprint(out, crossTable(cc))
	fmt.Fprintf(out, "crosscheck: %s\n", filepath.Join(f.out, crossMarkdown))
	if runErr != nil {
		if errors.Is(runErr, live.ErrInterrupted) {
			fmt.Fprintf(out, "crosscheck: %v: the pairs done are written; the same command goes on\n", runErr)
			return exitError{judge.ExitUnknown}
		}
		return runErr
	}
	if f.strict && crossPersistent(cc) > 0 {
		return exitError{judge.ExitInvalid}
	}
	return nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// crossUnavailable says why a system cannot run live here ("" when it can).
func crossUnavailable(t scenario.Test, out string, scale float64) string {
	if why := live.Unavailable(t); why != "" {
		return why
	}
	if _, err := live.Prepare(t, live.Config{Scale: scale}); err != nil {
		return err.Error()
	}
	if why := live.UnreachableOut(t, filepath.Join(out, "runs", "x")); why != "" {
		return "--out " + out + ": " + why
	}
	return ""
}

// resumeCrosscheck reads the directory's crosscheck.json when it ran with
// the same parameters (keeping its pairs), or starts a new one; a directory
// of other parameters is refused.
func resumeCrosscheck(dir string, p crossParams) (*crossCheck, error) {
	now := time.Now().UTC().Format(time.RFC3339)
	cc := &crossCheck{Params: p, Started: now}
	data, err := os.ReadFile(filepath.Join(dir, crossJSON))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("crosscheck: %w", err)
	default:
		var old crossCheck
		if err := json.Unmarshal(data, &old); err != nil {
			return nil, fmt.Errorf("crosscheck: %s: %w", filepath.Join(dir, crossJSON), err)
		}
		if !reflect.DeepEqual(old.Params, p) {
			return nil, usage("--out %s: holds a crosscheck of other parameters (%s); choose another directory", dir, filepath.Join(dir, crossJSON))
		}
		cc = &old
	}
	for _, s := range p.Systems {
		if !slices.ContainsFunc(cc.Systems, func(c crossSystem) bool { return c.System == s }) {
			cc.Systems = append(cc.Systems, crossSystem{System: s})
		}
	}
	for i := range cc.Systems {
		// A system skipped before (a server not installed) is tried again.
		cc.Systems[i].Skipped = ""
	}
	return cc, nil
}

// crossPairRun runs one seed in the simulator and live (up to tries times).
func crossPairRun(ctx context.Context, out string, t scenario.Test, scale float64, tries int) (crossPair, error) {
	pair := crossPair{Seed: t.Seed}
	prep, err := harness.Prepare(t)
	if err != nil {
		return pair, usageError{fmt.Errorf("%s seed %d: %w", t.System, t.Seed, err)}
	}
	sim, err := prep.Run()
	if err != nil {
		return pair, fmt.Errorf("%s seed %d, simulated: %w", t.System, t.Seed, err)
	}
	pair.Schedule = sim.Schedule
	pair.Sim = crossVerdicts(sim.Verdicts)
	pair.SimNotFired = notFired(sim)
	pair.SimPhases = clientPhases(sim.Events)
	pair.SimCommand = shellJoin(append([]string{"locklab", "run"}, t.Args()...))
	pair.LiveCommand = liveCommand(t, "", "", scale, false)
	// The schedule a live run of scale 1 draws: the same file as the
	// simulated run's, or the two worlds do not run one schedule.
	if p1, err := live.Prepare(t, live.Config{}); err == nil {
		a, _ := json.Marshal(p1.Schedule)
		b, _ := json.Marshal(sim.Schedule)
		pair.SameSchedule = bytes.Equal(a, b)
	}
	var lives []scenario.Result
	for try := 1; try <= tries; try++ {
		servers, err := os.MkdirTemp(out, ".servers-")
		if err != nil {
			return pair, fmt.Errorf("live servers' directory: %w", err)
		}
		start := time.Now()
		p, err := live.Prepare(t, live.Config{Scale: scale, Dir: servers})
		var res scenario.Result
		if err == nil {
			res, err = p.Run(ctx)
		}
		os.RemoveAll(servers)
		var missing *proc.MissingError
		if errors.As(err, &missing) || errors.Is(err, live.ErrInterrupted) {
			return pair, err
		}
		ct := crossTry{Wall: time.Since(start).Round(time.Millisecond).String()}
		if err != nil {
			ct.Error = err.Error()
			pair.Tries = append(pair.Tries, ct)
			lives = append(lives, scenario.Result{})
			continue
		}
		ct.Verdicts, ct.NotFired, ct.Notes, ct.Phases = crossVerdicts(res.Verdicts), missedLive(sim, res), res.Notes, clientPhases(res.Events)
		pair.Tries = append(pair.Tries, ct)
		lives = append(lives, res)
		if ct.NotFired == "" && len(crossDiffering(pair.Sim, ct.Verdicts)) == 0 {
			break
		}
	}
	if !slices.ContainsFunc(pair.Tries, func(c crossTry) bool { return c.Error == "" }) {
		pair.Error = fmt.Sprintf("no live try ran to the end (%d tries): %s", len(pair.Tries), pair.Tries[len(pair.Tries)-1].Error)
	}
	pair.Disagreements = crossDisagreements(pair)
	if len(pair.Disagreements) > 0 || pair.Error != "" {
		if err := keepCrossRuns(out, t, scale, pair, sim, lives); err != nil {
			return pair, err
		}
	}
	return pair, nil
}

// missedLive says which fault of the schedule fired in the simulated run
// and not in the live one ("" when none): a fault that fired in neither
// world (a cut of a leader while there was none) does not make the worlds
// differ, and another try would not change it.
func missedLive(sim, lv scenario.Result) string {
	fired := map[int]bool{}
	for _, f := range sim.FaultOutcomes {
		fired[f.Fault] = f.Fired
	}
	for _, f := range lv.FaultOutcomes {
		if !f.Fired && fired[f.Fault] {
			return fmt.Sprintf("fault %d (%s) did not fire: %s", f.Fault, f.Kind, f.DidNotFire)
		}
	}
	return ""
}

func crossVerdicts(vs []models.Verdict) []crossVerdict {
	out := make([]crossVerdict, 0, len(vs))
	for _, v := range vs {
		out = append(out, crossVerdict{Check: v.Check, Result: string(v.Result), Reason: v.Reason})
	}
	return out
}

func findVerdict(vs []crossVerdict, check string) (crossVerdict, bool) {
	for _, v := range vs {
		if v.Check == check {
			return v, true
		}
	}
	return crossVerdict{}, false
}

// crossDiffering are the checks judged in both worlds whose verdicts differ.
func crossDiffering(sim, lv []crossVerdict) []string {
	var out []string
	for _, s := range sim {
		if l, ok := findVerdict(lv, s.Check); ok && l.Result != s.Result {
			out = append(out, s.Check)
		}
	}
	return out
}

// crossDisagreements lists each check on which a live try disagreed, with
// both verdicts and a cause line from what the runs tell.
func crossDisagreements(pair crossPair) []crossDisagreeing {
	var out []crossDisagreeing
	for _, s := range pair.Sim {
		d := crossDisagreeing{Check: s.Check, Sim: s.Result, SimReason: s.Reason, Persistent: true}
		differs, agreedAt := false, 0
		judged := 0
		for i, try := range pair.Tries {
			l, ok := findVerdict(try.Verdicts, s.Check)
			if try.Error != "" || !ok {
				d.Live = append(d.Live, "-")
				continue
			}
			judged++
			d.Live = append(d.Live, l.Result)
			if l.Result != s.Result {
				if !differs {
					d.LiveReason = l.Reason
				}
				differs = true
			} else {
				d.Persistent = false
				if agreedAt == 0 {
					agreedAt = i + 1
				}
			}
		}
		if !differs || judged == 0 {
			continue
		}
		d.Cause = crossCause(pair, s.Check, agreedAt, judged)
		out = append(out, d)
	}
	return out
}

// crossCause is a disagreement's cause line, from what the runs tell.
func crossCause(pair crossPair, check string, agreedAt, judged int) string {
	var parts []string
	if agreedAt > 0 {
		parts = append(parts, fmt.Sprintf("timing: live try %d agreed", agreedAt))
	} else if judged > 1 {
		parts = append(parts, fmt.Sprintf("every one of %d live tries disagreed", judged))
	} else {
		parts = append(parts, "one live try, it disagreed")
	}
	for i, try := range pair.Tries {
		if try.NotFired != "" {
			parts = append(parts, fmt.Sprintf("live try %d: %s", i+1, try.NotFired))
		}
		if l, ok := findVerdict(try.Verdicts, check); ok && l.Result == string(models.Unknown) {
			parts = append(parts, fmt.Sprintf("live try %d could not decide (%s)", i+1, l.Reason))
		}
		for _, n := range try.Notes {
			parts = append(parts, fmt.Sprintf("live try %d: %s", i+1, n))
		}
	}
	if pair.SimNotFired != "" {
		parts = append(parts, "simulated: "+pair.SimNotFired)
	}
	// Where a fault on a client landed in the client's cycle: real time
	// does not reproduce it to the millisecond.
	for i, try := range pair.Tries {
		if try.Error != "" {
			continue
		}
		if l, ok := findVerdict(try.Verdicts, check); !ok || l.Result == findResult(pair.Sim, check) {
			continue
		}
		for j, ph := range try.Phases {
			if j < len(pair.SimPhases) && pair.SimPhases[j] != ph {
				parts = append(parts, fmt.Sprintf("the %s: simulated %s, live try %d %s", faultOf(ph), phaseOf(pair.SimPhases[j]), i+1, phaseOf(ph)))
				break
			}
		}
	}
	if s, ok := findVerdict(pair.Sim, check); ok && s.Result == string(models.Unknown) {
		parts = append(parts, "the simulated run could not decide ("+s.Reason+")")
	}
	if !pair.SameSchedule {
		parts = append(parts, "the live run drew another schedule")
	}
	return strings.Join(parts, "; ")
}

func findResult(vs []crossVerdict, check string) string {
	v, _ := findVerdict(vs, check)
	return v.Result
}

// clientPhases say, for each fault that began on clients (a pause, a cut
// isolating a client, a delay of what a client sends), what each of them was
// doing at that moment: "pause c1: in acquire" (an operation in flight),
// "delay c1: after read ok" (its next message is its write).
func clientPhases(events []history.Event) []string {
	var out []string
	last := map[string]history.Event{}
	for _, e := range events {
		if e.Process >= 0 && e.Node != "" {
			last[e.Node] = e
			continue
		}
		if e.Type != history.Start || (e.F != "pause" && e.F != "partition" && e.F != "delay") {
			continue
		}
		for _, n := range e.Targets {
			l, ok := last[n]
			if !ok && !strings.HasPrefix(n, "c") {
				continue // a server
			}
			what := "before its first operation"
			switch {
			case ok && l.Type == history.Invoke:
				what = "in " + l.F
			case ok:
				what = fmt.Sprintf("after %s %s", l.F, l.Type)
			}
			out = append(out, fmt.Sprintf("%s %s: %s", e.F, n, what))
		}
	}
	return out
}

// faultOf and phaseOf split a client phase ("pause c1: in acquire").
func faultOf(phase string) string { f, _, _ := strings.Cut(phase, ": "); return f }
func phaseOf(phase string) string { _, p, _ := strings.Cut(phase, ": "); return p }

// keepCrossRuns writes the run directories of a disagreeing pair under
// out/runs/<system>-seed<N>/: sim and live-try<k>.
func keepCrossRuns(out string, t scenario.Test, scale float64, pair crossPair, sim scenario.Result, lives []scenario.Result) error {
	base := filepath.Join(out, "runs", fmt.Sprintf("%s-seed%d", t.System, t.Seed))
	if err := os.RemoveAll(base); err != nil {
		return fmt.Errorf("crosscheck runs: %w", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("crosscheck runs: %w", err)
	}
	dir := filepath.Join(base, "sim")
	if err := reports.WriteDir(dir, judge.Report(sim, replayCommand(t, "", dir))); err != nil {
		return err
	}
	for i, res := range lives {
		if pair.Tries[i].Error != "" {
			continue
		}
		dir := filepath.Join(base, fmt.Sprintf("live-try%d", i+1))
		run := judge.Report(res, liveCommand(t, "", dir, scale, true))
		markLive(&run, res)
		if err := reports.WriteDir(dir, run); err != nil {
			return err
		}
	}
	return nil
}

// crossCounts counts each check's agreement over pairs, in first-seen order.
func crossCounts(pairs []crossPair) []crossCount {
	var out []crossCount
	idx := map[string]int{}
	for _, p := range pairs {
		var first, last *crossTry
		for i := range p.Tries {
			if p.Tries[i].Error == "" {
				if first == nil {
					first = &p.Tries[i]
				}
				last = &p.Tries[i]
			}
		}
		if first == nil {
			continue
		}
		for _, s := range p.Sim {
			lf, ok1 := findVerdict(first.Verdicts, s.Check)
			ll, ok2 := findVerdict(last.Verdicts, s.Check)
			if !ok1 || !ok2 {
				continue // judged in one world only (an audit of simulated servers)
			}
			i, ok := idx[s.Check]
			if !ok {
				i = len(out)
				idx[s.Check] = i
				out = append(out, crossCount{Check: s.Check})
			}
			c := &out[i]
			c.Compared++
			if lf.Result == s.Result {
				c.AgreeFirst++
			}
			if ll.Result == s.Result {
				c.AgreeLast++
			}
		}
	}
	return out
}

func crossPersistent(cc *crossCheck) int {
	n := 0
	for _, s := range cc.Systems {
		for _, p := range s.Pairs {
			for _, d := range p.Disagreements {
				if d.Persistent {
					n++
				}
			}
		}
	}
	return n
}

func writeCrosscheck(dir string, cc *crossCheck) error {
	cc.Updated = time.Now().UTC().Format(time.RFC3339)
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		cc.Load = strings.Join(strings.Fields(string(load))[:3], " ")
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, crossJSON), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cc)
	}); err != nil {
		return err
	}
	return reports.WriteFileAtomic(filepath.Join(dir, crossMarkdown), func(w io.Writer) error {
		_, err := io.WriteString(w, crossTable(cc))
		return err
	})
}

// crossTable is crosscheck.md: the agreement per system and check, then
// every disagreement.
func crossTable(cc *crossCheck) string {
	var b strings.Builder
	p := cc.Params
	fmt.Fprintf(&b, "# Simulated and live verdicts on the same schedules\n\n")
	fmt.Fprintf(&b, "--nemesis %s, --workload %s, --storage %s, %d clients, --time %s, live --scale %v, at most %d live tries; seeds %d..%d; started %s, updated %s (load average %s).\n\n",
		p.Nemesis, p.Workload, p.Storage, p.Clients, p.Time, p.Scale, p.Tries, p.Seeds[0], p.Seeds[len(p.Seeds)-1], cc.Started, cc.Updated, cc.Load)
	b.WriteString("| system | check | pairs compared | agree, first live try | agree, last live try |\n|---|---|---|---|---|\n")
	for _, s := range cc.Systems {
		if s.Skipped != "" && len(s.Pairs) == 0 {
			fmt.Fprintf(&b, "| %s | SKIPPED: %s | | | |\n", s.System, mdCell(s.Skipped))
			continue
		}
		same := 0
		for _, pr := range s.Pairs {
			if pr.SameSchedule {
				same++
			}
		}
		for _, c := range s.Checks {
			fmt.Fprintf(&b, "| %s | %s | %d | %d/%d | %d/%d |\n", s.System, c.Check, c.Compared, c.AgreeFirst, c.Compared, c.AgreeLast, c.Compared)
		}
		errs := 0
		for _, pr := range s.Pairs {
			if pr.Error != "" {
				errs++
			}
		}
		note := fmt.Sprintf("%d of %d seeds done, same schedule.json in %d", len(s.Pairs), len(p.Seeds), same)
		if errs > 0 {
			note += fmt.Sprintf(", %d with no live run to the end", errs)
		}
		if s.Skipped != "" {
			note += "; then SKIPPED: " + s.Skipped
		}
		fmt.Fprintf(&b, "| %s | (%s) | | | |\n", s.System, mdCell(note))
	}
	b.WriteString("\n## Disagreements\n\n")
	n := 0
	for _, s := range cc.Systems {
		for _, pr := range s.Pairs {
			if pr.Error != "" {
				fmt.Fprintf(&b, "- %s seed %d: %s\n", s.System, pr.Seed, pr.Error)
			}
			for _, d := range pr.Disagreements {
				n++
				kind := "in some tries"
				if d.Persistent {
					kind = "in every try"
				}
				fmt.Fprintf(&b, "- **%s seed %d, %s** (%s): simulated %s, live %s. Cause: %s.\n  - faults: %s\n  - simulated: %s\n  - live: %s\n  - `%s` / `%s`\n",
					s.System, pr.Seed, d.Check, kind, d.Sim, strings.Join(d.Live, ", "), d.Cause, scheduleLine(pr.Schedule),
					d.SimReason, d.LiveReason, pr.SimCommand, pr.LiveCommand)
			}
		}
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
	return b.String()
}

// scheduleLine lists a schedule's faults in one line.
func scheduleLine(s nemesis.Schedule) string {
	if len(s.Faults) == 0 {
		return "none"
	}
	var out []string
	for _, f := range s.Faults {
		line := string(f.Kind)
		switch {
		case len(f.Targets) > 0:
			line += " " + strings.Join(f.Targets, ",")
		case len(f.Groups) > 0:
			var gs []string
			for _, g := range f.Groups {
				gs = append(gs, strings.Join(g, ","))
			}
			line += " " + strings.Join(gs, " / ")
		case len(f.From) > 0:
			line += " " + strings.Join(f.From, ",") + "->" + strings.Join(f.To, ",")
		}
		if f.Match != "" {
			line += " " + f.Match
		}
		if f.Amount != 0 {
			line += fmt.Sprintf(" by %v", time.Duration(f.Amount))
		}
		if f.After != nil {
			line += fmt.Sprintf(" after %s's %s %s", f.After.Node, f.After.F, f.After.Type)
		} else {
			line += fmt.Sprintf(" at %v", time.Duration(f.At))
		}
		if f.Duration != 0 {
			line += fmt.Sprintf(" for %v", time.Duration(f.Duration))
		}
		out = append(out, line)
	}
	return strings.Join(out, "; ")
}

// crossProgress shows a crosscheck's progress: a bar on a terminal, or a
// line per pair (seeds done, rate, ETA).
type crossProgress struct {
	w           io.Writer
	mode        progressMode
	bar         *progressbar.ProgressBar
	begin       time.Time
	total, done int
	ran         int
	disagree    int
}

func newCrossProgress(w io.Writer, mode progressMode, total int) *crossProgress {
	return &crossProgress{w: w, mode: mode, total: total}
}

func (p *crossProgress) start(done int) {
	p.begin, p.done = time.Now(), done
	if p.mode == progressBar {
		p.bar = progressbar.NewOptions(p.total, progressbar.OptionSetWriter(p.w), progressbar.OptionShowCount(),
			progressbar.OptionShowIts(), progressbar.OptionSetItsString("seeds"), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		_ = p.bar.Set(done)
	}
	if done > 0 && p.mode != progressNone {
		fmt.Fprintf(p.w, "crosscheck: resuming: %d of %d seeds done before\n", done, p.total)
	}
}

func (p *crossProgress) eta() string {
	elapsed := time.Since(p.begin)
	if p.ran == 0 || p.done >= p.total {
		return ""
	}
	per := elapsed / time.Duration(p.ran)
	return fmt.Sprintf(", %.1f seeds/min, ETA %v", 60/per.Seconds(), (per * time.Duration(p.total-p.done)).Round(time.Second))
}

func (p *crossProgress) pair(system string, pr crossPair) {
	p.done++
	p.ran++
	if len(pr.Disagreements) > 0 {
		p.disagree++
	}
	switch p.mode {
	case progressBar:
		p.bar.Describe(fmt.Sprintf("%s: %d seeds with a disagreement", system, p.disagree))
		_ = p.bar.Add(1)
	case progressLines:
		what := "agree"
		if pr.Error != "" {
			what = "no live run: " + pr.Error
		} else if len(pr.Disagreements) > 0 {
			var cs []string
			for _, d := range pr.Disagreements {
				cs = append(cs, d.Check)
			}
			what = "disagree on " + strings.Join(cs, ", ")
		}
		fmt.Fprintf(p.w, "crosscheck: %s seed %d: %s (%d live tries); %d/%d seeds%s\n",
			system, pr.Seed, what, len(pr.Tries), p.done, p.total, p.eta())
	}
}

func (p *crossProgress) skip(system, why string, n int) {
	p.done += n
	if p.bar != nil {
		_ = p.bar.Add(n)
	}
	if p.mode != progressNone {
		fmt.Fprintf(p.w, "crosscheck: %s SKIPPED: %s\n", system, why)
	}
}

func (p *crossProgress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
