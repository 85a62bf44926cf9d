package reports

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// operation is one invoke and its completion (nil: never completed).
type operation = history.Operation

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
	if done, err := history.Complete(events); err == nil {
		events = done // key and owner on both events of an operation
	}
	v := &view{events: events, ops: history.Operations(events), faults: pairFaults(events)}
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

// pairFaults turns the history's fault windows into plot spans; a fault that
// never stopped ends at its start until the view extends it to the end.
func pairFaults(events []history.Event) []faultWindow {
	var out []faultWindow
	for _, w := range history.FaultWindows(events) {
		f := faultWindow{Kind: w.Start.F, Targets: w.Start.Targets, Detail: w.Start.Detail, Start: w.Start.Time, End: w.Start.Time, Open: true}
		if w.Stop != nil {
			f.End, f.Open = w.Stop.Time, false
		}
		out = append(out, f)
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
		seen[o.Invoke.F] = true
	}
	var out []string
	for _, f := range knownFunctions {
		if seen[f] {
			out = append(out, f)
			delete(seen, f)
		}
	}
	return append(out, slices.Sorted(maps.Keys(seen))...)
}

var knownFunctions = []string{history.FAcquire, history.FRenew, history.FRelease, history.FRead, history.FWrite}

// outcomes are the completion types in report order.
var outcomes = []history.Type{history.OK, history.Fail, history.Info}
