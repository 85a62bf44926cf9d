package nemesis

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// This file holds what the simulator's interpreter (Nemesis) and live mode's
// share: which names a fault uses and how they are checked, which history
// events its trigger counts, and the sentences and windows its history events
// carry. Each world only performs the faults.

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
