package models

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
)

// OnCallPrefix starts the storage keys of the on-call rows: oncall/d1,
// oncall/d2, ... (1: the doctor is on call, 0: off call).
const OnCallPrefix = "oncall/"

// OnCall checks the on-call invariant over the storage's states: at every
// moment at least one doctor is on call. It replays the writes to the
// on-call rows of any system's history: a write that returned ok is applied
// at some point between its invocation and its completion, one that failed
// is not applied, one whose outcome is unknown (info) may apply at any point
// after its invocation. The history is invalid when, with no write in
// flight, every row is certainly 0; unknown when every row may have been 0
// at once but that depends on a write in flight or of unknown outcome (or
// on a row's unknown initial value).
type OnCall struct {
	// InitialByKey are the rows' values before the history; Initial, when
	// set, is the value of every row it does not name (nil: unknown).
	InitialByKey map[string]int64
	Initial      *int64
}

// Name implements Check.
func (OnCall) Name() string { return "on-call" }

// Applies implements Applicable: the history must touch the on-call rows.
func (OnCall) Applies(events []history.Event) (bool, string) {
	for i := range events {
		if isOnCallOp(&events[i]) {
			return true, ""
		}
	}
	return false, "no operations on on-call rows (keys " + OnCallPrefix + "...)"
}

func isOnCallOp(e *history.Event) bool {
	return (e.F == history.FRead || e.F == history.FWrite) && strings.HasPrefix(e.Key, OnCallPrefix)
}

// rowState is what is known of one row at a point of the history.
type rowState struct {
	value    int64
	known    bool                  // value is certain when nothing is in flight
	inFlight map[int]history.Event // invoked writes not yet completed, by process
	unsure   []history.Event       // writes of unknown outcome: they may apply any time
	last     history.Event         // the write that set value
}

func (r *rowState) certainlyOff() bool {
	return r.known && r.value == 0 && len(r.inFlight) == 0 && len(r.unsure) == 0
}

func (r *rowState) maybeOff() bool {
	if !r.known || r.value == 0 {
		return true
	}
	for _, e := range r.inFlight {
		if e.Value != nil && *e.Value == 0 {
			return true
		}
	}
	return slices.ContainsFunc(r.unsure, func(e history.Event) bool { return e.Value != nil && *e.Value == 0 })
}

// Check implements Check.
func (c OnCall) Check(events []history.Event) Verdict {
	return c.checkPaired(completed(events))
}

func (c OnCall) checkPaired(h *history.Paired) Verdict {
	v := Verdict{Check: c.Name()}
	rows := map[string]*rowState{}
	row := func(key string) *rowState {
		r := rows[key]
		if r == nil {
			r = &rowState{inFlight: map[int]history.Event{}}
			if val, ok := c.InitialByKey[key]; ok {
				r.value, r.known = val, true
			} else if c.Initial != nil {
				r.value, r.known = *c.Initial, true
			}
			rows[key] = r
		}
		return r
	}
	for i := range h.Len() {
		if e := h.At(i); isOnCallOp(e) {
			row(e.Key)
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		v.Result, v.Reason = Unknown, "no on-call rows in the history"
		return v
	}
	// A write that failed was never applied: it is left out from its
	// invocation on, so that it makes nothing uncertain while in flight.
	failed := map[int]bool{} // invocation index -> the write failed
	open := map[int]int{}    // process -> index of its pending write invocation
	for i := range h.Len() {
		e := h.At(i)
		if e.F != history.FWrite || !strings.HasPrefix(e.Key, OnCallPrefix) {
			continue
		}
		if e.Type == history.Invoke {
			open[e.Process] = e.Index
		} else if inv, ok := open[e.Process]; ok {
			failed[inv] = e.Type == history.Fail
			delete(open, e.Process)
		}
	}
	writes := 0
	maybe := ""
	for i := range h.Len() {
		if e := h.At(i); e.F != history.FWrite || !strings.HasPrefix(e.Key, OnCallPrefix) {
			continue
		}
		e := *h.At(i)
		r := rows[e.Key]
		switch e.Type {
		case history.Invoke:
			if !failed[e.Index] {
				r.inFlight[e.Process] = e
			}
			continue
		case history.OK:
			inv := r.inFlight[e.Process]
			delete(r.inFlight, e.Process)
			if inv.Value != nil {
				r.value, r.known, r.last = *inv.Value, true, e
				writes++
			}
		case history.Fail:
			delete(r.inFlight, e.Process)
		case history.Info:
			if inv, ok := r.inFlight[e.Process]; ok {
				r.unsure = append(r.unsure, inv)
			}
			delete(r.inFlight, e.Process)
		default:
			continue
		}
		all, allMaybe := true, true
		for _, k := range keys {
			all = all && rows[k].certainlyOff()
			allMaybe = allMaybe && rows[k].maybeOff()
		}
		if all {
			v.Result = Invalid
			v.Reason = fmt.Sprintf("nobody on call after event #%d: all %d on-call rows are 0", e.Index, len(keys))
			cx := &Counterexample{Explanation: []string{fmt.Sprintf(
				"After event #%d every on-call row (%s) is 0: nobody is on call. Each doctor read the others "+
					"on call and went off call; the reads and writes were not serialized (write skew).",
				e.Index, strings.Join(keys, ", "))}}
			for _, k := range keys {
				if rows[k].last.F != "" {
					cx.Events = append(cx.Events, rows[k].last)
				}
			}
			slices.SortFunc(cx.Events, func(a, b history.Event) int { return a.Index - b.Index })
			v.Counterexample = cx
			v.Stats = map[string]float64{"rows": float64(len(keys)), "writes": float64(writes)}
			return v
		}
		if allMaybe && maybe == "" {
			maybe = fmt.Sprintf("every on-call row may have been 0 at event #%d, depending on a write in flight, "+
				"a write of unknown outcome or an unknown initial value", e.Index)
		}
	}
	v.Stats = map[string]float64{"rows": float64(len(keys)), "writes": float64(writes)}
	if maybe != "" {
		v.Result, v.Reason = Unknown, maybe
		return v
	}
	v.Result = Valid
	v.Reason = fmt.Sprintf("someone was on call throughout: %d writes to %d on-call rows", writes, len(keys))
	return v
}
