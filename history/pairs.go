package history

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Operation is an invocation and its completion, as a reader of a history
// sees them.
type Operation struct {
	// Invoke is the invoke event.
	Invoke Event
	// Completion is the ok, fail or info event; nil when the history ends
	// before the operation completed (which counts as info).
	Completion *Event
}

// Outcome is the completion's type, Info for a missing completion.
func (o Operation) Outcome() Type {
	if o.Completion == nil {
		return Info
	}
	return o.Completion.Type
}

// ReturnIndex is the completion's index, or math.MaxInt64 when the outcome is
// unknown (the operation may take effect at any time after its invoke).
func (o Operation) ReturnIndex() int64 {
	if o.Completion == nil || o.Completion.Type == Info {
		return math.MaxInt64
	}
	return int64(o.Completion.Index)
}

// Latency is the time from invoke to completion (ns); ok is false when the
// operation never completed.
func (o Operation) Latency() (ns int64, ok bool) {
	if o.Completion == nil {
		return 0, false
	}
	return o.Completion.Time - o.Invoke.Time, true
}

// Operations pairs every invoke with the completion of the same process, in
// invoke order. Completions point into events.
func Operations(events []Event) []Operation {
	n := 0
	for i := range events {
		if events[i].Type == Invoke {
			n++
		}
	}
	ops := make([]Operation, 0, n)
	open := map[int]int{} // process -> index in ops
	for i := range events {
		e := &events[i]
		switch {
		case e.Type == Invoke:
			open[e.Process] = len(ops)
			ops = append(ops, Operation{Invoke: *e})
		case e.Type.IsCompletion():
			if j, ok := open[e.Process]; ok {
				ops[j].Completion = e
				delete(open, e.Process)
			}
		}
	}
	return ops
}

// FaultWindow is a nemesis fault from its start event to its stop event.
type FaultWindow struct {
	Start Event
	// Stop is nil when the fault never stopped before the end of the history.
	Stop *Event
}

// End is the stop's time, or math.MaxInt64 for a fault still active at the end.
func (f FaultWindow) End() int64 {
	if f.Stop == nil {
		return math.MaxInt64
	}
	return f.Stop.Time
}

// FaultWindows pairs nemesis start and stop events with the same function,
// targets and detail, first in first out, in start order.
func FaultWindows(events []Event) []FaultWindow { return faultWindows(events, nil) }

// faultWindows is FaultWindows; marks, when not nil, are the indexes of
// every start and stop event (Paired.Marks), which spares a scan.
func faultWindows(events []Event, marks []int32) []FaultWindow {
	n := len(events)
	if marks != nil {
		n = len(marks)
	}
	at := func(k int) *Event {
		if marks != nil {
			return &events[marks[k]]
		}
		return &events[k]
	}
	starts := 0
	for k := range n {
		if at(k).Type == Start {
			starts++
		}
	}
	if starts == 0 {
		return nil
	}
	out := make([]FaultWindow, 0, starts)
	open := map[WindowKey][]int{} // -> indexes in out
	for k := range n {
		e := at(k)
		if e.Type != Start && e.Type != Stop {
			continue
		}
		k := WindowKeyOf(e)
		if e.Type == Start {
			open[k] = append(open[k], len(out))
			out = append(out, FaultWindow{Start: *e})
			continue
		}
		if q := open[k]; len(q) > 0 {
			out[q[0]].Stop = e
			open[k] = q[1:]
		}
	}
	return out
}

// WindowKey is what a fault's (or a system event's) start and stop events
// share, and what pairs them: the function, the targets and the detail.
type WindowKey struct{ F, Targets, Detail string }

// WindowKeyOf is e's window key. The targets are joined only when there are
// several, so that most keys cost nothing to build.
func WindowKeyOf(e *Event) WindowKey {
	k := WindowKey{F: e.F, Detail: e.Detail}
	switch len(e.Targets) {
	case 0:
	case 1:
		k.Targets = e.Targets[0]
	default:
		k.Targets = strings.Join(e.Targets, "\x00")
	}
	return k
}

// identityFields are the fields that name what an operation acts on and on
// whose behalf. A recorder may put them on the invocation, on the completion
// or on both; where both carry one, they must agree.
var identityFields = []struct {
	name string
	get  func(*Event) *string
}{
	{"node", func(e *Event) *string { return &e.Node }},
	{"key", func(e *Event) *string { return &e.Key }},
	{"owner", func(e *Event) *string { return &e.Owner }},
}

// MismatchError reports an operation whose invocation and completion name
// different values of an identity field (node, key or owner).
type MismatchError struct {
	// Invoke and Completion are the indexes of the two events.
	Invoke, Completion int
	// Field is the field's name; Invoked and Completed its two values.
	Field, Invoked, Completed string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s %q of the completion differs from %s %q of its invoke (event %d)",
		e.Field, e.Completed, e.Field, e.Invoked, e.Invoke)
}

// mismatch compares the identity fields of an invocation and its completion.
func mismatch(inv, comp *Event) error {
	for _, f := range identityFields {
		a, b := *f.get(inv), *f.get(comp)
		if a != "" && b != "" && a != b {
			return &MismatchError{Invoke: inv.Index, Completion: comp.Index, Field: f.name, Invoked: a, Completed: b}
		}
	}
	return nil
}

// Complete returns events in which the invocation and the completion of every
// operation both carry the operation's node, key and owner, taken from
// whichever of the two events recorded them (a recorder may give the key and
// owner only on the invocation, as SET NX chooses its value first). Checks
// read these fields from either event, so every check sees the same
// operation. events is not modified: a copy is made when anything is filled
// in. An operation whose two events disagree is an error.
func Complete(events []Event) ([]Event, error) {
	open := map[int]int{} // process -> index of its open invocation
	out := events
	copied := false
	for i := range events {
		e := &events[i]
		if e.Type == Invoke {
			open[e.Process] = i
			continue
		}
		if !e.Type.IsCompletion() {
			continue
		}
		j, ok := open[e.Process]
		if !ok {
			continue
		}
		delete(open, e.Process)
		if err := mismatch(&events[j], e); err != nil {
			return nil, err
		}
		for _, f := range identityFields {
			a, b := *f.get(&events[j]), *f.get(e)
			if a == b {
				continue
			}
			if !copied {
				out, copied = slices.Clone(events), true
			}
			*f.get(&out[j]), *f.get(&out[i]) = a+b, a+b // one of them is empty
		}
	}
	return out, nil
}
