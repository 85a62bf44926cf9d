package sweep

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/guide"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/placement"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/shrink"
	"github.com/locklab/locklab/system"
)

// Checks whose failure decides a finding's kind: a critical section that was
// not atomic is corrupted data; fencing tokens out of order a token-order
// violation; any other safety check a broken lock.
const (
	tokenCheck    = "fencing-tokens"
	livenessCheck = "liveness"
)

// findingKinds are the kinds of finding, worst first.
var findingKinds = []string{VerdictCorrupted, VerdictLockBroke, VerdictTokenOrder, VerdictLiveness}

// CellOptions tune the search of one cell.
type CellOptions struct {
	// Dir is the matrix directory the findings' run directories are written
	// under (runs/<row>-<family>-<kind>); "" writes none (Finding.Dir is
	// then empty).
	Dir string
	// NoShrink keeps the findings as the search found them (their faults,
	// story and replay are those of the unshrunk run). The verdict and the
	// evidence are the same either way.
	NoShrink bool
	// Run, when set, is called after every simulated run of the search.
	Run func()
}

// cellSeeds are the seed of a cell's search and the seed of its first fresh
// draw, from the cell's id alone: the same cell searches the same way in any
// matrix, at any -j, after any interruption.
func cellSeeds(rowID, column string) (seed, start uint64) {
	sum := sha256.Sum256([]byte(searchFormat + "/" + rowID + "/" + column))
	return binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16]) % 1_000_000_000
}

// found is the first run of a kind of finding.
type found struct {
	test   scenario.Test
	runsTo int
	checks []string
	target shrink.Target
}

// A cell's search starts with cellFresh random draws of its family and, at
// length, makes every cellFreshEvery-th run a fresh random draw: half its
// runs are the random sweep of the family, so that a violation random draws
// find often is not missed by mutations that chase coverage elsewhere (a
// 1,000-seed audit of the default matrix found such misses with the guide's
// hunt defaults, 4 and 8: Redisson's lock under partitions, 2.3% of random
// seeds; ZooKeeper under random faults, 2%).
const (
	cellFresh      = 20
	cellFreshEvery = 2
)

// SearchCell decides one cell: a guided search of the row under the column's
// fault family (guide.Search restricted to it), which goes on after a broken
// lock, a token-order or a liveness violation to look for corrupted data
// until the budget is spent, and stops at the first corruption. The first
// run of each kind of finding is shrunk, told in a sentence and written as a
// run directory. It returns the cell and the runs it made (the search's and
// the shrinking's).
func SearchCell(c SearchConfig, row SearchedRow, column string, o CellOptions) (SearchedCell, int, error) {
	name := row.Design + " · " + row.Storage + " × " + column
	sh, timeouts := rowShape(c, row)
	c.Time = sh.Time
	tm, err := rowTiming(c, row)
	if err != nil {
		return SearchedCell{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	s := &cellSearch{c: c, row: row, column: column, name: name, o: o,
		ev: evidenceAcc{family: column, timing: tm}, first: map[string]*found{}}
	s.seed, s.start = cellSeeds(row.ID, column)
	set, err := placementsOf(c, row, column, sh, timeouts)
	if err != nil {
		return SearchedCell{}, 0, fmt.Errorf("%s: %w", name, err)
	}
	pl, err := s.placements(set)
	if err != nil {
		return SearchedCell{}, 0, err
	}
	randomRuns := 0
	if s.first[VerdictCorrupted] == nil {
		if randomRuns, err = s.guided(sh.Guided); err != nil {
			return SearchedCell{}, 0, err
		}
	}
	total := s.runs
	cell := SearchedCell{Column: column}
	for _, kind := range findingKinds {
		f := s.first[kind]
		if f == nil {
			continue
		}
		fd, n, err := finish(c, row, column, kind, f, o)
		if err != nil {
			return SearchedCell{}, 0, fmt.Errorf("%s: %s finding: %w", name, kind, err)
		}
		total += n
		cell.Findings = append(cell.Findings, fd)
	}
	cell.Evidence = s.ev.evidence(randomRuns, s.first)
	cell.Evidence.Placements = pl
	if pl != nil {
		if f := s.first[VerdictCorrupted]; f != nil && f.runsTo <= pl.Ran {
			cell.Evidence.Line = fmt.Sprintf("data corrupted by %s placed systematically: placement %d of %d",
				strings.TrimPrefix(kindWords[column][1], "a "), f.runsTo, pl.Total)
		} else {
			cell.Evidence.Line = fmt.Sprintf("no corruption in all %d single-%s placements (%d fired); then %s",
				pl.Total, strings.TrimPrefix(kindWords[column][1], "a "), pl.Fired, cell.Evidence.Line)
		}
	}
	switch {
	case len(cell.Findings) > 0:
		cell.Verdict = cell.Findings[0].Kind
	case s.ev.fired == 0 && (pl == nil || pl.Fired == 0):
		cell.Verdict = VerdictNoFault
	case s.ev.undecided > 0:
		cell.Verdict = VerdictUnknown
	default:
		cell.Verdict = VerdictNoViolation
	}
	return cell, total, nil
}

// cellSearch is one cell's search under way: its evidence, the first run
// of each kind of finding, and the runs made.
type cellSearch struct {
	c           SearchConfig
	row         SearchedRow
	column      string
	name        string
	o           CellOptions
	ev          evidenceAcc
	first       map[string]*found
	runs        int
	seed, start uint64
}

// note keeps run r of test t as the first of each kind of finding it shows
// that has none yet.
func (s *cellSearch) note(t scenario.Test, r scenario.Result) {
	for kind, checks := range findingsOf(r) {
		if s.first[kind] == nil {
			s.first[kind] = &found{test: t, runsTo: s.runs, checks: checks, target: shrinkTarget(r, kind, checks)}
		}
	}
}

// placements runs the cell's systematic part: every single-fault placement
// of set until data is corrupted, then pairs of them. Nil when the family
// has no placements.
func (s *cellSearch) placements(set placement.Set) (*Placements, error) {
	if len(set.Faults) == 0 {
		return nil, nil
	}
	pl := &Placements{Bound: set.Words, Total: len(set.Faults)}
	for _, f := range set.Faults {
		fired, err := s.place(f)
		if err != nil {
			return nil, fmt.Errorf("%s: placement %d: %w", s.name, pl.Ran+1, err)
		}
		pl.Ran++
		if fired {
			pl.Fired++
		}
		if s.first[VerdictCorrupted] != nil {
			break
		}
	}
	pl.Complete = s.first[VerdictCorrupted] == nil && pl.Ran == pl.Total
	for _, pair := range pairsOf(len(set.Faults), s.c.Pairs, s.start) {
		if s.first[VerdictCorrupted] != nil {
			break
		}
		if _, err := s.place(set.Faults[pair[0]], set.Faults[pair[1]]); err != nil {
			return nil, fmt.Errorf("%s: pair of placements %d and %d: %w", s.name, pair[0]+1, pair[1]+1, err)
		}
		pl.Pairs++
	}
	return pl, nil
}

// place runs one placement (or pair) and counts it; fired says whether its
// first fault took hold.
func (s *cellSearch) place(faults ...nemesis.Fault) (fired bool, err error) {
	t := placementTest(s.c, s.row, s.start, faults[0])
	t.Schedule.Faults = append(t.Schedule.Faults, faults[1:]...)
	r, err := harness.Run(t)
	if err != nil {
		return false, err
	}
	s.runs++
	fired = len(r.FaultOutcomes) > 0 && r.FaultOutcomes[0].Fired
	s.ev.addFailed(r)
	s.note(t, r)
	r.Release()
	if s.o.Run != nil {
		s.o.Run()
	}
	return fired, nil
}

// guided runs the cell's guided search, up to budget runs, until data is
// corrupted; it returns its runs.
func (s *cellSearch) guided(budget int) (int, error) {
	target := guide.Target{Name: s.name, Family: s.column,
		Test: func(seed uint64) (scenario.Test, error) { return s.c.test(s.row, s.column, seed), nil },
		Stop: func(r scenario.Result) bool { return verdictOf(r, dataCheck) == models.Invalid }}
	out, err := guide.Search(guide.Config{Target: &target, Seed: s.seed, Start: s.start, MaxRuns: budget,
		Fresh: cellFresh, FreshEvery: cellFreshEvery,
		OnRun: func(t scenario.Test, r scenario.Result) {
			s.runs++
			s.ev.add(r)
			s.note(t, r)
		}}, s.o.Run)
	if err != nil {
		return 0, err
	}
	return out.Runs, nil
}

// verdictOf is the result of one check of a run ("" when it did not run).
func verdictOf(r scenario.Result, check string) models.Result {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v.Result
		}
	}
	return ""
}

// findingsOf are the kinds of finding a run shows, each with the checks
// that failed for it.
func findingsOf(r scenario.Result) map[string][]string {
	out := map[string][]string{}
	for _, v := range r.Verdicts {
		if v.Result != models.Invalid {
			continue
		}
		kind := VerdictLockBroke
		switch {
		case v.Liveness || v.Check == livenessCheck:
			kind = VerdictLiveness
		case v.Check == dataCheck:
			kind = VerdictCorrupted
		case v.Check == tokenCheck:
			kind = VerdictTokenOrder
		}
		out[kind] = append(out[kind], v.Check)
	}
	return out
}

// shrinkTarget is what a finding's shrunk run must keep: its first failing
// check of the kind and, for a safety finding, the first kind of violation
// its overlaps show (as shrink.TargetOf: the mechanism stays the same).
func shrinkTarget(r scenario.Result, kind string, checks []string) shrink.Target {
	g := shrink.Target{Check: checks[0]}
	if kind == VerdictLiveness {
		return g
	}
	kinds := scenario.ViolationKinds(r.Events)
	for _, k := range kinds {
		if k != scenario.KindOther {
			g.Kind = k
			return g
		}
	}
	if len(kinds) > 0 {
		g.Kind = scenario.KindOther
	}
	return g
}

// finish shrinks a finding, tells it and writes its run directory. It
// returns the finding and the runs shrinking made. A finding of a single
// placed fault is not shrunk: it is one fault already, placed at a protocol
// step, and shrinking it (up to ShrinkRuns runs of the row's length) would
// only move or shorten that fault.
func finish(c SearchConfig, row SearchedRow, column, kind string, f *found, o CellOptions) (Finding, int, error) {
	t := f.test
	var res scenario.Result
	runs := 0
	note := ""
	placed := t.Schedule != nil && len(t.Schedule.Faults) == 1
	if !o.NoShrink && !placed {
		out, err := shrink.Shrink(t, shrink.Options{Target: &f.target, MaxRuns: c.ShrinkRuns})
		runs = out.Runs
		switch {
		case err == nil:
			t, res = out.Minimal, out.Result
		case errors.Is(err, harness.ErrCrash):
			return Finding{}, 0, err
		default:
			// Not shrunk (the run does not fail the same way with its
			// schedule made explicit, say): the finding as found.
			note = "not shrunk: " + oneLine(err.Error())
		}
	}
	if res.Events == nil {
		r, err := harness.Run(t)
		if err != nil {
			return Finding{}, 0, err
		}
		res = r
		runs++
	}
	fd := Finding{Kind: kind, Checks: f.checks, RunsTo: f.runsTo, Faults: faultLines(res), Story: storyOf(res, f.target.Check)}
	if note != "" {
		fd.Story += " (" + note + ")"
	}
	if o.Dir != "" {
		rel := filepath.Join(RunsDir, fmt.Sprintf("%s-%s-%s", row.ID, column, kind))
		fd.Dir, fd.Replay = rel, ScheduleReplayCommand(t, rel)
		run := judge.Report(res, fd.Replay)
		story := scenario.Story(res)
		run.Attachments = append(run.Attachments, reports.Attachment{Name: "story.txt", Label: "story",
			Write: func(w io.Writer) error {
				_, err := io.WriteString(w, fd.Story+"\n\n"+strings.Join(story, "\n")+"\n")
				return err
			}})
		if err := reports.WriteDir(filepath.Join(o.Dir, rel), run); err != nil {
			return Finding{}, 0, err
		}
	} else {
		fd.Replay = ScheduleReplayCommand(t, "DIR")
	}
	res.Release()
	return fd, runs, nil
}

// ScheduleReplayCommand is the `locklab run` command that replays test t,
// whose schedule is explicit, from the schedule.json of the run directory
// dir, into dir: byte for byte the run that wrote dir.
func ScheduleReplayCommand(t scenario.Test, dir string) string {
	args := append([]string{"locklab", "run"}, t.Args()...)
	args = append(args, "--nemesis-file", filepath.Join(dir, reports.ScheduleFile), "--out", dir)
	return shellJoin(args)
}

// faultLines are a run's faults, one line each: those that fired as they
// started, in time order ("pause c1 at 8.258s: pause for 11s"), then those
// that never took hold, as scheduled, with "(did not fire)".
func faultLines(r scenario.Result) []string {
	var out []string
	for _, e := range firedFaults(r) {
		out = append(out, fmt.Sprintf("%s %s at %s: %s", e.F, strings.Join(e.Targets, ","), history.FormatTime(e.Time), e.Detail))
	}
	for i, f := range r.Schedule.Faults {
		if i < len(r.FaultOutcomes) && !r.FaultOutcomes[i].Fired {
			out = append(out, faultWords(f)+" (did not fire)")
		}
	}
	return out
}

// firedFaults are the start events of a run's faults, in time order.
func firedFaults(r scenario.Result) []history.Event {
	var out []history.Event
	for _, e := range r.Events {
		if e.Process == history.NemesisProcess && e.Type == history.Start && slices.Contains(nemesis.Kinds, nemesis.Kind(e.F)) {
			out = append(out, e)
		}
	}
	return out
}

// faultWords says a scheduled fault in words: its kind, its targets, its
// size and when it is due.
func faultWords(f nemesis.Fault) string {
	var who string
	switch {
	case len(f.Groups) > 0:
		var sides []string
		for _, g := range f.Groups {
			sides = append(sides, "{"+strings.Join(g, ",")+"}")
		}
		who = strings.Join(sides, " from ")
	case len(f.From) > 0:
		who = strings.Join(f.From, ",") + "→" + strings.Join(f.To, ",")
	default:
		who = strings.Join(f.Targets, ",")
	}
	words := []string{string(f.Kind), who}
	d := time.Duration(f.Duration)
	switch f.Kind {
	case nemesis.ClockJump:
		words = append(words, fmt.Sprintf("by %+v", time.Duration(f.Amount)))
		if d > 0 {
			words = append(words, "for "+d.String())
		}
	case nemesis.ClockDrift:
		words = append(words, fmt.Sprintf("%+.1f%%", 100*f.Drift))
		if d > 0 {
			words = append(words, "for "+d.String())
		}
	case nemesis.Delay:
		words = append(words, "+"+time.Duration(f.Amount).String())
		if f.Match != "" {
			words = append(words, "on "+f.Match)
		}
		switch {
		case f.Count > 0:
			words = append(words, fmt.Sprintf("for %d message(s)", f.Count))
		case d > 0:
			words = append(words, "for "+d.String())
		}
	case nemesis.Crash:
		switch {
		case d > 0:
			words = append(words, "restarting after "+d.String())
		case f.Until == nil:
			words = append(words, "never restarted")
		}
	default:
		switch {
		case d > 0 && f.Until != nil:
			words = append(words, "for at most "+d.String())
		case d > 0:
			words = append(words, "for "+d.String())
		case f.Until == nil:
			words = append(words, "until the end")
		}
	}
	if tr := f.After; tr != nil {
		typ := tr.Type
		if typ == "" {
			typ = "ok"
		}
		nth := max(tr.Nth, 1)
		when := fmt.Sprintf("right after %s's %s %s %s", tr.Node, ordinal(nth), tr.F, typ)
		if tr.Delay > 0 {
			when += " +" + time.Duration(tr.Delay).String()
		}
		if f.At > 0 {
			when += " (from " + history.FormatTime(int64(f.At)) + " on)"
		}
		words = append(words, when)
	} else {
		words = append(words, "at "+history.FormatTime(int64(f.At)))
	}
	if f.Until != nil {
		words = append(words, "until "+f.Until.Words())
	}
	return strings.Join(words, " ")
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// storyOf tells a finding's run in one sentence: the faults that fired,
// the first time two clients held the lock at once, and what the failing
// check found ("After a pause of c1 at 8.258s (pause for 11s), c1 and c2
// held "k" at once from 18.305s to 18.409s: the critical sections on "k"
// are not atomic: lost update (...)").
func storyOf(r scenario.Result, check string) string {
	var faults []string
	for _, e := range firedFaults(r) {
		faults = append(faults, fmt.Sprintf("a %s of %s at %s (%s)", e.F, strings.Join(e.Targets, ", "), history.FormatTime(e.Time), e.Detail))
	}
	s := "Without any fault"
	if len(faults) > 0 {
		s = "After " + strings.Join(faults, ", then ")
	}
	if o := models.Overlaps(models.Holdings(r.Events)); len(o) > 0 {
		s += fmt.Sprintf(", %s and %s held %q at once from %s to %s", o[0].A.Node, o[0].B.Node, o[0].A.Key,
			history.FormatTime(o[0].Start), history.FormatTime(o[0].End))
	}
	for _, v := range r.Verdicts {
		if v.Check == check {
			reason, _, _ := strings.Cut(v.Reason, "\n")
			s += " (" + check + " " + string(v.Result) + "): " + reason
			break
		}
	}
	return s + "."
}

// evidenceAcc counts what a cell's runs showed.
type evidenceAcc struct {
	family string
	timing timing
	// fired and quiet count the runs in which a fault of the family took
	// hold, and those in which none did; undecided the runs a check could
	// not decide.
	fired, quiet, undecided int
	// largest is the largest fired fault of each kind, in its own unit
	// (a duration, or a drift rate).
	largest map[nemesis.Kind]float64
	// failed counts, per check, the runs it failed.
	failed map[string]int
}

// add counts one run.
func (a *evidenceAcc) add(r scenario.Result) {
	fired := judge.FaultsOf(r).Fired
	n := 0
	for k, c := range fired {
		if a.family == "random" || k == a.family {
			n += c
		}
	}
	if n > 0 {
		a.fired++
	} else {
		a.quiet++
	}
	if slices.ContainsFunc(r.Verdicts, func(v models.Verdict) bool { return v.Result == models.Unknown }) {
		a.undecided++
	}
	a.addFailed(r)
	for i, f := range r.Schedule.Faults {
		if i >= len(r.FaultOutcomes) || !r.FaultOutcomes[i].Fired || (a.family != "random" && string(f.Kind) != a.family) {
			continue
		}
		size := faultSize(f, r.Test.Time)
		if a.largest == nil {
			a.largest = map[nemesis.Kind]float64{}
		}
		a.largest[f.Kind] = max(a.largest[f.Kind], size)
	}
}

// addFailed counts the checks a run failed (a placement's run, too: its
// findings are the cell's).
func (a *evidenceAcc) addFailed(r scenario.Result) {
	for _, v := range r.Verdicts {
		if v.Result == models.Invalid {
			if a.failed == nil {
				a.failed = map[string]int{}
			}
			a.failed[v.Check]++
		}
	}
}

// faultSize is how large a fault is, in its kind's unit: the duration of a
// pause, a partition or a crash (until the end of the run when it has none),
// the size of a clock jump or a message delay, the rate of a clock drift.
func faultSize(f nemesis.Fault, runTime time.Duration) float64 {
	switch f.Kind {
	case nemesis.ClockJump, nemesis.Delay:
		return math.Abs(float64(f.Amount))
	case nemesis.ClockDrift:
		return math.Abs(f.Drift)
	}
	if f.Duration > 0 {
		return float64(f.Duration)
	}
	return float64(max(runTime-time.Duration(f.At), 0))
}

// kindWords name a fault kind's faults in the plural, and a fault of the
// family in the singular ("pauses", "a pause").
var kindWords = map[string][2]string{
	string(nemesis.Pause):      {"pauses", "a pause"},
	string(nemesis.Crash):      {"crashes (time down)", "a crash"},
	string(nemesis.Partition):  {"partitions", "a partition"},
	string(nemesis.ClockJump):  {"clock jumps", "a clock jump"},
	string(nemesis.ClockDrift): {"clock drift", "a clock drift"},
	string(nemesis.Delay):      {"message delays", "a message delay"},
	"random":                   {"faults", "a fault"},
}

// evidence is the cell's evidence after runs runs, given its first findings.
func (a *evidenceAcc) evidence(runs int, first map[string]*found) Evidence {
	e := Evidence{Runs: runs, Fired: a.fired, Quiet: a.quiet, Undecided: a.undecided, Failed: a.failed}
	var words []string
	for _, k := range nemesis.Kinds {
		size, ok := a.largest[k]
		if !ok {
			continue
		}
		w, ratio := a.timing.relative(k, size)
		words = append(words, kindWords[string(k)][0]+" up to "+w)
		e.LargestRatio = max(e.LargestRatio, ratio)
	}
	e.Largest = strings.Join(words, ", ")
	one := kindWords[a.family][1]
	if a.fired == 0 {
		e.Line = fmt.Sprintf("no %s fired in any of the %s: the cell says nothing", strings.TrimPrefix(one, "a "), plural(runs, "run"))
		if f := first[VerdictCorrupted]; f != nil {
			e.Line = fmt.Sprintf("data corrupted in run %d without %s firing", f.runsTo, one)
		}
		return e
	}
	fired := fmt.Sprintf("%d with %s fired", a.fired, one)
	if e.Largest != "" {
		fired += ", " + e.Largest
	}
	quiet := ""
	if a.quiet > 0 {
		quiet = fmt.Sprintf("; %s without %s fired, not counted", plural(a.quiet, "run"), one)
	}
	if a.undecided > 0 {
		quiet += fmt.Sprintf("; %d undecided", a.undecided)
	}
	if f := first[VerdictCorrupted]; f != nil {
		e.Line = fmt.Sprintf("data corrupted in run %d of the search (%s%s)", f.runsTo, fired, quiet)
		return e
	}
	e.Bound = 1 - math.Pow(0.05, 1/float64(a.fired))
	bound := fmt.Sprintf("< %s per run (95%%)", percent(e.Bound))
	e.Beyond = a.timing.beyond
	var found []string
	for _, k := range findingKinds[1:] {
		if f := first[k]; f != nil {
			found = append(found, fmt.Sprintf("%s in run %d", kindPhrase[k], f.runsTo))
		}
	}
	if len(found) > 0 {
		e.Line = fmt.Sprintf("%s; no data corruption found in %s (%s%s): %s", strings.Join(found, ", "), plural(runs, "run"), fired, quiet, bound)
		return e
	}
	e.Line = fmt.Sprintf("no violation found in %s (%s%s): %s", plural(runs, "run"), fired, quiet, bound)
	return e
}

// kindPhrase says a kind of finding in words.
var kindPhrase = map[string]string{
	VerdictCorrupted:  "data corrupted",
	VerdictLockBroke:  "lock broke",
	VerdictTokenOrder: "fencing tokens out of order",
	VerdictLiveness:   "liveness failed",
}

// percent renders a rate with two significant digits ("0.75%", "1.5%").
func percent(x float64) string {
	p := 100 * x
	switch {
	case p < 0.1:
		return fmt.Sprintf("%.3f%%", p)
	case p < 1:
		return fmt.Sprintf("%.2f%%", p)
	case p < 10:
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// timing is a row's time scale, which a search draws its faults' durations
// around and its evidence measures them against: the lease of a grant when
// grants have one, else the system's timeouts.
type timing struct {
	// scale is the lease, or the sum of the timeouts (0: neither).
	scale time.Duration
	// name names it ("the lease (ttl 10s)").
	name string
	// run is the runs' simulated length; beyond names the system's duration
	// options longer than it ("lock-delay 1m0s"): a fault that must outlast
	// one of them to matter cannot show in these runs.
	run    time.Duration
	beyond []string
}

// relative says a fault's size relative to the timing ("3.2x the lease
// (ttl 10s)", or "45%" for a drift rate) and the ratio.
func (t timing) relative(k nemesis.Kind, size float64) (string, float64) {
	if k == nemesis.ClockDrift {
		return percent(size), size
	}
	if t.scale <= 0 {
		return time.Duration(size).Round(time.Millisecond).String(), 0
	}
	ratio := size / float64(t.scale)
	return fmt.Sprintf("%.1fx %s", ratio, t.name), ratio
}

// timings remembers each row's timing: a function of the row and the run's
// shape alone.
var timings sync.Map // string -> timing

// rowTiming is the row's time scale: the median lease of the grants of its
// first fault-free cost run, named by the duration option that sets it
// ("the lease (ttl 10s)"); without leases, the system's timeouts as the
// guided search sums them (guide.TimeScale).
func rowTiming(c SearchConfig, row SearchedRow) (timing, error) {
	key := row.ID + "/" + fmt.Sprint(c.Clients, "/", time.Duration(c.Time))
	if t, ok := timings.Load(key); ok {
		return t.(timing), nil
	}
	test := c.test(row, "none", 1)
	r, err := harness.Run(test)
	if err != nil {
		return timing{}, fmt.Errorf("a fault-free run: %w", err)
	}
	var leases []int64
	for _, h := range models.Holdings(r.Events) {
		if h.Deadline != nil && *h.Deadline > h.Start {
			leases = append(leases, *h.Deadline-h.Start)
		}
	}
	r.Release()
	var t timing
	if len(leases) > 0 {
		t.scale = time.Duration(median(leases)).Round(time.Millisecond)
		t.name = "the lease (" + t.scale.String() + ")"
		if opt := optionNear(test, t.scale); opt != "" {
			t.name = "the lease (" + opt + ")"
		}
	} else if sum, words := guide.TimeScale(test); sum > 0 {
		t.scale, t.name = sum, "the timeouts ("+words+")"
	}
	t.run, t.beyond = test.Time, optionsLongerThan(test, test.Time)
	timings.Store(key, t)
	return t, nil
}

// optionsLongerThan names the system's duration options longer than d
// ("lock-delay 1m0s"), in the option table's order.
func optionsLongerThan(t scenario.Test, d time.Duration) []string {
	sys, err := system.Find(t.System)
	if err != nil || sys.Options == nil {
		return nil
	}
	settings, err := sys.Options.Effective(t.SystemOptions)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range settings {
		if v, err := time.ParseDuration(s.Value); err == nil && v > d {
			out = append(out, s.Name+" "+v.String())
		}
	}
	return out
}

// optionNear names the system option whose duration is within 10% of d
// ("ttl 10s"), "" when none is.
func optionNear(t scenario.Test, d time.Duration) string {
	sys, err := system.Find(t.System)
	if err != nil || sys.Options == nil {
		return ""
	}
	settings, err := sys.Options.Effective(t.SystemOptions)
	if err != nil {
		return ""
	}
	for _, s := range settings {
		v, err := time.ParseDuration(s.Value)
		if err == nil && v > 0 && math.Abs(float64(v-d)) <= 0.1*float64(v) {
			return s.Name + " " + v.String()
		}
	}
	return ""
}
