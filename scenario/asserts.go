package scenario

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/workloads"
)

// Assertions the catalog's variants make beyond the checks' verdicts.

// WritesRejected asserts that the fenced storage rejected at least n writes.
func WritesRejected(n int) func(Result) error {
	return func(r Result) error {
		got := VerdictOf(r, "critical-sections").Stats["write-rejected"]
		if got < float64(n) {
			return fmt.Errorf("expected the storage to reject at least %d stale write(s), it rejected %v", n, got)
		}
		return nil
	}
}

// OverlapWithout asserts an overlap between two clients other than node: one
// that node's release caused, not its own lateness.
func OverlapWithout(node string) func(Result) error {
	return func(r Result) error {
		for _, o := range models.Overlaps(models.Holdings(r.Events)) {
			if o.A.Node != node && o.B.Node != node {
				return nil
			}
		}
		return fmt.Errorf("expected an overlap between two clients other than %s", node)
	}
}

// FailedOver asserts that the monitor promoted a replica.
func FailedOver(r Result) error {
	if r.Summary.Faults["failover"] == 0 {
		return fmt.Errorf("expected a failover, the monitor promoted no replica")
	}
	return nil
}

// Oversold asserts whether the shop sold more than it had.
func Oversold(want bool) func(Result) error {
	return func(r Result) error {
		sold, stock, err := ItemsSold(r)
		if err != nil {
			return err
		}
		if (sold > stock) != want {
			return fmt.Errorf("sold %d items of %d: expected oversold=%v", sold, stock, want)
		}
		return nil
	}
}

// ItemsSold adds up the purchases of a stock run — each applied write of
// level−quantity after a read of level — and returns them with the initial stock.
func ItemsSold(r Result) (sold, stock int64, err error) {
	initial, err := InitialOf(r.Test)
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

// InitialOf is the storage's initial content under the test's workload.
func InitialOf(t Test) (map[string]int64, error) {
	t = t.WithDefaults()
	entry, err := workloads.Find(t.Workload)
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

// StoryMentions asserts that the story of the result names every fragment.
func StoryMentions(fragments ...string) func(Result) error {
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

// VerdictOf is the verdict of check in r (the zero verdict if it did not run).
func VerdictOf(r Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{}
}

// MessagesPerAcquisition is the number of messages the network carried per
// successful acquire (pings, watches, reads and storage traffic included).
func MessagesPerAcquisition(r Result) float64 {
	ok := r.Summary.Ops[history.FAcquire].OK
	if ok == 0 {
		return 0
	}
	return float64(r.Network.Sent) / float64(ok)
}
