package models

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/locklab/locklab/history"
)

// Result is the outcome of a check.
type Result string

// The three results. Their order of severity is Invalid > Unknown > Valid.
const (
	Valid   Result = "valid"
	Invalid Result = "invalid"
	Unknown Result = "unknown"
)

func (r Result) rank() int {
	switch r {
	case Invalid:
		return 2
	case Unknown:
		return 1
	}
	return 0
}

// Merge combines results: invalid > unknown > valid. No results merge to unknown.
func Merge(rs ...Result) Result {
	if len(rs) == 0 {
		return Unknown
	}
	out := Valid
	for _, r := range rs {
		if r.rank() > out.rank() {
			out = r
		}
	}
	return out
}

// Verdict is what one check says about a history.
type Verdict struct {
	// Check is the check's name.
	Check string `json:"check"`
	// Result is valid, invalid or unknown.
	Result Result `json:"result"`
	// Reason says, in one line, why the result is what it is.
	Reason string `json:"reason"`
	// Counterexample shows an invalid result.
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	// Stats are figures the check measured (counts, lengths).
	Stats map[string]float64 `json:"stats,omitempty"`
	// Liveness marks a liveness or availability check (its failure is not a
	// safety violation).
	Liveness bool `json:"liveness,omitempty"`
	// Exhausted names the budget that ran out ("steps" or "time") when the
	// result is unknown because of it. Only such results depend on the budget;
	// "time" results also depend on the machine. Every other result is the same
	// for any budget.
	Exhausted string `json:"exhausted,omitempty"`
	// Recoveries, for the liveness check, are the times the lock took to be
	// granted again after each fault window.
	Recoveries []Recovery `json:"recoveries,omitempty"`
	// Visualization, for an invalid linearizability check, renders Porcupine's
	// view of the violation as HTML (nil otherwise).
	Visualization *Visualization `json:"-"`
}

// Counterexample is the part of a history that shows a violation.
type Counterexample struct {
	// Explanation is the violation in plain words, one sentence per line.
	Explanation []string `json:"explanation"`
	// Events are the history events involved, in order.
	Events []history.Event `json:"events"`
	// Faults are the start and stop events of the nemesis fault windows that
	// overlap the events' time span, in order.
	Faults []history.Event `json:"faults,omitempty"`
}

// Check is one property of a history.
type Check interface {
	// Name identifies the check in verdicts, flags and reports.
	Name() string
	// Check judges the history.
	Check(events []history.Event) Verdict
}

// LivenessCheck is implemented by checks of liveness or availability.
type LivenessCheck interface {
	Check
	// Liveness reports true.
	Liveness() bool
}

// Run runs c on events; a panic inside the check becomes an unknown verdict
// with the reason, never a valid one. The events are completed first (see
// history.Complete): every check sees an operation's key and owner whichever
// of its events recorded them.
func Run(c Check, events []history.Event) Verdict {
	return RunAll([]Check{c}, events)[0]
}

// RunAll runs every check in order on the completed events; a history whose
// operations contradict themselves is unknown to every check. The history is
// paired once (history.Pair) and every check reads the same paired form.
func RunAll(checks []Check, events []history.Event) []Verdict {
	h, err := history.Pair(events)
	return RunPaired(checks, h, err)
}

// RunPaired is RunAll on a history already paired by history.Pair (err is
// Pair's error: a malformed history is unknown to every check).
func RunPaired(checks []Check, h *history.Paired, err error) []Verdict {
	out := make([]Verdict, 0, len(checks))
	for _, c := range checks {
		if err != nil {
			out = append(out, Verdict{Check: c.Name(), Result: Unknown, Liveness: isLivenessCheck(c),
				Reason: fmt.Sprintf("the history is malformed: %v", err)})
			continue
		}
		out = append(out, run(c, h))
	}
	return out
}

// AuditCheck is implemented by checks that judge the servers' own records
// rather than the history (raftkv's raft-audit): they are given no events,
// so a run need not make the completed copy of its history for them.
type AuditCheck interface {
	Check
	// ReadsNoHistory reports true.
	ReadsNoHistory() bool
}

func isLivenessCheck(c Check) bool {
	lc, ok := c.(LivenessCheck)
	return ok && lc.Liveness()
}

// run runs c on a completed history.
func run(c Check, h *history.Paired) (v Verdict) {
	isLiveness := isLivenessCheck(c)
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Check: c.Name(), Result: Unknown, Liveness: isLiveness,
				Reason: fmt.Sprintf("the check crashed: %v (at %s)", r, panicSite())}
		}
	}()
	if pc, ok := c.(pairedCheck); ok {
		v = pc.checkPaired(h)
	} else if ac, ok := c.(AuditCheck); ok && ac.ReadsNoHistory() {
		v = c.Check(nil)
	} else {
		v = c.Check(h.Events())
	}
	v.Check, v.Liveness = c.Name(), isLiveness
	return v
}

// Overall merges the results of verdicts.
func Overall(vs []Verdict) Result {
	rs := make([]Result, len(vs))
	for i, v := range vs {
		rs[i] = v.Result
	}
	return Merge(rs...)
}

// panicSite names the function that panicked, from the stack of a recovered
// panic, so that a crashed check's reason points at the bug.
func panicSite() string {
	lines := strings.Split(string(debug.Stack()), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+3 < len(lines) {
			return strings.TrimSpace(lines[i+2]) + " " + strings.TrimSpace(lines[i+3])
		}
	}
	return "unknown location"
}
