package models

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
)

// analysis is Porcupine's account of an illegal batch: the longest order of
// its operations that is consistent, the state that order leaves, and the
// first operation (by invocation) it could not place.
type analysis struct {
	// ok is false when the verbose search ran out of budget (no details).
	ok bool
	// total is the number of operations in the batch.
	total int
	// placed is the longest consistent order, without the start operation.
	placed []porcupine.Operation
	// state is the model state after placed.
	state any
	// stuck is the first operation by invocation that placed leaves out
	// (nil when none is finite).
	stuck *porcupine.Operation
	// concurrent are the other operations left out that overlap stuck.
	concurrent []porcupine.Operation
	start      any
	ops        []porcupine.Operation
	info       porcupine.LinearizationInfo
}

// analyze reruns Porcupine on an illegal batch, asking for the partial
// linearizations. The search is the same as the one that found the batch
// illegal, so it fits in the same budget.
func analyze(spec searchSpec, start any, batch []linOp, b Budget) analysis {
	ops := porcupineOps(start, batch)
	an := analysis{total: len(batch), start: start, ops: ops, state: start}
	counter := &stepCounter{limit: b.stepLimit()}
	res, info := porcupine.CheckOperationsVerbose(counter.wrap(spec.model), ops, b.Time)
	if res != porcupine.Illegal || counter.exhausted.Load() || counter.crash.Load() != nil {
		return an
	}
	an.ok, an.info = true, info
	longest := longestPartial(info)
	placed := map[int64]bool{}
	for _, o := range longest {
		placed[o.Call] = true
		_, an.state = spec.model.Step(an.state, o.Input, o.Output)
		if _, isStart := o.Input.(startOp); !isStart {
			an.placed = append(an.placed, o)
		}
	}
	open := map[int64]bool{}
	for _, o := range batch {
		open[o.call] = o.open
	}
	for i := range ops {
		o := ops[i]
		if placed[o.Call] || open[o.Call] {
			continue
		}
		if an.stuck == nil {
			an.stuck = &ops[i]
			continue
		}
		if o.Call <= an.stuck.Return {
			an.concurrent = append(an.concurrent, o)
		}
	}
	return an
}

// longestPartial picks the longest partial linearization Porcupine found,
// the earliest-invoked one among equals, so that explanations do not depend
// on map order inside Porcupine.
func longestPartial(info porcupine.LinearizationInfo) []porcupine.Operation {
	var best []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(best) || (len(lin) == len(best) && earlier(lin, best)) {
				best = lin
			}
		}
	}
	return best
}

func earlier(a, b []porcupine.Operation) bool {
	return slices.CompareFunc(a, b, func(x, y porcupine.Operation) int { return cmp.Compare(x.Call, y.Call) }) < 0
}

// faultsAround returns the fault windows (start and stop events) that overlap
// the time span of evs and matter to the clients involved in them.
func faultsAround(all, evs []history.Event) []history.Event {
	if len(evs) == 0 {
		return nil
	}
	from, to := int64(math.MaxInt64), int64(math.MinInt64)
	var nodes []string
	for _, e := range evs {
		from, to = min(from, e.Time), max(to, e.Time)
		if e.Node != "" && !slices.Contains(nodes, e.Node) {
			nodes = append(nodes, e.Node)
		}
	}
	return faultsDuring(all, from, to, nodes...)
}

// withFaults adds to a counterexample the fault windows around its events,
// as events and as explanation lines.
func withFaults(cx *Counterexample, all []history.Event) *Counterexample {
	cx.Faults = faultsAround(all, cx.Events)
	for _, f := range cx.Faults {
		cx.Explanation = append(cx.Explanation, "  during fault: "+f.String())
	}
	return cx
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// lateLanding finds the write that explains a read of a counter value v
// that acknowledged writes had already overwritten: a write of v whose
// outcome its client never learnt (info, or no answer), sent before the
// read, after which acknowledged writes of other values completed before
// the read was sent. It landed late, rolling the counter back to v. It
// returns that write (the latest such) and the last acknowledged write the
// rollback undid; nil when the history shows no such write.
func lateLanding(h *history.Paired, key string, v int64, read *op) (late, undone *op) {
	ops := h.Ops()
	isWrite := func(o *op) bool {
		return o.Func() == history.FWrite && o.Invoke.Key == key && o.Invoke.Value != nil
	}
	for i := range ops {
		w := &ops[i]
		if !isWrite(w) || *w.Invoke.Value != v || w.Invoke.Index >= read.Invoke.Index {
			continue
		}
		if out := w.Outcome(); out == history.OK || out == history.Fail {
			continue
		}
		var last *op // the last acknowledged write sent after w and done before the read
		for j := range ops {
			o := &ops[j]
			if !isWrite(o) || o.Outcome() != history.OK || o.Invoke.Index <= w.Invoke.Index ||
				o.Completion.Index >= read.Invoke.Index {
				continue
			}
			if last == nil || o.Completion.Index > last.Completion.Index {
				last = o
			}
		}
		if last == nil || *last.Invoke.Value == v {
			continue // nothing acknowledged overwrote v before the read, or it wrote v itself
		}
		if late == nil || w.Invoke.Index > late.Invoke.Index {
			late, undone = w, last
		}
	}
	return late, undone
}

// explainLateLanding names, in the counterexample of a lost update on a
// counter between the sections a and b (which both read the same value), the
// write that caused it when that is a write of unknown outcome that landed
// late (lateLanding): the two readers are its victims, not its cause. It
// adds the write's events and a first explanation line, and returns the
// verdict's short reason (short unchanged when there is no such write).
func explainLateLanding(h *history.Paired, key string, cx *Counterexample, short string, a, b *section) string {
	if a.list || b.list || a.read == nil || b.read == nil {
		return short
	}
	if a.read.Completion.Index > b.read.Completion.Index {
		a, b = b, a // b: the later read, the one that saw the rolled-back value
	}
	why, ok := nameLateLanding(h, key, cx, a.read.Invoke.Index, b)
	if !ok {
		return short
	}
	return fmt.Sprintf("%s (%s and %s both read %d and both wrote)", why, a.who(), b.who(), b.from.num)
}

// explainLateRead is explainLateLanding for a batch explained by the
// section the search could not place (an): when that section read a counter
// value that only a write of unknown outcome landing late explains, the
// write is named.
func explainLateRead(h *history.Paired, key string, cx *Counterexample, short string, an analysis) string {
	if an.stuck == nil {
		return short
	}
	st, ok := an.stuck.Input.(*secStep)
	if !ok || st.sec == nil || st.sec.read == nil || st.sec.list || st.from.list {
		return short
	}
	why, ok := nameLateLanding(h, key, cx, 0, st.sec)
	if !ok {
		return short
	}
	return fmt.Sprintf("%s (%s read %d)", why, st.sec.who(), st.from.num)
}

// rolledBack is the latest read of key, invoked from the history index from
// up to to, that a write of unknown outcome landing late explains
// (lateLanding): the read, the write and the acknowledged write it undid.
// Only reads of a value some write of unknown outcome wrote are looked at.
func rolledBack(h *history.Paired, key string, from, to int) (read, late, undone *op) {
	ops := h.Ops()
	var unsure []int64 // the values of the writes of unknown outcome
	for i := range ops {
		o := &ops[i]
		if o.Func() == history.FWrite && o.Invoke.Key == key && o.Invoke.Value != nil && o.Invoke.Index < to &&
			o.Outcome() != history.OK && o.Outcome() != history.Fail && !slices.Contains(unsure, *o.Invoke.Value) {
			unsure = append(unsure, *o.Invoke.Value)
		}
	}
	if len(unsure) == 0 {
		return nil, nil, nil
	}
	for i := range ops {
		r := &ops[i]
		if r.Func() != history.FRead || r.Invoke.Key != key || r.Outcome() != history.OK || r.Completion.Value == nil ||
			r.Invoke.Index < from || r.Invoke.Index > to || !slices.Contains(unsure, *r.Completion.Value) {
			continue
		}
		if read != nil && r.Invoke.Index < read.Invoke.Index {
			continue
		}
		if l, u := lateLanding(h, key, *r.Completion.Value, r); l != nil {
			read, late, undone = r, l, u
		}
	}
	return read, late, undone
}

// nameLateLanding adds to cx the write of unknown outcome whose late landing
// explains b's read, or a read between the history index from and b's read
// (rolledBack): its events (and the read's) and a first explanation line. It
// returns the short reason naming it, and false when there is no such write.
func nameLateLanding(h *history.Paired, key string, cx *Counterexample, from int, b *section) (string, bool) {
	read, late, undone := rolledBack(h, key, from, b.read.Invoke.Index)
	if late == nil {
		return "", false
	}
	v := *late.Invoke.Value
	who := late.Invoke.Node
	if who == "" {
		who = fmt.Sprintf("p%d", late.Invoke.Process)
	}
	returned := "never returned"
	if late.Completion != nil {
		returned = fmt.Sprintf("returned %s at %s", late.Completion.Type, history.FormatTime(late.Completion.Time))
	}
	noun := cmpOr(b.noun, "counter")
	line := fmt.Sprintf("Late write on %q: %s's write of %d (sent at %s, %s) landed late, after %s's acknowledged write of %d "+
		"(done at %s), rolling the %s back from %d to %d: %s read %d again at %s.",
		key, who, v, history.FormatTime(late.Invoke.Time), returned, undone.Invoke.Node, *undone.Invoke.Value,
		history.FormatTime(undone.Completion.Time), noun, *undone.Invoke.Value, v, read.Invoke.Node, v,
		history.FormatTime(read.Completion.Time))
	cx.Explanation = append([]string{line}, cx.Explanation...)
	for _, o := range []*op{late, read} {
		cx.Events = append(cx.Events, *o.Invoke)
		if o.Completion != nil {
			cx.Events = append(cx.Events, *o.Completion)
		}
	}
	slices.SortFunc(cx.Events, func(x, y history.Event) int { return x.Index - y.Index })
	cx.Events = slices.CompactFunc(cx.Events, func(x, y history.Event) bool { return x.Index == y.Index })
	return fmt.Sprintf("%s's write of %d (%s) landed late, rolling the %s back from %d to %d",
		who, v, returned, noun, *undone.Invoke.Value, v), true
}
