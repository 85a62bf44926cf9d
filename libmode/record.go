package libmode

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// recorder collects the history's events from every goroutine; events
// puts them in a canonical order (time, then process, then the process's
// own order), so the order in which goroutines of one instant recorded
// them does not show.
type recorder struct {
	mu     sync.Mutex
	events []stamped
	seq    map[int]int
}

type stamped struct {
	history.Event
	n int // the process's own order
}

func newRecorder() *recorder { return &recorder{seq: map[int]int{}} }

func (r *recorder) add(e history.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq[e.Process]++
	r.events = append(r.events, stamped{Event: e, n: r.seq[e.Process]})
}

// nemesis records a fault's start or stop.
func (r *recorder) nemesis(t history.Type, f string, targets []string, detail string, at time.Duration) {
	r.add(history.Event{Time: int64(at), Process: history.NemesisProcess, Type: t, F: f,
		Targets: slices.Clone(targets), Detail: detail})
}

// history returns the events in canonical order, indexed.
func (r *recorder) history() []history.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := slices.Clone(r.events)
	slices.SortStableFunc(s, func(a, b stamped) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Process, b.Process), cmp.Compare(a.n, b.n))
	})
	out := make([]history.Event, len(s))
	for i, e := range s {
		out[i] = e.Event
		out[i].Index = i
	}
	return out
}
