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
	// The functions are few: counted in a slice, then put in the maps.
	var ops tally
	for _, o := range h.Ops() {
		c := ops.of(o.Func())
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
	}
	for _, x := range ops.all {
		s.Ops[x.f] = x.c
	}
	var faults tally // OK counts the starts
	for _, i := range h.Marks() {
		if e := &events[i]; e.Type == history.Start {
			faults.of(e.F).OK++
		}
	}
	for _, x := range faults.all {
		s.Faults[x.f] = x.c.OK
	}
	if a := s.Ops[history.FAcquire]; a.Total() > 0 {
		s.AcquireSuccess = float64(a.OK) / float64(a.Total())
	}
	return s
}

// fnCounts are the counts of one function (SummarizePaired).
type fnCounts struct {
	f string
	c Counts
}

// tally counts per function: in a slice while the functions are few (the
// usual case), indexed by a map beyond.
type tally struct {
	all   []fnCounts
	index map[string]int
}

// tallyMax is the number of functions from which a tally indexes them.
const tallyMax = 16

// of is the counts of f, added when missing.
func (t *tally) of(f string) *Counts {
	if t.index != nil {
		if i, ok := t.index[f]; ok {
			return &t.all[i].c
		}
	} else {
		for i := range t.all {
			if t.all[i].f == f {
				return &t.all[i].c
			}
		}
	}
	t.all = append(t.all, fnCounts{f: f})
	if t.index != nil {
		t.index[f] = len(t.all) - 1
	} else if len(t.all) > tallyMax {
		t.index = make(map[string]int, 2*len(t.all))
		for i, x := range t.all {
			t.index[x.f] = i
		}
	}
	return &t.all[len(t.all)-1].c
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
