package libmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// Replay runs cfg with the faults of schedule (the JSON of a nemesis
// schedule: Result.Schedule, what Shrink prints, a schedule file's
// contents) in place of cfg.Faults. A schedule library mode cannot run
// fails t naming the fault.
func Replay(t *testing.T, cfg Config, schedule string) Result {
	t.Helper()
	s, err := nemesis.Parse([]byte(schedule), "the replayed schedule")
	if err != nil {
		t.Fatalf("libmode: replay: %v", err)
	}
	faults, err := FromSchedule(cfg, s)
	if err != nil {
		t.Fatalf("libmode: replay: %v", err)
	}
	cfg.Faults = faults
	return Run(t, cfg)
}

// Target is the failure a shrunk run keeps: the same safety check is
// invalid and, when the original's overlaps had a kind (gc-pause,
// clock-jump, ...), a violation of that kind is still among them.
type Target struct {
	Check string
	Kind  string
}

func (g Target) String() string {
	if g.Kind == "" {
		return g.Check + " invalid"
	}
	return fmt.Sprintf("%s invalid (%s)", g.Check, g.Kind)
}

// TargetOf is the failure of r: its first invalid safety check and its
// first kind of violation; false when no safety check is invalid.
func TargetOf(r Result) (Target, bool) {
	for _, v := range r.Verdicts {
		if v.Result == models.Invalid && !v.Liveness {
			g := Target{Check: v.Check}
			if len(r.Kinds) > 0 {
				g.Kind = r.Kinds[0]
			}
			return g, true
		}
	}
	return Target{}, false
}

// Fails reports whether r fails the way g says.
func (g Target) Fails(r Result) bool {
	if r.Verdict(g.Check) != models.Invalid {
		return false
	}
	return g.Kind == "" || slices.Contains(r.Kinds, g.Kind)
}

// ShrinkOptions tune Shrink.
type ShrinkOptions struct {
	// MaxRuns bounds the candidate runs. Default 120.
	MaxRuns int
}

// Shrunk is what Shrink found: the smallest run it reached that still
// fails the same way, and how.
type Shrunk struct {
	Target Target
	// From is the run shrunk; Result the shrunk run (its Config and
	// Schedule replay it).
	From, Result Result
	// Runs is the number of candidate runs; Wall their real time.
	Runs int
	Wall time.Duration
}

// Line is the one-line summary: "shrunk 3 faults to 1, 3 clients to 2,
// 60s to 6.3s in 41 runs (12.1 s)".
func (s Shrunk) Line() string {
	parts := []string{fmt.Sprintf("%s to %d", plural(len(s.From.Schedule.Faults), "fault"), len(s.Result.Schedule.Faults))}
	if a, b := s.From.Config.Clients, s.Result.Config.Clients; a != b {
		parts = append(parts, fmt.Sprintf("%s to %d", plural(a, "client"), b))
	}
	if a, b := s.From.Config.Duration, s.Result.Config.Duration; a != b {
		parts = append(parts, fmt.Sprintf("%v to %v", a, b))
	}
	return fmt.Sprintf("shrunk %s in %d runs (%.1f s), keeping %s", strings.Join(parts, ", "), s.Runs, s.Wall.Seconds(), s.Target)
}

// Replay is the Go a test replays the shrunk run with: the seed, the
// clients and the run's time set on the test's own configuration, and
// the schedule given to Replay.
func (s Shrunk) Replay() string {
	return ReplayCall(s.Result)
}

// ReplayCall is the Go that replays r from a test's configuration cfg.
func ReplayCall(r Result) string {
	b, _ := json.Marshal(r.Schedule)
	return fmt.Sprintf("cfg.Seed, cfg.Clients, cfg.Duration = %d, %d, %d // %v\nres := libmode.Replay(t, cfg, `%s`)",
		r.Config.Seed, r.Config.Clients, int64(r.Config.Duration), r.Config.Duration, b)
}

// Report is the shrunk finding for a person: the line, the schedule in
// the schedule form (JSON a schedule file holds), the replay, and the
// shrunk run's summary.
func (s Shrunk) Report() string {
	var b strings.Builder
	b.WriteString(s.Line() + "\n")
	fmt.Fprintf(&b, "schedule (seed %d, %d clients, %v):\n%s", s.Result.Config.Seed, s.Result.Config.Clients,
		s.Result.Config.Duration, s.Result.Schedule.JSON())
	fmt.Fprintf(&b, "replay:\n%s\n", s.Replay())
	b.WriteString(s.Result.Summary())
	return b.String()
}

// ErrNotFailing is returned by Shrink for a run that fails no safety check.
var ErrNotFailing = errors.New("libmode: the run fails no safety check: nothing to shrink")

// Shrink reduces a failing run (found: a Result of Run, Explore, Guided
// or Replay) to a smaller one that fails the same way (Target), running
// the candidates with the same seed: delta debugging (ddmin) over the
// faults in the schedule form, then each fault made shorter (its
// duration, a clock jump's or a delay's amount, binary-searched to the
// millisecond), fewer clients (the fewest that fail, among those the
// schedule does not name), and a shorter run (binary search to 100 ms);
// the passes repeat while one changes anything (at most 3 rounds). It is
// deterministic: the same run gives the same result and the same number
// of runs. A run whose faults have no schedule form (Result.ScheduleErr)
// is refused, as is one that fails nothing.
func Shrink(t *testing.T, found Result, opts ShrinkOptions) (Shrunk, error) {
	t.Helper()
	g, ok := TargetOf(found)
	if !ok {
		return Shrunk{}, ErrNotFailing
	}
	if found.ScheduleErr != "" {
		return Shrunk{}, fmt.Errorf("libmode: shrink: %s", found.ScheduleErr)
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 120
	}
	began := time.Now()
	s := &shrinker{t: t, g: g, cfg: found.Config, max: opts.MaxRuns, seen: map[string]*Result{}}
	cur := candidate{faults: slices.Clone(found.Schedule.Faults), clients: found.Config.Clients, duration: found.Config.Duration}
	if !s.fails(cur) {
		return Shrunk{}, fmt.Errorf("libmode: shrink: the run's schedule form (%s) does not fail %s again: the run is not replayed by its schedule",
			found.Schedule.JSON(), g)
	}
	for round := 0; round < 3; round++ {
		before := cur.key()
		cur = s.ddmin(cur)
		cur = s.smaller(cur)
		cur = s.fewerClients(cur)
		cur = s.shorter(cur)
		if cur.key() == before {
			break
		}
	}
	return Shrunk{Target: g, From: found, Result: *s.seen[cur.key()], Runs: s.runs, Wall: time.Since(began)}, nil
}

// candidate is one run Shrink tries.
type candidate struct {
	faults   []nemesis.Fault
	clients  int
	duration time.Duration
}

func (c candidate) key() string {
	b, _ := json.Marshal(c.faults)
	return fmt.Sprintf("%d/%d/%s", c.clients, c.duration, b)
}

func (c candidate) with(faults []nemesis.Fault) candidate {
	c.faults = faults
	return c
}

type shrinker struct {
	t    *testing.T
	g    Target
	cfg  Config
	max  int
	runs int
	seen map[string]*Result // candidate -> its run (nil: not runnable)
}

// fails runs c (once: results are kept by candidate) and reports whether
// it fails the target. Past MaxRuns every new candidate counts as passing.
func (s *shrinker) fails(c candidate) bool {
	if r, ok := s.seen[c.key()]; ok {
		return r != nil && s.g.Fails(*r)
	}
	if s.runs >= s.max {
		return false
	}
	cfg := s.cfg
	cfg.Clients, cfg.Duration = c.clients, c.duration
	faults, err := FromSchedule(cfg, nemesis.Schedule{Faults: c.faults})
	if err != nil {
		s.seen[c.key()] = nil
		return false
	}
	cfg.Faults = faults
	s.runs++
	r := Run(s.t, cfg)
	s.seen[c.key()] = &r
	return s.g.Fails(r)
}

// ddmin is Zeller's delta debugging over the faults: the empty schedule,
// then halves, quarters, ... and their complements.
func (s *shrinker) ddmin(cur candidate) candidate {
	if len(cur.faults) == 0 {
		return cur
	}
	if s.fails(cur.with(nil)) {
		return cur.with(nil)
	}
	n := 2
	for len(cur.faults) >= 2 {
		chunks := nemesis.Chunks(cur.faults, n)
		reduced := false
		for i := range chunks {
			if s.fails(cur.with(chunks[i])) {
				cur, n, reduced = cur.with(chunks[i]), 2, true
				break
			}
		}
		if !reduced {
			for i := range chunks {
				if c := nemesis.AllBut(chunks, i); s.fails(cur.with(c)) {
					cur, n, reduced = cur.with(c), max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(cur.faults) {
				break
			}
			n = min(2*n, len(cur.faults))
		}
	}
	return cur
}

// smaller shortens each fault: its duration and its amount.
func (s *shrinker) smaller(cur candidate) candidate {
	for i := range cur.faults {
		f := cur.faults[i]
		if f.Duration > 0 && f.Kind != nemesis.ClockJump {
			d := smallest(time.Millisecond, time.Duration(f.Duration), func(d time.Duration) bool {
				return s.fails(cur.with(withField(cur.faults, i, func(f *nemesis.Fault) { f.Duration = nemesis.Duration(d) })))
			})
			cur = cur.with(withField(cur.faults, i, func(f *nemesis.Fault) { f.Duration = nemesis.Duration(d) }))
		}
		if a := time.Duration(cur.faults[i].Amount); a != 0 {
			sign := time.Duration(1)
			if a < 0 {
				sign, a = -1, -a
			}
			d := smallest(time.Millisecond, a, func(d time.Duration) bool {
				return s.fails(cur.with(withField(cur.faults, i, func(f *nemesis.Fault) { f.Amount = nemesis.Duration(sign * d) })))
			})
			cur = cur.with(withField(cur.faults, i, func(f *nemesis.Fault) { f.Amount = nemesis.Duration(sign * d) }))
		}
	}
	return cur
}

func withField(fs []nemesis.Fault, i int, set func(*nemesis.Fault)) []nemesis.Fault {
	out := slices.Clone(fs)
	set(&out[i])
	return out
}

// smallest is the smallest d in [lo, hi] for which fails holds, fails(hi)
// being known true: a binary search to the millisecond (or 1/16 of the
// range, whichever is coarser).
func smallest(lo, hi time.Duration, fails func(time.Duration) bool) time.Duration {
	prec := max(time.Millisecond, (hi-lo)/16)
	for hi-lo > prec {
		mid := lo + (hi-lo)/2
		mid = mid.Round(time.Millisecond)
		if mid <= lo || mid >= hi {
			break
		}
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// fewerClients tries the fewest clients, from 2, that the schedule allows
// (it names none of those dropped) and still fail.
func (s *shrinker) fewerClients(cur candidate) candidate {
	named := namedClients(cur.faults)
	for n := 2; n < cur.clients; n++ {
		if named > n {
			continue
		}
		c := cur
		c.clients = n
		if s.fails(c) {
			return c
		}
	}
	return cur
}

// namedClients is the highest client number the faults name (c3: 3).
func namedClients(fs []nemesis.Fault) int {
	n := 0
	note := func(name string) {
		var i int
		if _, err := fmt.Sscanf(name, "c%d", &i); err == nil {
			n = max(n, i)
		}
	}
	for _, f := range fs {
		for _, l := range [][]string{f.Targets, f.From, f.To, slices.Concat(f.Groups...)} {
			for _, x := range l {
				note(x)
			}
		}
		for _, t := range []*nemesis.Trigger{f.After, f.Until} {
			if t != nil {
				note(t.Node)
			}
		}
	}
	return n
}

// shorter is the shortest run, to 100 ms, that still fails.
func (s *shrinker) shorter(cur candidate) candidate {
	lo, hi := 100*time.Millisecond, cur.duration
	for hi-lo > 100*time.Millisecond {
		mid := (lo + (hi-lo)/2).Round(100 * time.Millisecond)
		if mid <= lo || mid >= hi {
			break
		}
		c := cur
		c.duration = mid
		if s.fails(c) {
			hi = mid
		} else {
			lo = mid
		}
	}
	cur.duration = hi
	return cur
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
