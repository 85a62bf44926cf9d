package harness

import "github.com/locklab/locklab/workloads"

func init() {
	registerWorkload(WorkloadEntry{
		Name: "list-append",
		Doc:  "acquire, read the list, hold, append an element with the token, release (options: keys, max, hold, think, wait)",
		New: func(opts map[string]string) (workloads.Workload, error) {
			w := workloads.DefaultListAppend()
			for _, k := range sortedKeys(opts) {
				if err := w.Set(k, opts[k]); err != nil {
					return nil, err
				}
			}
			return w, nil
		},
	})
}
