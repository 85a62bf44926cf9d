package harness

import (
	"strings"

	"github.com/locklab/locklab/workloads"
)

func init() {
	registerWorkload(WorkloadEntry{
		Name: "stock",
		Doc: "buyers under the lock: read the stock level, if enough write level-quantity with the token " +
			"(4 items; c1 wants 3, c2 wants 2; options: " + strings.Join(workloads.StockOptions, ", ") + ")",
		New: func(opts map[string]string) (workloads.Workload, error) {
			w := workloads.DefaultStock()
			for _, k := range sortedKeys(opts) {
				if err := w.Set(k, opts[k]); err != nil {
					return nil, err
				}
			}
			return w, nil
		},
	})
}
