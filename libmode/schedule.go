package libmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
)

// Scheduled is a fault in the schedule form of package nemesis: what a
// schedule file holds (`locklab run --nemesis-file` reads the same JSON),
// what Shrink prints and Guided enumerates. Its start may be a time (At)
// or a client's event (After: "right after c1's read"; it takes hold
// inside that client's step, before it sends anything more), and a pause
// may end at another client's event (Until: "until c2's first write"; it
// ends in the kernel's next step, at the same instant).
//
// What library mode builds of the form: pauses of one client; crashes and
// clock jumps of instances; partitions between clients and instances
// (targets that are all clients or all instances, or two groups, one of
// clients and one of instances), holding or lossy; delays from clients to
// instances or back (one way each). An end anchor (Until) on a pause only.
// Not built, and refused by Run with an error naming the fault: clock
// drift, one-way cuts, a delay's match or count, the storage as a target,
// and pauses or clocks of the clients' hosts beyond a pause.
type Scheduled struct {
	nemesis.Fault
}

func (s Scheduled) String() string {
	b, err := json.Marshal(s.Fault)
	if err != nil {
		return fmt.Sprintf("%+v", s.Fault)
	}
	return string(b)
}

// FromSchedule is the faults of schedule s, one Scheduled each, checked
// against cfg (its clients and instances): a mistake names the fault.
func FromSchedule(cfg Config, s nemesis.Schedule) ([]Fault, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("libmode: %w", err)
	}
	cfg, _ = cfg.withDefaults()
	var out []Fault
	var errs []error
	for i, f := range s.Faults {
		sf := Scheduled{f}
		if err := sf.check(&cfg); err != nil {
			errs = append(errs, fmt.Errorf("libmode: faults[%d] (%s): %w", i, sf, err))
		}
		out = append(out, sf)
	}
	return out, errors.Join(errs...)
}

func (s Scheduled) check(cfg *Config) error {
	if err := (nemesis.Schedule{Faults: []nemesis.Fault{s.Fault}}).Validate(); err != nil {
		return err
	}
	clients := clientNames(cfg.Clients)
	for _, t := range []*nemesis.Trigger{s.After, s.Until} {
		if t != nil && !slices.Contains(clients, t.Node) {
			return fmt.Errorf("a trigger follows a client's events: no client %q (the clients are %v)", t.Node, clients)
		}
	}
	if s.Until != nil && s.Kind != nemesis.Pause {
		return fmt.Errorf("an end anchor (until) on a %s is not built in library mode (pauses only)", s.Kind)
	}
	if s.Kind == nemesis.Pause && (len(s.Targets) != 1 || !slices.Contains(clients, s.Targets[0])) {
		return fmt.Errorf("library mode pauses one client: targets %v (the clients are %v)", s.Targets, clients)
	}
	fs, err := s.plain(cfg, time.Duration(s.At), time.Duration(s.Duration))
	if err != nil {
		return err
	}
	for _, f := range fs {
		if err := f.check(cfg); err != nil {
			return err
		}
	}
	return nil
}

// forever stands for "to the end of the run" in a plain fault's For.
func forever(cfg *Config) time.Duration { return cfg.Duration + cfg.Drain + time.Hour }

// plain is s as library mode's own faults, starting at at and lasting d
// (0: to the end of the run).
func (s Scheduled) plain(cfg *Config, at, d time.Duration) ([]Fault, error) {
	long := d
	if long == 0 {
		long = forever(cfg)
	}
	clients, instances := clientNames(cfg.Clients), instanceNames(cfg.Instances)
	switch s.Kind {
	case nemesis.Pause:
		return []Fault{PauseClient{Client: s.Targets[0], At: at, For: long}}, nil
	case nemesis.Crash:
		var out []Fault
		for _, n := range s.Targets {
			out = append(out, Crash{Instance: n, At: at, For: long})
		}
		return out, nil
	case nemesis.ClockJump:
		var out []Fault
		for _, n := range s.Targets {
			out = append(out, ClockJump{Instance: n, At: at, By: time.Duration(s.Amount), For: d})
		}
		return out, nil
	case nemesis.Partition:
		cs, is, err := sides(s.Fault, clients, instances)
		if err != nil {
			return nil, err
		}
		return []Fault{Partition{At: at, For: long, Clients: cs, Instances: is, Lossy: s.Lossy}}, nil
	case nemesis.Delay:
		if s.Match != "" || s.Count != 0 {
			return nil, errors.New("a delay's match or count is not built in library mode (a window of time only)")
		}
		if !(allIn(s.From, clients) && allIn(s.To, instances)) && !(allIn(s.From, instances) && allIn(s.To, clients)) {
			return nil, fmt.Errorf("library mode delays messages between clients %v and instances %v: from %v to %v", clients, instances, s.From, s.To)
		}
		return []Fault{oneWayDelay{from: s.From, to: s.To, at: at, d: long, by: time.Duration(s.Amount)}}, nil
	}
	return nil, fmt.Errorf("a %s is not built in library mode", s.Kind)
}

// sides are the clients and the instances a partition cuts apart.
func sides(f nemesis.Fault, clients, instances []string) ([]string, []string, error) {
	switch {
	case len(f.From) > 0:
		return nil, nil, errors.New("a one-way cut is not built in library mode")
	case len(f.Targets) > 0 && allIn(f.Targets, clients):
		return f.Targets, nil, nil
	case len(f.Targets) > 0 && allIn(f.Targets, instances):
		return nil, f.Targets, nil
	case len(f.Groups) == 2 && allIn(f.Groups[0], clients) && allIn(f.Groups[1], instances):
		return f.Groups[0], f.Groups[1], nil
	case len(f.Groups) == 2 && allIn(f.Groups[1], clients) && allIn(f.Groups[0], instances):
		return f.Groups[1], f.Groups[0], nil
	}
	return nil, nil, fmt.Errorf("library mode cuts clients %v from instances %v: targets all of one kind, or two groups, one of each", clients, instances)
}

func allIn(names, set []string) bool {
	for _, n := range names {
		if !slices.Contains(set, n) {
			return false
		}
	}
	return len(names) > 0
}

// install schedules s: at its time, or armed at its time to start right
// after its trigger's event (w.mu held).
func (s Scheduled) install(w *world, i int) {
	if s.After == nil {
		w.schedule(&event{at: time.Duration(s.At), order: fmt.Sprintf("~fault%03d", i), seq: 2, run: func() { s.start(w, i) }})
		return
	}
	w.arm(s.After, time.Duration(s.At), i, func() { s.start(w, i) })
}

// start starts s now (w.mu held).
func (s Scheduled) start(w *world, i int) {
	now := w.elapsed()
	if s.Kind == nemesis.Pause {
		if s.Until == nil {
			w.pauseNow(s.Targets[0], time.Duration(s.Duration), s.words())
			return
		}
		w.pauseOpen(s, i)
		return
	}
	fs, err := s.plain(w.cfg, now, time.Duration(s.Duration))
	if err != nil {
		panic(fmt.Sprintf("libmode: fault %d was checked and cannot start: %v", i, err))
	}
	for _, f := range fs {
		f.install(w, i)
	}
}

// words say how the pause was placed, for its history events.
func (s Scheduled) words() string {
	if s.After == nil && s.Until == nil {
		return ""
	}
	return "scheduled: " + s.Detail() + afterWords(s.After)
}

func afterWords(t *nemesis.Trigger) string {
	if t == nil {
		return ""
	}
	return ", after " + t.Words()
}

// pauseOpen pauses s's client from now until s's end anchor (or its
// duration, or the end of the run, whichever comes first) (w.mu held).
func (w *world) pauseOpen(s Scheduled, i int) {
	client := s.Targets[0]
	now := w.elapsed()
	end := w.cfg.Duration
	if s.Duration > 0 {
		end = min(end, now+time.Duration(s.Duration))
	}
	end = max(end, now)
	p := &pause{until: end, resume: make(chan struct{}), open: true}
	w.paused[client] = p
	detail := s.words() + "; connections and critical section frozen; the library's own timers keep running"
	w.rec.nemesis(history.Start, string(nemesis.Pause), []string{client}, detail, now)
	ended := false
	stop := func() {
		if ended {
			return
		}
		ended = true
		p.until = w.elapsed()
		if w.paused[client] == p {
			delete(w.paused, client)
		}
		close(p.resume)
		for _, e := range p.held {
			e.at = w.elapsed()
			w.schedule(e)
		}
		p.held = nil
		w.rec.nemesis(history.Stop, string(nemesis.Pause), []string{client}, detail, w.elapsed())
	}
	w.schedule(&event{at: end, order: "~pause/" + client, run: stop})
	// The end anchor's event is recorded by another client's goroutine:
	// the pause ends in the kernel's next step, once that client blocks,
	// so that the resumed client never runs beside it.
	w.arm(s.Until, now, i, func() {
		w.schedule(&event{at: w.elapsed(), order: "~pause/" + client, seq: 1, run: stop})
	})
}

// trigger is an armed trigger: the Nth event of a client's function and
// type recorded at or after armed, then start (after the trigger's delay).
type trigger struct {
	t      *nemesis.Trigger
	armed  time.Duration
	seen   int
	done   bool
	index  int
	action func()
}

// arm arms t from time at on: at its Nth matching event, action runs at
// once (inside the recording client's own step, before it does anything
// else) or after t's delay (w.mu held).
func (w *world) arm(t *nemesis.Trigger, at time.Duration, i int, action func()) {
	w.triggers = append(w.triggers, &trigger{t: t, armed: at, index: i, action: action})
}

// observe counts e for every armed trigger and fires those it completes.
func (w *world) observe(e history.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, tr := range slices.Clone(w.triggers) {
		typ := history.OK
		if tr.t.Type != "" {
			typ = history.Type(tr.t.Type)
		}
		if tr.done || e.Node != tr.t.Node || e.F != tr.t.F || e.Type != typ || time.Duration(e.Time) < tr.armed {
			continue
		}
		tr.seen++
		if tr.seen < max(tr.t.Nth, 1) {
			continue
		}
		tr.done = true
		if d := time.Duration(tr.t.Delay); d > 0 {
			w.schedule(&event{at: w.elapsed() + d, order: fmt.Sprintf("~fault%03d", tr.index), seq: 3, run: tr.action})
			continue
		}
		tr.action()
	}
}

// oneWayDelay is a scheduled delay of the messages from one set of nodes
// to another (the schedule form's delay).
type oneWayDelay struct {
	from, to []string
	at, d    time.Duration
	by       time.Duration
}

func (d oneWayDelay) String() string {
	return fmt.Sprintf("delay by %v from %v to %v at %v for %v", d.by, d.from, d.to, d.at, d.d)
}

func (d oneWayDelay) check(cfg *Config) error {
	if d.by <= 0 || d.d <= 0 {
		return errors.New("a delay needs a positive amount and duration")
	}
	return nil
}

func (d oneWayDelay) install(w *world, i int) {
	w.delays = append(w.delays, &delayWindow{a: d.from, b: d.to, from: d.at, until: d.at + d.d, by: d.by, oneWay: true})
	targets := append(slices.Clone(d.from), d.to...)
	detail := fmt.Sprintf("%v -> %v +%v", d.from, d.to, d.by)
	order := fmt.Sprintf("~fault%03d", i)
	w.schedule(&event{at: d.at, order: order, run: func() {
		w.rec.nemesis(history.Start, string(nemesis.Delay), targets, detail, w.elapsed())
	}})
	w.schedule(&event{at: d.at + d.d, order: order, seq: 1, run: func() {
		w.rec.nemesis(history.Stop, string(nemesis.Delay), targets, detail, w.elapsed())
	}})
}

// ToSchedule is faults in the schedule form: each of library mode's own
// faults as the nemesis schedule says it (a Delay, which acts both ways,
// as two one-way delays). hit names, by fault index, the client a
// PauseInCriticalSection without a Client paused (Result.Schedule fills it
// from the run); one that never fired is written for c1. A fault with no
// schedule form (a rejecting Partition, a Crash with Persist) is an error
// naming it.
func ToSchedule(cfg Config, faults []Fault, hit map[int]string) (nemesis.Schedule, error) {
	cfg, _ = cfg.withDefaults()
	var s nemesis.Schedule
	var errs []error
	for i, f := range faults {
		nf, err := toNemesis(&cfg, f, hit[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("libmode: fault %d (%s) has no schedule form: %w", i, f, err))
			continue
		}
		s.Faults = append(s.Faults, nf...)
	}
	return s, errors.Join(errs...)
}

func toNemesis(cfg *Config, f Fault, hit string) ([]nemesis.Fault, error) {
	D := func(d time.Duration) nemesis.Duration { return nemesis.Duration(d) }
	switch f := f.(type) {
	case Scheduled:
		return []nemesis.Fault{f.Fault}, nil
	case PauseClient:
		return []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{f.Client}, At: D(f.At), Duration: D(f.For)}}, nil
	case PauseInCriticalSection:
		c := cmpOr(f.Client, hit, "c1")
		return []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{c}, At: D(f.After),
			After: &nemesis.Trigger{Node: c, F: history.FRead}, Duration: D(f.For)}}, nil
	case Partition:
		if f.Reject {
			return nil, errors.New("a rejecting cut (a reset at once) is not a kind of the schedule")
		}
		cs, is := f.Clients, f.Instances
		if len(cs) == 0 {
			cs = clientNames(cfg.Clients)
		}
		if len(is) == 0 {
			is = instanceNames(cfg.Instances)
		}
		return []nemesis.Fault{{Kind: nemesis.Partition, At: D(f.At), Duration: D(f.For), Groups: [][]string{cs, is}, Lossy: f.Lossy}}, nil
	case ClockJump:
		return []nemesis.Fault{{Kind: nemesis.ClockJump, Targets: []string{f.Instance}, At: D(f.At), Amount: D(f.By), Duration: D(f.For)}}, nil
	case Crash:
		if f.Persist {
			return nil, errors.New("a crash with persistence is not a kind of the schedule (the schedule's crash restarts the instance empty)")
		}
		return []nemesis.Fault{{Kind: nemesis.Crash, Targets: []string{f.Instance}, At: D(f.At), Duration: D(f.For)}}, nil
	case Delay:
		cs, is := f.Clients, f.Instances
		if len(cs) == 0 {
			cs = clientNames(cfg.Clients)
		}
		if len(is) == 0 {
			is = instanceNames(cfg.Instances)
		}
		d := nemesis.Fault{Kind: nemesis.Delay, At: D(f.At), Duration: D(f.For), Amount: D(f.By)}
		up, down := d, d
		up.From, up.To = cs, is
		down.From, down.To = is, cs
		return []nemesis.Fault{up, down}, nil
	}
	return nil, fmt.Errorf("unknown fault %T", f)
}

func cmpOr(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
