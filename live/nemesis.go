package live

import (
	"fmt"
	"github.com/locklab/locklab/liveform"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/nemesis"
)

// Unsupported is why a fault kind cannot run live ("" when it can).
var Unsupported = map[nemesis.Kind]string{
	nemesis.ClockDrift: "clock-drift cannot run live: a drift would have to slow or speed every timer of the real " +
		"library (hashicorp/raft's included); use clock-jump, which moves a node's wall clock",
}

// refusal says why the live system described by desc cannot perform
// faults of kind k at all ("" if it can perform some).
func refusal(desc liveform.Description, k nemesis.Kind) string {
	if why := Unsupported[k]; why != "" {
		return why
	}
	if desc.Refuse != nil {
		return desc.Refuse(nemesis.Fault{Kind: k, Targets: desc.Servers})
	}
	return ""
}

// faults runs a fault schedule in real time on a live system.
type faults struct {
	r        *run
	schedule nemesis.Schedule

	mu      sync.Mutex
	timers  []*time.Timer
	tallies []tally
	undo    []func()
}

type tally struct {
	started, triggered bool
	startAt, triggerAt time.Duration
	missed             string
	rules              []*faultnet.Rule
	carried            bool // a delay on a link the system carries (not counted by faultnet)
}

// check refuses, before the run, a schedule the live system cannot perform:
// a kind it cannot do, a lossy cut, a name that does not resolve, a crash of
// something that is not a server, a match that names no message type.
func (r *run) checkSchedule(s nemesis.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	fail := func(i int, field, msg string) error {
		f := s.Faults[i]
		where := ""
		if s.File() != "" {
			where = s.File() + ": "
		}
		return fmt.Errorf("%sfaults[%d] (%s): field %q: %s", where, i, f.Kind, field, msg)
	}
	for i, f := range s.Faults {
		if why := Unsupported[f.Kind]; why != "" {
			return fmt.Errorf("%w (%w)", fail(i, "kind", why), ErrNotLive)
		}
		if f.Lossy {
			// A real cut does to the bytes what the kernel's TCP does: holds
			// them, then delivers them or resets the connection.
			return fmt.Errorf("%w (%w)", fail(i, "lossy", "a lossy cut has no live form: a real cut holds what TCP sent, delivers it at the heal or resets the connection"), ErrNotLive)
		}
		if r.sys.Refuse != nil {
			if why := r.sys.Refuse(f); why != "" {
				return fmt.Errorf("%w (%w)", fail(i, "kind", why), ErrNotLive)
			}
		}
		for _, fld := range []struct {
			name  string
			nodes []string
		}{{"targets", f.Targets}, {"groups", flatten(f.Groups)}, {"from", f.From}, {"to", f.To}} {
			for _, name := range fld.nodes {
				ns, err := r.resolve(name)
				if err != nil {
					return fail(i, fld.name, err.Error())
				}
				if f.Kind == nemesis.Crash && !r.isRole(name) {
					for _, n := range ns {
						if !slices.Contains(r.sys.Servers, n) {
							return fmt.Errorf("%w (%w)", fail(i, fld.name, fmt.Sprintf("%s cannot crash live: only the lock servers (%s) crash and restart",
								n, strings.Join(r.sys.Servers, ", "))), ErrNotLive)
						}
					}
				}
			}
		}
		if t := f.After; t != nil && !slices.Contains(r.clients, t.Node) {
			return fail(i, "after.node", fmt.Sprintf("%q is not a client (%s)", t.Node, strings.Join(r.clients, ", ")))
		}
		if f.Match != "" && !slices.Contains(r.messages, f.Match) {
			return fail(i, "match", fmt.Sprintf("%q is not a message type of this live system (want one of %s)",
				f.Match, strings.Join(r.messages, ", ")))
		}
	}
	return nil
}

func flatten(groups [][]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// install arms the schedule: timers for faults at a time, history observers
// for faults after an event.
func (r *run) installFaults(s nemesis.Schedule) *faults {
	fs := &faults{r: r, schedule: s, tallies: make([]tally, len(s.Faults))}
	for i, f := range s.Faults {
		if f.After != nil {
			fs.arm(i)
			continue
		}
		if f.At == 0 {
			// A fault at 0 is in place before the clients start, as in the
			// simulator (a timer would race with their first requests).
			fs.start(i)
			continue
		}
		fs.after(time.Duration(f.At), func() { fs.start(i) })
	}
	return fs
}

// after runs fn once the run's clock reads at (relative to now for a
// trigger's delay), unless the run stopped.
func (fs *faults) after(d time.Duration, fn func()) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.r.stopped() {
		return
	}
	fs.timers = append(fs.timers, time.AfterFunc(d, func() {
		if !fs.r.stopped() {
			fn()
		}
	}))
}

func (fs *faults) arm(i int) {
	f := fs.schedule.Faults[i]
	t := *f.After
	typ := history.Type(t.Type)
	if typ == "" {
		typ = history.OK
	}
	nth := max(t.Nth, 1)
	seen := 0
	var once sync.Once
	fs.r.log.Observe(func(e history.Event) {
		if e.Process == history.NemesisProcess || e.Node != t.Node || e.F != t.F || e.Type != typ ||
			time.Duration(e.Time) < time.Duration(f.At) {
			return
		}
		fs.mu.Lock()
		seen++
		fire := seen == nth
		fs.mu.Unlock()
		if !fire {
			return
		}
		once.Do(func() {
			fs.mu.Lock()
			fs.tallies[i].triggered, fs.tallies[i].triggerAt = true, fs.r.now()
			fs.mu.Unlock()
			if t.Delay > 0 {
				fs.after(time.Duration(t.Delay), func() { fs.start(i) })
				return
			}
			fs.start(i) // in the client's own goroutine: it takes hold before the client's next step
		})
	})
}

// stop cancels pending faults and undoes active ones.
func (fs *faults) stop() {
	fs.mu.Lock()
	timers, undo := fs.timers, fs.undo
	fs.timers, fs.undo = nil, nil
	fs.mu.Unlock()
	for _, t := range timers {
		t.Stop()
	}
	for _, u := range undo {
		u()
	}
}

func (fs *faults) record(t history.Type, k nemesis.Kind, targets []string, detail string) {
	fs.r.log.AppendStamped(history.Event{Process: history.NemesisProcess, Type: t, F: string(k), Targets: targets,
		Detail: detail}, func(e *history.Event) { e.Time = int64(fs.r.now()) })
}

// window records the start, and the stop after d (at once when d is 0 and
// the fault is instantaneous; never when open), running undo at the stop or
// when the run stops first.
func (fs *faults) window(k nemesis.Kind, targets []string, detail string, d time.Duration, open bool, undo func()) {
	fs.record(history.Start, k, targets, detail)
	var once sync.Once
	end := func() {
		once.Do(func() {
			if undo != nil {
				undo()
			}
		})
	}
	switch {
	case d > 0:
		fs.mu.Lock()
		fs.undo = append(fs.undo, end)
		fs.mu.Unlock()
		fs.after(d, func() {
			end()
			fs.record(history.Stop, k, targets, detail)
		})
	case !open:
		end()
		fs.record(history.Stop, k, targets, detail)
	default:
		fs.mu.Lock()
		fs.undo = append(fs.undo, end)
		fs.mu.Unlock()
	}
}

func (fs *faults) nodes(names []string) []string {
	var out []string
	for _, name := range names {
		ns, err := fs.r.resolve(name)
		if err != nil {
			continue
		}
		for _, n := range ns {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func (fs *faults) start(i int) {
	f := fs.schedule.Faults[i]
	fs.mu.Lock()
	tl := &fs.tallies[i]
	tl.started, tl.startAt = true, fs.r.now()
	fs.mu.Unlock()
	miss := func(why string) {
		fs.mu.Lock()
		tl.missed = why
		fs.mu.Unlock()
	}
	d := time.Duration(f.Duration)
	var ns []string
	switch f.Kind {
	case nemesis.Pause, nemesis.Crash, nemesis.ClockJump:
		if ns = fs.nodes(f.Targets); len(ns) == 0 {
			miss(fmt.Sprintf("its targets %v named no node when it started at %v", f.Targets, tl.startAt.Round(time.Millisecond)))
		}
	}
	switch f.Kind {
	case nemesis.Pause:
		for _, n := range ns {
			if err := fs.pause(n); err != nil {
				fs.r.fail(fmt.Errorf("faults[%d] pause %s: %w", i, n, err))
			}
		}
		fs.window(nemesis.Pause, ns, "pause for "+history.FormatDuration(int64(d)), d, false, func() {
			for _, n := range ns {
				if err := fs.resume(n); err != nil {
					fs.r.fail(fmt.Errorf("faults[%d] resume %s: %w", i, n, err))
				}
			}
		})
	case nemesis.Crash:
		for _, n := range ns {
			if err := fs.r.sys.Crash(n); err != nil {
				fs.r.fail(fmt.Errorf("faults[%d] crash %s: %w", i, n, err))
			}
		}
		detail := "crash, no restart"
		if d > 0 {
			detail = "crash, restart after " + history.FormatDuration(int64(d))
		}
		fs.window(nemesis.Crash, ns, detail, d, true, func() {
			for _, n := range ns {
				if fs.r.stopped() {
					return
				}
				if err := fs.r.sys.Restart(n); err != nil {
					fs.r.fail(fmt.Errorf("faults[%d] restart %s: %w", i, n, err))
				}
			}
		})
	case nemesis.ClockJump:
		amount := time.Duration(f.Amount)
		for _, n := range ns {
			if err := fs.jump(n, amount); err != nil {
				fs.r.fail(fmt.Errorf("faults[%d] clock jump %s: %w", i, n, err))
			}
		}
		detail := "wall clock jumps " + history.FormatDuration(int64(amount))
		if d > 0 {
			detail += ", back after " + history.FormatDuration(int64(d))
		}
		fs.window(nemesis.ClockJump, ns, detail, d, false, func() {
			if d == 0 {
				return
			}
			for _, n := range ns {
				if err := fs.jump(n, -amount); err != nil {
					fs.r.fail(fmt.Errorf("faults[%d] clock jump back %s: %w", i, n, err))
				}
			}
		})
	case nemesis.Partition:
		fs.partition(f, d, miss)
	case nemesis.Delay:
		fs.delay(i, f, d)
	}
}

func (fs *faults) partition(f nemesis.Fault, d time.Duration, miss func(string)) {
	c := nemesis.PlanCut(f, fs.nodes, fs.r.allNodes(), func(n string) string { return n })
	links, targets, detail := c.Links, c.Targets, c.Detail
	if len(links) == 0 {
		miss(fmt.Sprintf("it cut no link when it started (%s)", detail))
	}
	var mine [][2]string // links the system cut itself (real servers' proxies)
	for _, l := range links {
		if fs.r.sys.Cut != nil {
			ok, err := fs.r.sys.Cut(l[0], l[1])
			if err != nil {
				fs.r.fail(fmt.Errorf("partition %s -> %s: %w", l[0], l[1], err))
			}
			if ok {
				mine = append(mine, l)
				continue
			}
		}
		fs.r.net.Block(l[0], l[1])
	}
	fs.window(nemesis.Partition, targets, detail, d, true, func() {
		for _, l := range links {
			if slices.Contains(mine, l) {
				if err := fs.r.sys.Heal(l[0], l[1]); err != nil {
					fs.r.fail(fmt.Errorf("heal %s -> %s: %w", l[0], l[1], err))
				}
				continue
			}
			fs.r.net.Unblock(l[0], l[1])
		}
	})
}

// pause stops node n: a real server process by its system, anything else
// (clients, in-process servers, the storage) by faultnet.
func (fs *faults) pause(n string) error {
	if fs.r.sys.Pause != nil && slices.Contains(fs.r.sys.Servers, n) {
		return fs.r.sys.Pause(n)
	}
	fs.r.net.Pause(n)
	return nil
}

func (fs *faults) resume(n string) error {
	if fs.r.sys.Resume != nil && slices.Contains(fs.r.sys.Servers, n) {
		return fs.r.sys.Resume(n)
	}
	fs.r.net.Resume(n)
	return nil
}

// jump moves node n's wall clock by d: a real server's by its system,
// anything else's by faultnet.
func (fs *faults) jump(n string, d time.Duration) error {
	if fs.r.sys.JumpClock != nil && slices.Contains(fs.r.sys.Servers, n) {
		return fs.r.sys.JumpClock(n, d)
	}
	fs.r.net.JumpClock(n, d)
	return nil
}

func (fs *faults) delay(i int, f nemesis.Fault, d time.Duration) {
	from, to := fs.nodes(f.From), fs.nodes(f.To)
	amount := time.Duration(f.Amount)
	var until time.Time
	if d > 0 {
		until = time.Now().Add(d)
	}
	var rules []*faultnet.Rule
	carried := false // a link the system delays itself (a real server's proxy)
	for _, a := range from {
		for _, b := range to {
			if fs.r.sys.Delay != nil && f.Match == "" && f.Count == 0 {
				ok, err := fs.r.sys.Delay(a, b, amount, until)
				if err != nil {
					fs.r.fail(fmt.Errorf("faults[%d] delay %s -> %s: %w", i, a, b, err))
				}
				if ok {
					carried = true
					continue
				}
			}
			rules = append(rules, fs.r.net.AddRule(faultnet.Rule{From: a, To: b, Match: f.Match, Delay: amount, Count: f.Count, Until: until}))
		}
	}
	fs.mu.Lock()
	fs.tallies[i].rules = rules
	fs.tallies[i].carried = carried
	fs.mu.Unlock()
	detail := fmt.Sprintf("delay %v -> %v by %s", from, to, history.FormatDuration(int64(amount)))
	if f.Match != "" {
		detail += " (" + f.Match + ")"
	}
	if f.Count > 0 {
		detail += fmt.Sprintf(", %d message(s)", f.Count)
	}
	window := d
	if window == 0 && f.Count > 0 {
		window = amount
	}
	fs.window(nemesis.Delay, append(slices.Clone(from), to...), detail, window, true, nil)
}

// outcomes says, fault by fault, whether it fired in a run that ended at end.
func (fs *faults) outcomes(end time.Duration) []nemesis.Outcome {
	end = end.Round(time.Millisecond)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]nemesis.Outcome, len(fs.schedule.Faults))
	for i, f := range fs.schedule.Faults {
		tl := fs.tallies[i]
		why := ""
		switch {
		case tl.started && tl.missed != "":
			why = tl.missed
		case tl.started && f.Kind == nemesis.Delay && !tl.carried:
			matched := 0
			for _, r := range tl.rules {
				matched += fs.r.net.Matched(r)
			}
			if matched == 0 {
				why = "it delayed no message"
			}
		case tl.started:
		case f.After == nil:
			why = fmt.Sprintf("it was due at %v, after the run ended at %v", time.Duration(f.At).Round(time.Millisecond), end)
		case tl.triggered:
			why = fmt.Sprintf("its trigger happened at %v and it was due %v later, after the run ended at %v",
				tl.triggerAt.Round(time.Millisecond), time.Duration(f.After.Delay), end)
		default:
			why = fmt.Sprintf("its trigger (%s %s %s) never happened", f.After.Node, f.After.F, orOK(f.After.Type))
		}
		out[i] = nemesis.Outcome{Fault: i, Kind: f.Kind, Fired: why == "", DidNotFire: why}
	}
	return out
}

func orOK(t string) string {
	if t == "" {
		return "ok"
	}
	return t
}
