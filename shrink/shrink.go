package shrink

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// Target is the failure a shrunk run must keep.
type Target struct {
	// Check is the check that must stay invalid.
	Check string `json:"check"`
	// Kind is the kind of violation (scenario.ViolationKinds) that must stay
	// among the run's overlaps; "" when the original had no overlap, and then
	// any run that fails Check counts.
	Kind string `json:"kind,omitempty"`
}

func (g Target) String() string {
	if g.Kind == "" {
		return g.Check + " invalid"
	}
	return g.Check + " invalid, " + g.Kind + " violation"
}

// TargetOf is the failure of a result: its first invalid safety check (its
// first invalid liveness check when no safety check failed) and the first
// kind its overlaps show ("other" only when no rule explains any of them).
// ok is false when every check passed or could not decide.
func TargetOf(r scenario.Result) (g Target, ok bool) {
	for _, safety := range []bool{true, false} {
		for _, v := range r.Verdicts {
			if v.Result == models.Invalid && v.Liveness != safety {
				g.Check, ok = v.Check, true
				break
			}
		}
		if ok {
			break
		}
	}
	if !ok {
		return g, false
	}
	kinds := scenario.ViolationKinds(r.Events)
	for _, k := range kinds {
		if k != "other" {
			g.Kind = k
			return g, true
		}
	}
	if len(kinds) > 0 {
		g.Kind = "other"
	}
	return g, true
}

// Fails reports whether a result fails the way the target says.
func (g Target) Fails(r scenario.Result) bool {
	invalid := slices.ContainsFunc(r.Verdicts, func(v models.Verdict) bool { return v.Check == g.Check && v.Result == models.Invalid })
	return invalid && (g.Kind == "" || slices.Contains(scenario.ViolationKinds(r.Events), g.Kind))
}

// Options tune Shrink. Zero fields take the defaults.
type Options struct {
	// Target is the failure to keep; nil: the original run's (TargetOf).
	Target *Target
	// MaxRuns bounds the candidate runs (the original's two runs excluded).
	// Default 1000.
	MaxRuns int
}

// Outcome is what Shrink found.
type Outcome struct {
	// Target is the failure every accepted candidate kept.
	Target Target
	// Original is the test given, with its schedule made explicit (a drawn
	// schedule as the faults it drew).
	Original scenario.Test
	// Minimal is the smallest failing test found.
	Minimal scenario.Test
	// Result is the minimal test's run with the original's checks.
	Result scenario.Result
	// FaultsBefore and FaultsAfter count the faults of the two schedules.
	FaultsBefore, FaultsAfter int
	// Runs counts the simulated runs, the original's and the final one included.
	Runs int
	// Wall is the machine time Shrink took (the only figure that is not
	// deterministic).
	Wall time.Duration
}

// Line is the one-line summary: "shrunk 14 faults to 1 in 63 runs (0.9 s)".
func (o Outcome) Line() string {
	return fmt.Sprintf("shrunk %s to %d in %s (%.1f s)", plural(o.FaultsBefore, "fault"), o.FaultsAfter,
		plural(o.Runs, "run"), o.Wall.Seconds())
}

// Changes lists what else shrinking changed: the clients and the run's time.
func (o Outcome) Changes() []string {
	var out []string
	if a, b := o.Original.Clients, o.Minimal.Clients; a != b {
		out = append(out, fmt.Sprintf("clients %d to %d", a, b))
	}
	if a, b := o.Original.Time, o.Minimal.Time; a != b {
		out = append(out, fmt.Sprintf("time %v to %v", a, b))
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ErrNotFailing is returned for a test whose run fails no check: there is
// nothing to shrink.
var ErrNotFailing = errors.New("the run fails no check: nothing to shrink")

// Shrink runs t and reduces it to a minimal test that fails the same way.
func Shrink(t scenario.Test, opts Options) (Outcome, error) {
	began := time.Now()
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 1000
	}
	t = t.WithDefaults()
	first, err := harness.Run(t)
	if err != nil {
		return Outcome{}, fmt.Errorf("shrink: run the original: %w", err)
	}
	target, ok := TargetOf(first)
	if opts.Target != nil {
		target, ok = *opts.Target, opts.Target.Fails(first)
	}
	if !ok {
		return Outcome{}, ErrNotFailing
	}
	explicit := t
	sched := first.Schedule
	explicit.Schedule = &nemesis.Schedule{Faults: slices.Clone(sched.Faults)}
	s := &shrinker{target: target, maxRuns: opts.MaxRuns, seen: map[string]bool{}, runs: 1}
	cur := explicit
	cur.Checks = []string{target.Check}
	if !s.fails(cur) {
		return Outcome{}, fmt.Errorf("shrink: the run with its schedule made explicit does not fail as the original did (%s)", target)
	}
	for range 3 {
		next := s.round(cur)
		if s.key(next) == s.key(cur) {
			break
		}
		cur = next
	}
	cur.Checks = t.Checks
	final, err := harness.Run(cur)
	s.runs++
	if err != nil {
		return Outcome{}, fmt.Errorf("shrink: run the minimal test: %w", err)
	}
	if !target.Fails(final) {
		return Outcome{}, fmt.Errorf("shrink: the minimal test does not fail with the original's checks (%s)", target)
	}
	return Outcome{Target: target, Original: explicit, Minimal: cur, Result: final,
		FaultsBefore: len(sched.Faults), FaultsAfter: len(cur.Schedule.Faults), Runs: s.runs, Wall: time.Since(began)}, nil
}

// shrinker holds the state of one Shrink: the target, the runs so far and
// the verdict of every candidate tried.
type shrinker struct {
	target  Target
	maxRuns int
	runs    int
	seen    map[string]bool
}

// key identifies a candidate: its JSON (system, options, clients, time,
// seed, schedule, checks).
func (s *shrinker) key(t scenario.Test) string {
	b, err := json.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("shrink: marshal test: %v", err))
	}
	return string(b)
}

// fails runs a candidate (once: the verdict is cached) and reports whether it
// fails as the target says. A candidate that cannot run (its schedule names
// a node it does not have) or crashes the harness does not fail the same way.
func (s *shrinker) fails(t scenario.Test) bool {
	k := s.key(t)
	if v, ok := s.seen[k]; ok {
		return v
	}
	if s.runs >= s.maxRuns || !s.runnable(t) {
		return false
	}
	s.runs++
	r, err := harness.Run(t)
	v := err == nil && s.target.Fails(r)
	s.seen[k] = v
	return v
}

// runnable rejects, without running it, a candidate whose schedule names a
// client it does not have.
func (s *shrinker) runnable(t scenario.Test) bool {
	for _, f := range t.Schedule.Faults {
		names := slices.Concat(f.Targets, f.From, f.To)
		for _, g := range f.Groups {
			names = append(names, g...)
		}
		if f.After != nil {
			names = append(names, f.After.Node)
		}
		if f.Until != nil {
			names = append(names, f.Until.Node)
		}
		for _, n := range names {
			if i, err := strconv.Atoi(strings.TrimPrefix(n, "c")); err == nil && strings.HasPrefix(n, "c") && i > t.Clients {
				return false
			}
		}
	}
	return true
}

// round is one pass of every step.
func (s *shrinker) round(cur scenario.Test) scenario.Test {
	cur = s.ddmin(cur)
	if len(cur.Schedule.Faults) > 1 {
		if a := s.anchor(cur); s.key(a) != s.key(cur) {
			cur = s.ddmin(a)
		}
	}
	cur = s.fewerNodes(cur)
	cur = s.smaller(cur)
	cur = s.later(cur)
	cur = s.fewerClients(cur)
	return s.shorter(cur)
}

// withFaults is t with the given faults as its schedule.
func withFaults(t scenario.Test, faults []nemesis.Fault) scenario.Test {
	t.Schedule = &nemesis.Schedule{Faults: faults}
	return t
}

// ddmin is Zeller's delta debugging over the fault list.
func (s *shrinker) ddmin(cur scenario.Test) scenario.Test {
	faults := cur.Schedule.Faults
	if s.fails(withFaults(cur, []nemesis.Fault{})) {
		return withFaults(cur, []nemesis.Fault{})
	}
	n := 2
	for len(faults) >= 2 {
		chunks := nemesis.Chunks(faults, n)
		reduced := false
		for _, c := range chunks {
			if s.fails(withFaults(cur, c)) {
				faults, n, reduced = c, 2, true
				break
			}
		}
		for i := 0; !reduced && n > 2 && i < len(chunks); i++ {
			if c := nemesis.AllBut(chunks, i); s.fails(withFaults(cur, c)) {
				faults, n, reduced = c, max(n-1, 2), true
			}
		}
		if !reduced {
			if n >= len(faults) {
				break
			}
			n = min(2*n, len(faults))
		}
	}
	return withFaults(cur, faults)
}

// fewerNodes drops nodes from each fault that acts on several: a target, a
// member of a partition's group (a group keeps one), an end of a cut.
func (s *shrinker) fewerNodes(cur scenario.Test) scenario.Test {
	for i := range cur.Schedule.Faults {
		for _, field := range []func(*nemesis.Fault) *[]string{
			func(f *nemesis.Fault) *[]string { return &f.Targets },
			func(f *nemesis.Fault) *[]string { return &f.From },
			func(f *nemesis.Fault) *[]string { return &f.To },
		} {
			cur = s.dropEach(cur, i, field)
		}
		for g := range cur.Schedule.Faults[i].Groups {
			cur = s.dropEach(cur, i, func(f *nemesis.Fault) *[]string { return &f.Groups[g] })
		}
	}
	return cur
}

// dropEach tries fault i without each node of one of its lists in turn,
// keeping every removal that still fails; a list keeps one node.
func (s *shrinker) dropEach(cur scenario.Test, i int, list func(*nemesis.Fault) *[]string) scenario.Test {
	for j := 0; j < len(*list(&cur.Schedule.Faults[i])); {
		f := cloneFault(cur.Schedule.Faults[i])
		nodes := list(&f)
		if len(*nodes) < 2 {
			return cur
		}
		*nodes = slices.Delete(*nodes, j, j+1)
		if c := withFault(cur, i, f); s.fails(c) {
			cur = c
			continue
		}
		j++
	}
	return cur
}

// cloneFault copies a fault's lists, so that changing the copy leaves the
// original as it was.
func cloneFault(f nemesis.Fault) nemesis.Fault {
	f.Targets, f.From, f.To = slices.Clone(f.Targets), slices.Clone(f.From), slices.Clone(f.To)
	groups := make([][]string, len(f.Groups))
	for i, g := range f.Groups {
		groups[i] = slices.Clone(g)
	}
	if f.Groups != nil {
		f.Groups = groups
	}
	return f
}

// withFault is t with fault i replaced by f.
func withFault(t scenario.Test, i int, f nemesis.Fault) scenario.Test {
	faults := slices.Clone(t.Schedule.Faults)
	faults[i] = f
	return withFaults(t, faults)
}

// lastsToTheEnd reports whether a fault with duration 0 lasts to the end of
// the run (a crash without restart, a partition, a drift, a delay of every
// message); a clock jump with duration 0 is a step that stays, not a longer one.
func lastsToTheEnd(f nemesis.Fault) bool {
	switch f.Kind {
	case nemesis.Crash, nemesis.Partition, nemesis.ClockDrift:
		return true
	case nemesis.Delay:
		return f.Count == 0
	}
	return false
}

// smaller shrinks each fault's duration, amount and drift.
func (s *shrinker) smaller(cur scenario.Test) scenario.Test {
	for i := range cur.Schedule.Faults {
		f := cur.Schedule.Faults[i]
		try := func(g nemesis.Fault) bool { return s.fails(withFault(cur, i, g)) }
		if f.Duration == 0 && lastsToTheEnd(f) {
			g := f
			g.Duration = nemesis.Duration(cur.Time)
			if try(g) {
				f = g
			}
		}
		if f.Duration > 0 {
			f.Duration = nemesis.Duration(smallest(0, time.Duration(f.Duration), func(d time.Duration) bool {
				g := f
				g.Duration = nemesis.Duration(d)
				return try(g)
			}))
		}
		if f.Amount != 0 && (f.Kind == nemesis.ClockJump || f.Kind == nemesis.Delay) {
			sign := time.Duration(1)
			if f.Amount < 0 {
				sign = -1
			}
			f.Amount = nemesis.Duration(sign * smallest(0, sign*time.Duration(f.Amount), func(d time.Duration) bool {
				g := f
				g.Amount = nemesis.Duration(sign * d)
				return try(g)
			}))
		}
		if f.Drift != 0 {
			f.Drift = smallestDrift(f.Drift, func(d float64) bool {
				g := f
				g.Drift = d
				return try(g)
			})
		}
		cur = withFault(cur, i, f)
	}
	return cur
}

// later moves each fault's start as late as it can go, the latest first.
func (s *shrinker) later(cur scenario.Test) scenario.Test {
	order := make([]int, len(cur.Schedule.Faults))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return -int(cur.Schedule.Faults[a].At - cur.Schedule.Faults[b].At)
	})
	for _, i := range order {
		f := cur.Schedule.Faults[i]
		try := func(at time.Duration) bool {
			g := f
			g.At = nemesis.Duration(at)
			return s.fails(withFault(cur, i, g))
		}
		// A drawn time read to the millisecond, when it fails as well.
		if r := time.Duration(f.At).Round(time.Millisecond); r != time.Duration(f.At) && try(r) {
			f.At = nemesis.Duration(r)
		}
		f.At = nemesis.Duration(largest(time.Duration(f.At), cur.Time, try))
		// An anchor's delay read to the millisecond, when it fails as well.
		if f.After != nil {
			if r := time.Duration(f.After.Delay).Round(time.Millisecond); r != time.Duration(f.After.Delay) {
				g := f
				g.After = &nemesis.Trigger{Node: f.After.Node, F: f.After.F, Type: f.After.Type, Nth: f.After.Nth, Delay: nemesis.Duration(r)}
				if s.fails(withFault(cur, i, g)) {
					f = g
				}
			}
		}
		cur = withFault(cur, i, f)
	}
	return cur
}

// fewerClients tries the fewest clients first.
func (s *shrinker) fewerClients(cur scenario.Test) scenario.Test {
	for n := 1; n < cur.Clients; n++ {
		c := cur
		c.Clients = n
		if s.fails(c) {
			return c
		}
	}
	return cur
}

// shorter cuts the simulated time to the shortest that still fails, to 100 ms.
func (s *shrinker) shorter(cur scenario.Test) scenario.Test {
	best := smallestStep(0, cur.Time, 100*time.Millisecond, func(d time.Duration) bool {
		c := cur
		c.Time = d
		return s.fails(c)
	})
	cur.Time = best
	return cur
}

// smallest is the smallest d in (lo, hi] for which fails(d) holds, assuming
// fails(hi), by binary search to the millisecond or 1/16 of the range.
func smallest(lo, hi time.Duration, fails func(time.Duration) bool) time.Duration {
	return smallestStep(lo, hi, max(time.Millisecond, (hi-lo)/16), fails)
}

// smallestStep is smallest to the precision prec.
func smallestStep(lo, hi, prec time.Duration, fails func(time.Duration) bool) time.Duration {
	_, hi = bisect(lo, hi, prec, func(d time.Duration) bool { return !fails(d) })
	return hi
}

// largest is the largest d in [lo, hi) for which fails(d) holds, assuming
// fails(lo), by binary search to the millisecond or 1/16 of the range.
func largest(lo, hi time.Duration, fails func(time.Duration) bool) time.Duration {
	lo, _ = bisect(lo, hi, max(time.Millisecond, (hi-lo)/16), fails)
	return lo
}

// bisect narrows [lo, hi] to prec or less, at round durations (nice): a
// midpoint for which low holds becomes lo, any other hi.
func bisect(lo, hi, prec time.Duration, low func(time.Duration) bool) (time.Duration, time.Duration) {
	for hi-lo > prec {
		mid := nice(lo, hi, prec)
		if low(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, hi
}

// nice is the middle of (lo, hi), rounded to a round number (of prec's
// order, at least a millisecond) when that stays strictly inside, so that
// shrunk schedules read well.
func nice(lo, hi, prec time.Duration) time.Duration {
	mid := lo + (hi-lo)/2
	for _, unit := range []time.Duration{time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond} {
		if unit > prec {
			continue
		}
		if r := mid.Round(unit); r > lo && r < hi {
			return r
		}
	}
	return mid
}

// smallestDrift is the smallest drift of d's sign, to 0.001, that still
// fails, by binary search on its size.
func smallestDrift(d float64, fails func(float64) bool) float64 {
	sign := 1.0
	if d < 0 {
		sign = -1
	}
	lo, hi := 0, int(sign*d*1000+0.5)
	prec := max(1, hi/16)
	for hi-lo > prec {
		mid := lo + (hi-lo)/2
		if fails(sign * float64(mid) / 1000) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if float64(hi)/1000 >= sign*d {
		return d
	}
	return sign * float64(hi) / 1000
}
