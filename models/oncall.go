package models

import (
	"fmt"
	"maps"
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
// after its invocation. A write inside a transaction (see package history,
// Transactions) applies during its commit if that is ok, may apply if the
// commit's outcome is unknown, and never applies if the commit failed or
// never came. The history is invalid when, with no write in
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
	rows := c.rowsOf(h)
	keys := slices.Sorted(maps.Keys(rows))
	if len(keys) == 0 {
		v.Result, v.Reason = Unknown, "no on-call rows in the history"
		return v
	}
	failed := failedOnCallWrites(h)
	txn := onCallTxns(h, failed)
	writes := 0
	maybe := ""
	for i := range h.Len() {
		committed, commits := txn.applyAt[i]
		committing, invoked := txn.flightAt[i]
		if e := h.At(i); !commits && !invoked && (e.F != history.FWrite || !strings.HasPrefix(e.Key, OnCallPrefix)) {
			continue
		}
		e := *h.At(i)
		r := rows[e.Key]
		switch {
		case invoked: // a commit is invoked: its writes are in flight
			for _, inv := range committing {
				rows[inv.Key].inFlight[-1-inv.Index] = inv
			}
		case commits: // a commit completes: its writes apply
			for _, inv := range committed {
				r := rows[inv.Key]
				delete(r.inFlight, -1-inv.Index)
				r.value, r.known, r.last = *inv.Value, true, e
				writes++
			}
		case e.Type == history.Invoke:
			if !failed[e.Index] && !txn.atCommit[e.Index] {
				r.inFlight[e.Process] = e
			}
			continue
		case e.Type == history.OK:
			writes += r.completed(e, txn)
		case e.Type == history.Fail:
			delete(r.inFlight, e.Process)
		case e.Type == history.Info:
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
			return nobodyOnCall(v, e, rows, keys, writes)
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

// rowsOf are the on-call rows a history touches, each with its initial
// value when the check knows it.
func (c OnCall) rowsOf(h *history.Paired) map[string]*rowState {
	rows := map[string]*rowState{}
	for i := range h.Len() {
		e := h.At(i)
		if !isOnCallOp(e) || rows[e.Key] != nil {
			continue
		}
		r := &rowState{inFlight: map[int]history.Event{}}
		if val, ok := c.InitialByKey[e.Key]; ok {
			r.value, r.known = val, true
		} else if c.Initial != nil {
			r.value, r.known = *c.Initial, true
		}
		rows[e.Key] = r
	}
	return rows
}

// failedOnCallWrites are the writes of on-call rows that failed (by their
// invocation's index): never applied, they are left out from their
// invocation on, so that they make nothing uncertain while in flight.
func failedOnCallWrites(h *history.Paired) map[int]bool {
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
	return failed
}

// completed applies the ok completion e of a write of row r (unless it was
// not in flight: failed, or applied by its commit); a write its transaction
// left unsure is noted as such. It returns the writes applied (0 or 1).
func (r *rowState) completed(e history.Event, txn onCallTxnWrites) int {
	inv := r.inFlight[e.Process]
	delete(r.inFlight, e.Process)
	switch {
	case inv.Value == nil: // not in flight: failed, or applied by its commit
	case txn.unsure[inv.Index]:
		r.unsure = append(r.unsure, inv)
	default:
		r.value, r.known, r.last = *inv.Value, true, e
		return 1
	}
	return 0
}

// nobodyOnCall is the invalid verdict: after event e every on-call row is 0.
func nobodyOnCall(v Verdict, e history.Event, rows map[string]*rowState, keys []string, writes int) Verdict {
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

// onCallTxnWrites is what the transactions of a history do to its writes of
// on-call rows (indexes of the writes' invocations).
type onCallTxnWrites struct {
	atCommit map[int]bool            // ok inside a transaction whose commit is ok: applied during the commit
	unsure   map[int]bool            // ok inside a transaction whose commit's outcome is unknown
	flightAt map[int][]history.Event // a commit's invocation -> the invocations of the writes it applies
	applyAt  map[int][]history.Event // a commit's completion -> the same
}

// onCallTxns sorts the writes of on-call rows made inside transactions;
// those whose transaction never committed are added to failed (never
// applied).
func onCallTxns(h *history.Paired, failed map[int]bool) onCallTxnWrites {
	var out onCallTxnWrites
	ops := h.Ops()
	txns := indexTxns(ops)
	if txns == nil {
		return out
	}
	out.atCommit, out.unsure = map[int]bool{}, map[int]bool{}
	out.flightAt, out.applyAt = map[int][]history.Event{}, map[int][]history.Event{}
	for i := range ops {
		o := &ops[i]
		if o.Func() != history.FWrite || !strings.HasPrefix(o.Invoke.Key, OnCallPrefix) || o.Outcome() == history.Fail {
			continue
		}
		t, ok := txns.of(o)
		if !ok {
			continue
		}
		inv := o.Invoke.Index
		switch {
		case t.commit == nil || t.commit.Outcome() == history.Fail:
			failed[inv] = true
		case t.commit.Outcome() == history.Info:
			out.unsure[inv] = true // an info write stays unsure as it is
		case o.Outcome() == history.OK:
			out.atCommit[inv] = true
			from, at := t.commit.Invoke.Index, t.commit.Completion.Index
			out.flightAt[from] = append(out.flightAt[from], *o.Invoke)
			out.applyAt[at] = append(out.applyAt[at], *o.Invoke)
		}
	}
	return out
}
