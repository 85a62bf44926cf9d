package live

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/nemesis"
)

// Unsupported is why a fault kind cannot run live ("" when it can).
var Unsupported = liveform.Unsupported

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

	// held counts the overlapping crashes and pauses of each node, as the
	// simulator does: the first crashes (pauses) it, the last to end
	// restarts (resumes) it. A lock per kind and node orders its crashes
	// and restarts (two restarts never race for its port), and its pauses
	// and resumes; a crash and a resume of one node do not wait for each
	// other (an in-process server's crash waits for its paused goroutines,
	// which the resume frees).
	held  map[heldKey]int
	locks map[heldKey]*sync.Mutex
}

// heldKey is a fault kind (crash or pause) on one node.
type heldKey struct {
	kind nemesis.Kind
	node string
}

// lock is the lock of faults of kind k on node n (see faults.held).
func (fs *faults) lock(k nemesis.Kind, n string) *sync.Mutex {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.locks == nil {
		fs.locks = map[heldKey]*sync.Mutex{}
	}
	m := fs.locks[heldKey{k, n}]
	if m == nil {
		m = &sync.Mutex{}
		fs.locks[heldKey{k, n}] = m
	}
	return m
}

// hold counts one more fault of kind k on n, under its lock, and does fn
// when it is the first.
func (fs *faults) hold(k nemesis.Kind, n string, fn func(string) error) error {
	m := fs.lock(k, n)
	m.Lock()
	defer m.Unlock()
	fs.mu.Lock()
	if fs.held == nil {
		fs.held = map[heldKey]int{}
	}
	fs.held[heldKey{k, n}]++
	first := fs.held[heldKey{k, n}] == 1
	fs.mu.Unlock()
	if !first {
		return nil
	}
	return fn(n)
}

// release counts one fault of kind k on n less, under its lock, and does fn
// when it was the last.
func (fs *faults) release(k nemesis.Kind, n string, fn func(string) error) error {
	m := fs.lock(k, n)
	m.Lock()
	defer m.Unlock()
	fs.mu.Lock()
	c := fs.held[heldKey{k, n}]
	if c > 0 {
		fs.held[heldKey{k, n}] = c - 1
	}
	fs.mu.Unlock()
	if c != 1 {
		return nil
	}
	return fn(n)
}

// tally is what happened to one fault, with the faultnet rules of a delay
// (whose messages are counted at the end); its times are rounded to the
// millisecond, as live times are reported.
type tally struct {
	nemesis.Tally
	rules []*faultnet.Rule
}

// checkSchedule refuses, before the run, a schedule the live system cannot
// perform: a kind it cannot do, a lossy cut, a crash of something that is
// not a server; then it checks the names as the simulator does (a name that
// does not resolve, a trigger on a node that is not a client, a match that
// names no message type).
func (r *run) checkSchedule(s nemesis.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	notLive := func(i int, field, why string) error {
		return fmt.Errorf("%w (%w)", s.ErrorAt(i, field, why), ErrNotLive)
	}
	for i, f := range s.Faults {
		if why := Unsupported[f.Kind]; why != "" {
			return notLive(i, "kind", why)
		}
		if f.Lossy {
			// A real cut does to the bytes what the kernel's TCP does: holds
			// them, then delivers them or resets the connection.
			return notLive(i, "lossy", "a lossy cut has no live form: a real cut holds what TCP sent, delivers it at the heal or resets the connection")
		}
		if r.sys.Refuse != nil {
			if why := r.sys.Refuse(f); why != "" {
				return notLive(i, "kind", why)
			}
		}
		if f.Kind != nemesis.Crash {
			continue
		}
		for _, fld := range f.NamedFields() {
			for _, name := range fld.Names {
				ns, err := r.resolve(name)
				if err != nil || r.isRole(name) {
					continue // an unknown name is refused by CheckNames below
				}
				for _, n := range ns {
					if !slices.Contains(r.sys.Servers, n) {
						return notLive(i, fld.Field, fmt.Sprintf("%s cannot crash live: only the lock servers (%s) crash and restart",
							n, strings.Join(r.sys.Servers, ", ")))
					}
				}
			}
		}
	}
	return s.CheckNames(func(name string) error {
		_, err := r.resolve(name)
		return err
	}, r.clients, r.messages)
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
	for i, f := range s.Faults {
		if f.Until != nil {
			fs.r.log.Observe(f.EndObserver(&fs.tallies[i].Tally, &fs.mu, fs.after))
		}
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

// arm starts fault i at its trigger (see nemesis.Fault.Observer): at once in
// the client's own goroutine, so that it takes hold before the client's next
// step, or after the trigger's delay.
func (fs *faults) arm(i int) {
	now := func() time.Duration { return fs.r.now().Round(time.Millisecond) }
	fs.r.log.Observe(fs.schedule.Faults[i].Observer(&fs.tallies[i].Tally, &fs.mu, now, fs.after, func() { fs.start(i) }))
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

// window records the window of fault kind k (see nemesis.Window); the undo
// of a fault still in place when the run stops runs then.
func (fs *faults) window(k nemesis.Kind, targets []string, detail string, d time.Duration, open bool, undo func()) func() {
	if undo != nil && (d > 0 || open) {
		undo = sync.OnceFunc(undo)
		fs.mu.Lock()
		fs.undo = append(fs.undo, undo)
		fs.mu.Unlock()
	}
	return nemesis.Window(func(t history.Type) { fs.record(t, k, targets, detail) }, fs.after, d, open, undo)
}

// nodes are the nodes names name now; a name that no longer resolves names
// none.
func (fs *faults) nodes(names []string) []string {
	out, _ := nemesis.Resolve(names, fs.r.resolve)
	return out
}

func (fs *faults) start(i int) {
	p := liveFaults{fs, i}
	fs.mu.Lock()
	fs.tallies[i].Started, fs.tallies[i].StartAt, fs.tallies[i].FromIndex = true, p.Now(), fs.r.log.Len()
	fs.mu.Unlock()
	missed, delay, stop := nemesis.Start[string](p, fs.schedule.Faults[i])
	fs.mu.Lock()
	fs.tallies[i].Missed, fs.tallies[i].Delay, fs.tallies[i].Stop = missed, delay, stop
	fs.mu.Unlock()
}

// liveFaults performs fault i of a live run (see nemesis.Performer): on a
// real server process by its system where it can, on anything else
// (clients, in-process servers, the storage) by faultnet. An error fails
// the run.
type liveFaults struct {
	fs *faults
	i  int
}

func (p liveFaults) Now() time.Duration            { return p.fs.r.now().Round(time.Millisecond) }
func (p liveFaults) Nodes(names []string) []string { return p.fs.nodes(names) }
func (p liveFaults) All() []string                 { return p.fs.r.allNodes() }
func (p liveFaults) Name(n string) string          { return n }

func (p liveFaults) Window(k nemesis.Kind, targets []string, detail string, d time.Duration, open bool, undo func()) func() {
	return p.fs.window(k, targets, detail, d, open, undo)
}

// each does fn to each of ns, failing the run with what fn refused.
func (p liveFaults) each(what string, ns []string, fn func(n string) error) {
	for _, n := range ns {
		if err := fn(n); err != nil {
			p.fs.r.fail(fmt.Errorf("faults[%d] %s %s: %w", p.i, what, n, err))
		}
	}
}

// Pause pauses ns; overlapping pauses of a node are counted, the last to
// end resumes it (as in the simulator).
func (p liveFaults) Pause(ns []string) func() {
	fs := p.fs
	p.each("pause", ns, func(n string) error { return fs.hold(nemesis.Pause, n, fs.pause) })
	return func() {
		p.each("resume", ns, func(n string) error { return fs.release(nemesis.Pause, n, fs.resume) })
	}
}

// Crash crashes ns; overlapping crashes of a server are counted, the first
// kills it and the last to end restarts it (as in the simulator), so that
// two restarts never race for its port.
func (p liveFaults) Crash(ns []string) func() {
	fs, r := p.fs, p.fs.r
	p.each("crash", ns, func(n string) error { return fs.hold(nemesis.Crash, n, r.sys.Crash) })
	return func() {
		p.each("restart", ns, func(n string) error {
			return fs.release(nemesis.Crash, n, func(n string) error {
				if r.stopped() {
					return nil
				}
				return r.sys.Restart(n)
			})
		})
	}
}

func (p liveFaults) JumpClock(ns []string, amount time.Duration) func() {
	p.each("clock jump", ns, func(n string) error { return p.fs.jump(n, amount) })
	return func() { p.each("clock jump back", ns, func(n string) error { return p.fs.jump(n, -amount) }) }
}

// SetDrift is refused before the run (Unsupported): a live run never gets here.
func (p liveFaults) SetDrift(ns []string, drift float64) func() {
	panic("live: " + Unsupported[nemesis.ClockDrift])
}

func (p liveFaults) Cut(links [][2]string, lossy bool) func() {
	r := p.fs.r
	var mine [][2]string // links the system cut itself (real servers' proxies)
	for _, l := range links {
		if r.sys.Cut != nil {
			ok, err := r.sys.Cut(l[0], l[1])
			if err != nil {
				r.fail(fmt.Errorf("partition %s -> %s: %w", l[0], l[1], err))
			}
			if ok {
				if err == nil { // a link the system refused to cut has nothing to heal
					mine = append(mine, l)
				}
				continue
			}
		}
		r.net.Block(l[0], l[1])
	}
	return func() {
		for _, l := range links {
			if slices.Contains(mine, l) {
				if err := r.sys.Heal(l[0], l[1]); err != nil {
					r.fail(fmt.Errorf("heal %s -> %s: %w", l[0], l[1], err))
				}
				continue
			}
			r.net.Unblock(l[0], l[1])
		}
	}
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

func (p liveFaults) Delay(f nemesis.Fault, from, to []string) *nemesis.DelayTally {
	fs, r := p.fs, p.fs.r
	d, amount := time.Duration(f.Duration), time.Duration(f.Amount)
	var until time.Time
	var untilRun time.Duration // until on the run's clock (0: the end of the run)
	if d > 0 {
		until, untilRun = time.Now().Add(d), p.Now()+d
	}
	var rules []*faultnet.Rule
	carried := false // a link the system delays itself (a real server's proxy)
	for _, a := range from {
		for _, b := range to {
			if r.sys.Delay != nil && f.Match == "" && f.Count == 0 {
				ok, err := r.sys.Delay(a, b, amount, until)
				if err != nil {
					r.fail(fmt.Errorf("faults[%d] delay %s -> %s: %w", p.i, a, b, err))
				}
				if ok {
					carried = true
					continue
				}
			}
			rules = append(rules, r.net.AddRule(faultnet.Rule{From: a, To: b, Match: f.Match, Delay: amount, Count: f.Count, Until: until}))
		}
	}
	fs.mu.Lock()
	fs.tallies[p.i].rules = rules
	fs.mu.Unlock()
	if carried { // the system counts no message it delays itself
		return nil
	}
	return &nemesis.DelayTally{From: from, To: to, Until: untilRun}
}

// outcomes says, fault by fault, whether it fired in a run that ended at end.
func (fs *faults) outcomes(end time.Duration) []nemesis.Outcome {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	tallies := make([]nemesis.Tally, len(fs.tallies))
	for i, tl := range fs.tallies {
		if tl.Delay != nil {
			tl.Delay.Matched = 0
			for _, r := range tl.rules {
				tl.Delay.Matched += fs.r.net.Matched(r)
			}
		}
		tallies[i] = tl.Tally
	}
	return nemesis.Outcomes(fs.schedule.Faults, tallies, end.Round(time.Millisecond))
}
