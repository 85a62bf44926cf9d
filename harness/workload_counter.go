package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkload(WorkloadEntry{
		Name: "fenced-counter",
		Doc:  "acquire, read the counter, hold, write counter+1 with the token, release (options: keys, hold, think, wait)",
		New: func(opts map[string]string) (workloads.Workload, error) {
			w := workloads.DefaultFencedCounter()
			for _, k := range sortedKeys(opts) {
				if err := w.Set(k, opts[k]); err != nil {
					return nil, err
				}
			}
			return w, nil
		},
	})
}
