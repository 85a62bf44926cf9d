package models

import (
	"slices"

	"github.com/locklab/locklab/history"
)

// Counts are the completions of one function.
type Counts struct {
	OK      int `json:"ok"`
	Fail    int `json:"fail"`
	Info    int `json:"info"`
	Pending int `json:"pending"` // invoked, never completed
}

// Total is the number of invocations.
func (c Counts) Total() int { return c.OK + c.Fail + c.Info + c.Pending }

// Summary counts what a history contains.
type Summary struct {
	// Ops maps each function to its completions.
	Ops map[string]Counts `json:"ops"`
	// Faults counts nemesis faults started, by kind.
	Faults map[string]int `json:"faults"`
	// AcquireSuccess is the share of acquire attempts that returned ok (0..1);
	// -1 when there were none.
	AcquireSuccess float64 `json:"acquire_success"`
	// Events and Duration (ns, the last event's time) describe the history's size.
	Events   int   `json:"events"`
	Duration int64 `json:"duration"`
}

// Summarize counts operations and faults.
func Summarize(events []history.Event) Summary { return SummarizePaired(history.PairRecorded(events)) }

// SummarizePaired is Summarize of a paired history.
func SummarizePaired(h *history.Paired) Summary {
	events := h.Recorded()
	s := Summary{Ops: map[string]Counts{}, Faults: map[string]int{}, Events: len(events), AcquireSuccess: -1}
	s.Duration = h.End()
	for _, o := range h.Ops() {
		c := s.Ops[o.Invoke.F]
		switch {
		case o.Completion == nil:
			c.Pending++
		case o.Completion.Type == history.OK:
			c.OK++
		case o.Completion.Type == history.Fail:
			c.Fail++
		default:
			c.Info++
		}
		s.Ops[o.Invoke.F] = c
	}
	for i := range events {
		if e := &events[i]; e.Type == history.Start {
			s.Faults[e.F]++
		}
	}
	if a := s.Ops[history.FAcquire]; a.Total() > 0 {
		s.AcquireSuccess = float64(a.OK) / float64(a.Total())
	}
	return s
}

// Functions lists the functions in the summary, sorted.
func (s Summary) Functions() []string {
	out := make([]string, 0, len(s.Ops))
	for f := range s.Ops {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
