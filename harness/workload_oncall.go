package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkloadTable("doctors on call (Kleppmann's write skew): under the lock read every doctor's row, "+
		"go off call only if another doctor is on call; judged by the on-call check (at least one doctor on call)",
		workloads.OnCallTable)
}
