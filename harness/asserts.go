package harness

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/workloads"
)

// Assertions the catalog's variants make beyond the checks' verdicts.

// writesRejected asserts that the fenced storage rejected at least n writes.
func writesRejected(n int) func(Result) error {
	return func(r Result) error {
		got := verdictOf(r, "critical-sections").Stats["write-rejected"]
		if got < float64(n) {
			return fmt.Errorf("expected the storage to reject at least %d stale write(s), it rejected %v", n, got)
		}
		return nil
	}
}

// overlapWithout asserts an overlap between two clients other than node: one
// that node's release caused, not its own lateness.
func overlapWithout(node string) func(Result) error {
	return func(r Result) error {
		for _, o := range models.Overlaps(models.Holdings(r.Events)) {
			if o.A.Node != node && o.B.Node != node {
				return nil
			}
		}
		return fmt.Errorf("expected an overlap between two clients other than %s", node)
	}
}

// failedOver asserts that the monitor promoted a replica.
func failedOver(r Result) error {
	if r.Summary.Faults["failover"] == 0 {
		return fmt.Errorf("expected a failover, the monitor promoted no replica")
	}
	return nil
}

// oversold asserts whether the shop sold more than it had.
func oversold(want bool) func(Result) error {
	return func(r Result) error {
		sold, stock, err := itemsSold(r)
		if err != nil {
			return err
		}
		if (sold > stock) != want {
			return fmt.Errorf("sold %d items of %d: expected oversold=%v", sold, stock, want)
		}
		return nil
	}
}

// itemsSold adds up the purchases of a stock run — each applied write of
// level−quantity after a read of level — and returns them with the initial stock.
func itemsSold(r Result) (sold, stock int64, err error) {
	initial, err := initialOf(r.Test)
	if err != nil {
		return 0, 0, err
	}
	for _, v := range initial { // determinism:ok summing
		stock += v
	}
	read := map[int]int64{} // process -> level it read
	for _, e := range r.Events {
		switch {
		case e.Type != history.OK || e.Value == nil:
		case e.F == history.FRead:
			read[e.Process] = *e.Value
		case e.F == history.FWrite:
			if level, ok := read[e.Process]; ok {
				sold += level - *e.Value
				delete(read, e.Process)
			}
		}
	}
	return sold, stock, nil
}

// initialOf is the storage's initial content under the test's workload.
func initialOf(t Test) (map[string]int64, error) {
	t = t.WithDefaults()
	entry, err := FindWorkload(t.Workload)
	if err != nil {
		return nil, err
	}
	wl, err := entry.New(t.WorkloadOptions)
	if err != nil {
		return nil, err
	}
	if in, ok := wl.(workloads.Initializer); ok {
		return in.Initial(), nil
	}
	return nil, nil
}

// storyMentions asserts that the story of the result names every fragment.
func storyMentions(fragments ...string) func(Result) error {
	return func(r Result) error {
		story := strings.Join(Story(r), "\n")
		var missing []string
		for _, f := range fragments {
			if !strings.Contains(story, f) {
				missing = append(missing, fmt.Sprintf("%q", f))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the story does not mention %s:\n%s", strings.Join(missing, ", "), story)
		}
		return nil
	}
}

func verdictOf(r Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{}
}
