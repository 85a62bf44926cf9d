package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkloadTable("nested acquires of one lock; a read-hold-write section at every level after its inner levels released", workloads.ReentrantTable)
}
