package harness

import (
	"slices"

	"github.com/locklab/locklab/system"
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
func Systems() []system.System { return system.All() }

// FindSystem returns the system called name; an unknown name is a
// *suggest.UnknownError naming the systems it was probably meant to be.
func FindSystem(name string) (system.System, error) { return system.Find(name) }

// SystemNames lists the registered systems.
func SystemNames() []string { return system.Names() }

// WorkloadEntry is an entry of the workload registry (workloads.Entry).
type WorkloadEntry = workloads.Entry

// Workloads lists the registered workloads, sorted by name.
func Workloads() []workloads.Entry { return workloads.All() }

// WorkloadNames lists the registered workloads.
func WorkloadNames() []string { return workloads.Names() }

// FindWorkload returns the workload called name; an unknown name is a
// *suggest.UnknownError naming the workloads it was probably meant to be.
func FindWorkload(name string) (workloads.Entry, error) { return workloads.Find(name) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
