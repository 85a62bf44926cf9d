package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkload(WorkloadEntry{
		Name: "reentrant",
		Doc:  "nested acquires of one lock; a read-hold-write section at every level after its inner levels released (options: keys, depth, hold, think, wait)",
		New: func(opts map[string]string) (workloads.Workload, error) {
			w := workloads.DefaultReentrant()
			for _, k := range sortedKeys(opts) {
				if err := w.Set(k, opts[k]); err != nil {
					return nil, err
				}
			}
			return w, nil
		},
	})
}
