package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkloadTable("acquire, read the counter, hold, write counter+1 with the token, release", workloads.FencedCounterTable)
}
