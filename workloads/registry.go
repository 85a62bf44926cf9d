package workloads

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/internal/suggest"
)

// The workloads a run may name, registered in name order of their tables.
func init() {
	registerTable("acquire, read the list, hold, append an element with the token, release", ListAppendTable)
	registerTable("acquire, read the counter, hold, write counter+1 with the token, release", FencedCounterTable)
	registerTable("doctors on call (Kleppmann's write skew): under the lock read every doctor's row, "+
		"go off call only if another doctor is on call; judged by the on-call check (at least one doctor on call)",
		OnCallTable)
	registerTable("candidates run for leadership; a leader works (read the counter, hold, write counter+1 with the token, "+
		"every work interval) until it stops leading (its lease not renewed) or is told to stop (term), then runs again",
		LeaderElectionTable, func(e *Entry) { e.Leadership = true })
	registerTable("nested acquires of one lock; a read-hold-write section at every level after its inner levels released", ReentrantTable)
	registerTable("buyers under the lock: read the stock level, if enough write level-quantity with the token "+
		"(4 items; c1 wants 3, c2 wants 2)",
		StockTable)
}

// Entry is an entry of the workload registry: what a run's --workload
// names.
type Entry struct {
	// Name is the workload's name on the command line.
	Name string
	// Doc is one line describing it.
	Doc string
	// Options is the workload's option table (its opt.Table).
	Options opt.Spec
	// New checks the options and returns the workload.
	New func(opts map[string]string) (Workload, error)
	// Leadership says a client holds the lock for long by design (a leader
	// works until it stops leading): one client holding most of a run's
	// grants is the workload's purpose, not the others starving.
	Leadership bool
}

// registry is the registry of workloads; each workload's file registers
// itself from init.
var registry []Entry

// register adds a workload to the registry (called from init).
func register(w Entry) {
	registry = append(registry, w)
	slices.SortFunc(registry, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
}

// registerTable registers a workload whose options are the table t:
// its name is the table's owner, and New parses the options with the table;
// with sets the entry's other fields.
func registerTable[W Workload](doc string, t opt.Table[W], with ...func(*Entry)) {
	e := Entry{Name: t.Owner, Doc: doc, Options: t,
		New: func(opts map[string]string) (Workload, error) {
			w, err := t.Parse(opts)
			if err != nil {
				return nil, err
			}
			return w, nil
		}}
	for _, f := range with {
		f(&e)
	}
	register(e)
}

// All lists the registered workloads, sorted by name.
func All() []Entry { return slices.Clone(registry) }

// Names lists the registered workloads.
func Names() []string {
	out := make([]string, len(registry))
	for i, w := range registry {
		out[i] = w.Name
	}
	return out
}

// Find returns the workload called name; an unknown name is a
// *suggest.UnknownError naming the workloads it was probably meant to be.
func Find(name string) (Entry, error) {
	return suggest.Find("workload", name, registry, func(w Entry) string { return w.Name })
}
