package models

import (
	"math"
	"slices"

	"github.com/locklab/locklab/history"
)

// op is an operation: an invoke and its completion (nil when the history ends
// before it completes, which counts as info).
type op struct {
	inv  history.Event
	comp *history.Event
}

// outcome is the completion type, Info for a missing completion.
func (o op) outcome() history.Type {
	if o.comp == nil {
		return history.Info
	}
	return o.comp.Type
}

// returnIndex is the completion's index, or MaxInt64 when the outcome is
// unknown (it may take effect at any time after the invoke).
func (o op) returnIndex() int64 {
	if o.comp == nil || o.comp.Type == history.Info {
		return math.MaxInt64
	}
	return int64(o.comp.Index)
}

// pairOps matches every invoke with its completion, in invoke order.
func pairOps(events []history.Event) []op {
	n := 0
	for i := range events {
		if events[i].Type == history.Invoke {
			n++
		}
	}
	ops := make([]op, 0, n)
	open := map[int]int{} // process -> index in ops
	for i := range events {
		e := events[i]
		switch {
		case e.Type == history.Invoke:
			open[e.Process] = len(ops)
			ops = append(ops, op{inv: e})
		case e.Type.IsCompletion():
			if j, ok := open[e.Process]; ok {
				ops[j].comp = &events[i]
				delete(open, e.Process)
			}
		}
	}
	return ops
}

// faultWindow is a nemesis fault from its start to its stop (or the end).
type faultWindow struct {
	start, stop history.Event
	open        bool
}

// faultWindows pairs nemesis start and stop events by function, targets and detail.
func faultWindows(events []history.Event) []faultWindow {
	var out []faultWindow
	for _, e := range events {
		switch e.Type {
		case history.Start:
			out = append(out, faultWindow{start: e, open: true})
		case history.Stop:
			for i := range out {
				w := &out[i]
				if w.open && w.start.F == e.F && w.start.Detail == e.Detail && sameTargets(w.start.Targets, e.Targets) {
					w.stop, w.open = e, false
					break
				}
			}
		}
	}
	return out
}

func sameTargets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// faultsDuring returns the fault events (start and stop) of windows that
// overlap [from, to] in true time and that matter to the named clients: faults
// on them, or on nodes that are not clients (servers, storage, links). Client
// nodes are the nodes that recorded operations.
func faultsDuring(events []history.Event, from, to int64, involved ...string) []history.Event {
	clients := map[string]bool{}
	for _, e := range events {
		if e.Process != history.NemesisProcess && e.Node != "" {
			clients[e.Node] = true
		}
	}
	relevant := func(targets []string) bool {
		for _, t := range targets {
			if !clients[t] || slices.Contains(involved, t) {
				return true
			}
		}
		return len(targets) == 0
	}
	var out []history.Event
	for _, w := range faultWindows(events) {
		end := int64(math.MaxInt64)
		if !w.open {
			end = w.stop.Time
		}
		if w.start.Time <= to && end >= from && relevant(w.start.Targets) {
			out = append(out, w.start)
			if !w.open {
				out = append(out, w.stop)
			}
		}
	}
	slices.SortFunc(out, func(a, b history.Event) int { return a.Index - b.Index })
	return out
}
