package harness

import "github.com/locklab/locklab/workloads"

// FindWorkload returns the workload called name (workloads.Find), for the
// live package.
func FindWorkload(name string) (workloads.Entry, error) { return workloads.Find(name) }
