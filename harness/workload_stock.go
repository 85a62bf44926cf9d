package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkloadTable("buyers under the lock: read the stock level, if enough write level-quantity with the token "+
		"(4 items; c1 wants 3, c2 wants 2)",
		workloads.StockTable)
}
