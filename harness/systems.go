package harness

import (
	"fmt"
	"github.com/locklab/locklab/models"
	"slices"
	"strings"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/workloads"
)

// Deployment is a lock system set up in a world.
type Deployment struct {
	// Servers are the system's nodes (none for the control lock).
	Servers []*sim.Node
	// NewLock makes the lock client library of one client process.
	NewLock func(p *sim.Proc) backends.Lock
	// HasTokens reports whether grants carry fencing tokens.
	HasTokens bool
	// Resolve maps system-specific target names ("primary") to nodes; nil if none.
	Resolve func(name string) ([]*sim.Node, bool)
	// Roles are the names Resolve understands that follow the system's state
	// ("primary"); random schedules aim at them too.
	Roles []string
	// Record, when set, is given the run's history so that the system can
	// record its own events (a failover) beside the nemesis's faults.
	Record func(log *history.Log)
	// Audit, when set, judges the system's own invariants after the run (for
	// raftkv: one leader per term, no acknowledged command lost), as a check
	// run beside the checks of the history.
	Audit models.Check
	// Figures, when set, returns what the system measured during the run
	// (elections, say), for results.json.
	Figures func() map[string]any
	// Grants is the servers' own record of the grants they made, in true
	// time: the ground truth the verdicts of a simulated run can be checked
	// against (see backends.GrantLog). It is kept out of the history.
	Grants *backends.GrantLog
}

// System is an entry of the system registry.
type System struct {
	// Name is the system's name on the command line.
	Name string
	// Doc is one line describing it.
	Doc string
	// Options lists the option keys it understands.
	Options []string
	// Deploy checks the options and adds the system's nodes to w.
	Deploy func(w *sim.World, opts map[string]string) (Deployment, error)
}

// systems is the registry of lock systems; each system's file registers
// itself from init.
var systems []System

// registerSystem adds a system to the registry (called from init).
func registerSystem(s System) {
	systems = append(systems, s)
	slices.SortFunc(systems, func(a, b System) int { return strings.Compare(a.Name, b.Name) })
}

// Systems lists the registered systems, sorted by name.
func Systems() []System { return slices.Clone(systems) }

// FindSystem returns the system called name.
func FindSystem(name string) (System, error) {
	for _, s := range systems {
		if s.Name == name {
			return s, nil
		}
	}
	return System{}, fmt.Errorf("unknown system %q (known: %s)", name, strings.Join(SystemNames(), ", "))
}

// SystemNames lists the registered systems.
func SystemNames() []string {
	out := make([]string, len(systems))
	for i, s := range systems {
		out[i] = s.Name
	}
	return out
}

// WorkloadEntry is an entry of the workload registry.
type WorkloadEntry struct {
	Name string
	Doc  string
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

// FindWorkload returns the workload called name.
func FindWorkload(name string) (WorkloadEntry, error) {
	var names []string
	for _, w := range workloadEntries {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return WorkloadEntry{}, fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(names, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
