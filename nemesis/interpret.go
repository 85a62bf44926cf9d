package nemesis

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// This file is the fault interpreter of both worlds, the simulator's
// (Nemesis) and live mode's: which names a fault uses and how they are
// checked, which history events its trigger counts, how it starts (Start),
// the sentences and windows its history events carry, and its tally. Each
// world only performs the faults (Performer).

// NamedField is one field of a fault that names nodes, with the names it
// gives.
type NamedField struct {
	// Field is the field's path in the schedule ("targets", "groups", ...).
	Field string
	// Names are the names it gives (a node, a role, "clients").
	Names []string
}

// NamedFields lists the fields of f that name nodes, in the order they are
// checked.
func (f Fault) NamedFields() []NamedField {
	return []NamedField{{"targets", f.Targets}, {"groups", flatten(f.Groups)}, {"from", f.From}, {"to", f.To}}
}

// Resolve maps names (nodes, roles, "clients") to the nodes they name, each
// once, in the order first named: the targets of a fault as it starts, in
// either world (N is its node type). A name resolve refuses is left out, and
// the first such refusal is returned with what the others name.
func Resolve[N comparable](names []string, resolve func(name string) ([]N, error)) ([]N, error) {
	var out []N
	var first error
	seen := map[N]bool{}
	for _, name := range names {
		ns, err := resolve(name)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("target %q no longer resolves: %w", name, err)
			}
			continue
		}
		for _, x := range ns {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out, first
}

// CheckNames checks every name of s against the names a system knows:
// resolve returns an error naming what is known for an unknown name; clients
// are the nodes a trigger may follow (nil: any name resolve knows); messages
// are the system's message types a delay's match may name (nil: not
// checked). The error is an *Error naming the fault and the field.
func (s Schedule) CheckNames(resolve func(name string) error, clients, messages []string) error {
	for i, f := range s.Faults {
		for _, field := range f.NamedFields() {
			for _, name := range field.Names {
				if err := resolve(name); err != nil {
					return s.errorAt(i, field.Field, err.Error())
				}
			}
		}
		if t := f.After; t != nil {
			if clients == nil {
				if err := resolve(t.Node); err != nil {
					return s.errorAt(i, "after.node", err.Error())
				}
			} else if !slices.Contains(clients, t.Node) {
				return s.errorAt(i, "after.node", fmt.Sprintf("%q is not a client: a trigger follows the operations of a client (%s)",
					t.Node, listNames(clients)))
			}
		}
		if f.Match != "" && messages != nil && !slices.Contains(messages, f.Match) {
			return s.errorAt(i, "match", fmt.Sprintf("%q is not a message type of this system (want one of %s)",
				f.Match, strings.Join(messages, ", ")))
		}
	}
	return nil
}

// ErrorAt is the *Error "faults[i], field: msg", located in the schedule's
// file when it was read from one: for a world's own refusals of a fault.
func (s Schedule) ErrorAt(i int, field, msg string) *Error {
	return s.errorAt(i, field, msg)
}

// listNames lists names, eliding the middle of a long list.
func listNames(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:3], ", ") + ", ..., " + names[len(names)-1]
	}
	return strings.Join(names, ", ")
}

func flatten(groups [][]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// Counts reports whether e is an event f's trigger counts: an event of the
// trigger's client, function and type (ok by default), recorded at or after
// the time the trigger is armed, and not the nemesis's own. The fault starts
// at the trigger's Nth such event.
func (f Fault) Counts(e history.Event) bool {
	return f.counts(e, f.After.eventType())
}

func (f Fault) counts(e history.Event, typ history.Type) bool {
	t := f.After
	return e.Process != history.NemesisProcess && e.Node == t.Node && e.F == t.F && e.Type == typ &&
		time.Duration(e.Time) >= time.Duration(f.At)
}

// eventType is the type of the events the trigger follows (ok by default).
func (t *Trigger) eventType() history.Type {
	if t.Type == "" {
		return history.OK
	}
	return history.Type(t.Type)
}

// Observer is the history observer that starts f (which has a trigger) in
// either world: it counts in tl the events f counts and, at the trigger's
// Nth, marks tl triggered at now() and calls start, at once (inside the
// recording client's own step, so that the fault takes hold before the
// client does anything else) or after the trigger's delay (after runs a
// function that much later on the world's clock). mu, when not nil, guards
// tl (live mode's clients record from their own goroutines).
func (f Fault) Observer(tl *Tally, mu sync.Locker, now func() time.Duration, after func(time.Duration, func()), start func()) func(history.Event) {
	typ, nth, delay := f.After.eventType(), max(f.After.Nth, 1), time.Duration(f.After.Delay)
	return func(e history.Event) {
		if !f.counts(e, typ) {
			return
		}
		if mu != nil {
			mu.Lock()
		}
		fire := false
		if !tl.Triggered {
			tl.Seen++
			if fire = tl.Seen >= nth; fire {
				tl.Triggered, tl.TriggerAt = true, now()
			}
		}
		if mu != nil {
			mu.Unlock()
		}
		switch {
		case !fire:
		case delay > 0:
			after(delay, start)
		default:
			start()
		}
	}
}

// Window records the window of a fault that starts now: record(Start) at
// once, and record(Stop) after d (at once when d is 0 and the fault is
// instantaneous; never when open), running undo (when not nil) just before
// the stop. after runs a function d later on the world's clock.
func Window(record func(history.Type), after func(d time.Duration, fn func()), d time.Duration, open bool, undo func()) {
	record(history.Start)
	switch {
	case d > 0:
		after(d, func() {
			if undo != nil {
				undo()
			}
			record(history.Stop)
		})
	case !open:
		record(history.Stop)
	}
}

// Detail is the sentence the history's events of a pause, crash, clock jump
// or clock drift carry ("pause for 5s", "crash, restart after 1s", ...).
func (f Fault) Detail() string {
	d := int64(f.Duration)
	switch f.Kind {
	case Pause:
		return "pause for " + history.FormatDuration(d)
	case Crash:
		if d > 0 {
			return "crash, restart after " + history.FormatDuration(d)
		}
		return "crash, no restart"
	case ClockJump:
		detail := "wall clock jumps " + history.FormatDuration(int64(f.Amount))
		if d > 0 {
			detail += ", back after " + history.FormatDuration(d)
		}
		return detail
	case ClockDrift:
		return fmt.Sprintf("clock drift %+.3f", f.Drift)
	}
	panic(fmt.Sprintf("nemesis: no detail for fault kind %q", f.Kind))
}

// DelayDetail is the sentence the history's events of delay f carry, from
// and to being the nodes its ends named when it started.
func (f Fault) DelayDetail(from, to []string) string {
	detail := fmt.Sprintf("delay %v -> %v by %s", from, to, history.FormatDuration(int64(f.Amount)))
	if f.Match != "" {
		detail += " (" + f.Match + ")"
	}
	if f.Count > 0 {
		detail += fmt.Sprintf(", %d message(s)", f.Count)
	}
	return detail
}

// DelayWindow is how long the window the history shows for delay f lasts:
// its duration, or for a count-limited delay the delay itself; 0 (a delay
// with neither) lasts until the end of the run.
func (f Fault) DelayWindow() time.Duration {
	if f.Duration == 0 && f.Count > 0 {
		return time.Duration(f.Amount)
	}
	return time.Duration(f.Duration)
}

// Performer does faults in one world to its nodes (of type N), for Start:
// the simulator's network and nodes, or live mode's processes and proxies.
// Each fault method does its fault to the nodes now and returns what undoes
// it (nil: nothing to undo).
type Performer[N comparable] interface {
	// Now is the time on the run's clock.
	Now() time.Duration
	// Nodes resolves names to nodes as the fault starts (see Resolve); All
	// lists every node of the run; Name is a node's name.
	Nodes(names []string) []N
	All() []N
	Name(x N) string
	Pause(ns []N) (undo func())
	Crash(ns []N) (undo func())
	JumpClock(ns []N, d time.Duration) (undo func())
	SetDrift(ns []N, drift float64) (undo func())
	// Cut blocks each link (from, to), dropping what it carries when lossy.
	Cut(links [][2]N, lossy bool) (undo func())
	// Delay delays the messages delay f names from each of from to each of
	// to, for f's duration from now (0: to the end of the run); it returns
	// what counts the messages it delays (nil: they are not counted).
	Delay(f Fault, from, to []N) *DelayTally
	// Window records the window of a fault (see Window).
	Window(k Kind, targets []string, detail string, d time.Duration, open bool, undo func())
}

// Start starts fault f in the world p performs: the one interpreter of a
// fault for both worlds. It returns why the fault had no effect ("" if it
// had one, so far) and, for a delay, what counts the messages it delays.
func Start[N comparable](p Performer[N], f Fault) (missed string, delay *DelayTally) {
	d := time.Duration(f.Duration)
	names := func(ns []N) []string {
		out := make([]string, len(ns))
		for i, x := range ns {
			out[i] = p.Name(x)
		}
		return out
	}
	var ns []N
	switch f.Kind {
	case Pause, Crash, ClockJump, ClockDrift:
		if ns = p.Nodes(f.Targets); len(ns) == 0 {
			missed = fmt.Sprintf("its targets %v named no node when it started at %v", f.Targets, p.Now())
		}
	}
	switch f.Kind {
	case Pause:
		p.Window(Pause, names(ns), f.Detail(), d, false, p.Pause(ns))
	case Crash:
		p.Window(Crash, names(ns), f.Detail(), d, true, p.Crash(ns))
	case ClockJump:
		p.Window(ClockJump, names(ns), f.Detail(), d, false, p.JumpClock(ns, time.Duration(f.Amount)))
	case ClockDrift:
		p.Window(ClockDrift, names(ns), f.Detail(), d, true, p.SetDrift(ns, f.Drift))
	case Partition:
		c := PlanCut(f, p.Nodes, p.All(), p.Name)
		detail := c.Detail
		if f.Lossy {
			detail += ", lossy"
		}
		if len(c.Links) == 0 {
			missed = fmt.Sprintf("it cut no link when it started at %v (%s)", p.Now(), detail)
		}
		p.Window(Partition, c.Targets, detail, d, true, p.Cut(c.Links, f.Lossy))
	case Delay:
		from, to := p.Nodes(f.From), p.Nodes(f.To)
		delay = p.Delay(f, from, to)
		fromNames, toNames := names(from), names(to)
		p.Window(Delay, append(slices.Clone(fromNames), toNames...), f.DelayDetail(fromNames, toNames), f.DelayWindow(), true, nil)
	default:
		panic(fmt.Sprintf("nemesis: unknown fault kind %q", f.Kind))
	}
	return missed, delay
}
