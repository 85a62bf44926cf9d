package models

import (
	"slices"

	"github.com/locklab/locklab/history"
)

// op is an operation of the history: an invoke and its completion.
type op = history.PairedOp

// completed is history.Pair for the models' exported entry points other
// than Run: a history whose operations contradict themselves is paired as it
// was recorded (Run says such a history is malformed).
func completed(events []history.Event) *history.Paired {
	if p, err := history.Pair(events); err == nil {
		return p
	}
	return history.PairRecorded(events)
}

// pairedCheck is a check that reads the paired form of a history: RunAll
// pairs a history once and hands every such check the same one.
type pairedCheck interface {
	checkPaired(h *history.Paired) Verdict
}

// faultWindow is a nemesis fault from its start to its stop (or the end).
type faultWindow = history.FaultWindow

// faultWindows pairs nemesis start and stop events by function, targets and detail.
func faultWindows(events []history.Event) []faultWindow { return history.FaultWindows(events) }

// faultsDuring returns the fault events (start and stop) of windows that
// overlap [from, to] in true time and that matter to the named clients: faults
// on them, or on nodes that are not clients (servers, storage, links). Client
// nodes are the nodes that recorded operations.
func faultsDuring(events []history.Event, from, to int64, involved ...string) []history.Event {
	windows := faultWindows(events)
	if !slices.ContainsFunc(windows, func(w faultWindow) bool { return w.Start.Time <= to && w.End() >= from }) {
		return nil // no fault window in [from, to]: no need to know the clients
	}
	clients := map[string]bool{}
	for i := range events {
		e := &events[i]
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
	for _, w := range windows {
		if w.Start.Time <= to && w.End() >= from && relevant(w.Start.Targets) {
			out = append(out, w.Start)
			if w.Stop != nil {
				out = append(out, *w.Stop)
			}
		}
	}
	slices.SortFunc(out, func(a, b history.Event) int { return a.Index - b.Index })
	return out
}

// appliesIfAny is Applies for a check that needs one event of function f of
// type t (a successful acquire, an attempted one, a successful read): true
// when the history has one, else false with why.
func appliesIfAny(events []history.Event, f string, t history.Type, why string) (bool, string) {
	for i := range events {
		if e := &events[i]; e.F == f && e.Type == t {
			return true, ""
		}
	}
	return false, why
}
