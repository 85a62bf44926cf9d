package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkloadTable("acquire, read the list, hold, append an element with the token, release", workloads.ListAppendTable)
}
