package reports

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// operation is one invoke and its completion (nil: never completed).
type operation struct {
	inv  history.Event
	comp *history.Event
}

// outcome is the completion type; a pending operation counts as info.
func (o operation) outcome() history.Type {
	if o.comp == nil {
		return history.Info
	}
	return o.comp.Type
}

// latency is the time from invoke to completion (ns); ok is false when the
// operation never completed.
func (o operation) latency() (ns int64, ok bool) {
	if o.comp == nil {
		return 0, false
	}
	return o.comp.Time - o.inv.Time, true
}

// faultWindow is one fault as it happened: from its start event to its stop
// event, or to the end of the history when it never stopped.
type faultWindow struct {
	Kind       string
	Targets    []string
	Detail     string
	Start, End int64
	Open       bool
}

// label names the fault in a plot: its kind and targets.
func (f faultWindow) label() string {
	if len(f.Targets) == 0 {
		return f.Kind
	}
	t := strings.Join(f.Targets, ",")
	if len(t) > 24 {
		t = t[:21] + "..."
	}
	return f.Kind + " " + t
}

// view is what a report derives from a history, computed once.
type view struct {
	// events is the history.
	events []history.Event
	// end is the time of the last event (ns).
	end int64
	// ops are the operations in invoke order.
	ops []operation
	// faults are the fault windows in start order.
	faults []faultWindow
	// nodes are the clients, in natural order (c2 before c10).
	nodes []string
	// holdings and overlaps are the lock intervals the clients believed in.
	holdings []models.Holding
	overlaps []models.Overlap
}

func newView(events []history.Event) *view {
	v := &view{events: events, ops: pairOperations(events), faults: pairFaults(events)}
	if n := len(events); n > 0 {
		v.end = events[n-1].Time
	}
	for i := range v.faults {
		if v.faults[i].Open {
			v.faults[i].End = v.end
		}
	}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Process != history.NemesisProcess && e.Node != "" && !seen[e.Node] {
			seen[e.Node] = true
			v.nodes = append(v.nodes, e.Node)
		}
	}
	slices.SortFunc(v.nodes, naturalCompare)
	v.holdings = models.Holdings(events)
	v.overlaps = models.Overlaps(v.holdings)
	return v
}

// pairOperations pairs every invoke with the next completion of its process.
func pairOperations(events []history.Event) []operation {
	var ops []operation
	open := map[int]int{} // process -> index in ops
	for i := range events {
		e := &events[i]
		switch {
		case e.Type == history.Invoke:
			open[e.Process] = len(ops)
			ops = append(ops, operation{inv: *e})
		case e.Type.IsCompletion():
			if j, ok := open[e.Process]; ok {
				ops[j].comp = e
				delete(open, e.Process)
			}
		}
	}
	return ops
}

// pairFaults pairs nemesis start and stop events with the same kind, targets
// and detail, first in first out.
func pairFaults(events []history.Event) []faultWindow {
	var out []faultWindow
	open := map[string][]int{} // kind+targets+detail -> indexes in out
	for _, e := range events {
		if e.Type != history.Start && e.Type != history.Stop {
			continue
		}
		k := e.F + "\x00" + strings.Join(e.Targets, "\x00") + "\x00" + e.Detail
		if e.Type == history.Start {
			open[k] = append(open[k], len(out))
			out = append(out, faultWindow{Kind: e.F, Targets: e.Targets, Detail: e.Detail, Start: e.Time, End: e.Time, Open: true})
			continue
		}
		if q := open[k]; len(q) > 0 {
			out[q[0]].End, out[q[0]].Open = e.Time, false
			open[k] = q[1:]
		}
	}
	return out
}

// naturalCompare orders names by their text, then by a trailing number as a
// number, so c2 comes before c10.
func naturalCompare(a, b string) int {
	ap, an := splitNumber(a)
	bp, bn := splitNumber(b)
	return cmp.Or(cmp.Compare(ap, bp), cmp.Compare(an, bn), cmp.Compare(a, b))
}

func splitNumber(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return s, -1
	}
	return s[:i], n
}

// functions lists the operation functions present, in a fixed order: the
// lock's functions first, then the storage's, then any others by name.
func (v *view) functions() []string {
	seen := map[string]bool{}
	for _, o := range v.ops {
		seen[o.inv.F] = true
	}
	var out []string
	for _, f := range knownFunctions {
		if seen[f] {
			out = append(out, f)
			delete(seen, f)
		}
	}
	return append(out, sortedKeys(seen)...)
}

var knownFunctions = []string{history.FAcquire, history.FRenew, history.FRelease, history.FRead, history.FWrite}

// outcomes are the completion types in report order.
var outcomes = []history.Type{history.OK, history.Fail, history.Info}
