package harness

import (
	"github.com/locklab/locklab/system"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/workloads"
)

// The lock-system contract lives in package system, which a system's own
// package imports to register itself; these aliases keep harness's callers
// as they were.
type (
	// Deployment is a lock system set up in a world (system.Deployment).
	Deployment = system.Deployment
	// System is an entry of the system registry (system.System).
	System = system.System
	// Claims are what a system promises for one configuration (system.Claims).
	Claims = system.Claims
)

// Systems lists the registered systems, sorted by name.
func Systems() []System { return system.All() }

// FindSystem returns the system called name; an unknown name is a
// *suggest.UnknownError naming the systems it was probably meant to be.
func FindSystem(name string) (System, error) { return system.Find(name) }

// SystemNames lists the registered systems.
func SystemNames() []string { return system.Names() }

// WorkloadEntry is an entry of the workload registry.
type WorkloadEntry struct {
	// Name is the workload's name on the command line.
	Name string
	// Doc is one line describing it.
	Doc string
	// Options is the workload's option table (its opt.Table).
	Options opt.Spec
	// New checks the options and returns the workload.
	New func(opts map[string]string) (workloads.Workload, error)
}

// workloadEntries is the registry of workloads; each workload's file registers
// itself from init.
var workloadEntries []WorkloadEntry

// registerWorkload adds a workload to the registry (called from init).
func registerWorkload(w WorkloadEntry) {
	workloadEntries = append(workloadEntries, w)
	slices.SortFunc(workloadEntries, func(a, b WorkloadEntry) int { return strings.Compare(a.Name, b.Name) })
}

// registerWorkloadTable registers a workload whose options are the table t:
// its name is the table's owner, and New parses the options with the table.
func registerWorkloadTable[W workloads.Workload](doc string, t opt.Table[W]) {
	registerWorkload(WorkloadEntry{Name: t.Owner, Doc: doc, Options: t,
		New: func(opts map[string]string) (workloads.Workload, error) {
			w, err := t.Parse(opts)
			if err != nil {
				return nil, err
			}
			return w, nil
		}})
}

// Workloads lists the registered workloads, sorted by name.
func Workloads() []WorkloadEntry { return slices.Clone(workloadEntries) }

// WorkloadNames lists the registered workloads.
func WorkloadNames() []string {
	out := make([]string, len(workloadEntries))
	for i, w := range workloadEntries {
		out[i] = w.Name
	}
	return out
}

// FindWorkload returns the workload called name; an unknown name is a
// *suggest.UnknownError naming the workloads it was probably meant to be.
func FindWorkload(name string) (WorkloadEntry, error) {
	for _, w := range workloadEntries {
		if w.Name == name {
			return w, nil
		}
	}
	return WorkloadEntry{}, suggest.Unknown("workload", name, WorkloadNames())
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
