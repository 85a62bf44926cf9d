package models

import (
	"cmp"
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
