package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

// WeakFault is a fault kind of a run none of whose faults reached the
// design's timeout for it: a pause shorter than the lease keeps the holder's
// lock, so the run says little about pauses.
type WeakFault struct {
	// Kind is the fault kind; Fired how many of its faults fired.
	Kind  string
	Fired int
	// Longest is the longest of them (a pause's or a cut's duration, a
	// delay's amount), Fault its index in the schedule, Targets whom it hit.
	Longest time.Duration
	Fault   int
	Targets string
	// Timeout is the design's timeout (Option's value), What names it.
	Timeout time.Duration
	Option  string
	What    string
}

// String says it: "no pause reached the Lease (lease-duration 15s): the
// longest of 6 was 14.65s, on c3".
func (w WeakFault) String() string {
	of := fmt.Sprintf("the longest of %d", w.Fired)
	if w.Fired == 1 {
		of = "the only one"
	}
	on := ""
	if w.Targets != "" {
		on = ", on " + w.Targets
	}
	return fmt.Sprintf("no %s reached %s (%s %s): %s was %s%s", w.Kind, w.What, w.Option, history.FormatDuration(int64(w.Timeout)),
		of, history.FormatDuration(int64(w.Longest)), on)
}

// faultLength is what a fault of kind k is measured by against a timeout:
// a delay's amount, any other fault's duration.
func faultLength(f nemesis.Fault) time.Duration {
	if f.Kind == nemesis.Delay {
		return time.Duration(f.Amount)
	}
	return time.Duration(f.Duration)
}

// WeakFaults are the fault kinds of the run whose fired faults all stayed
// shorter than a timeout the system declares for them (system.Timeout), in
// the order of the declarations; none when the system declares none. A
// fault ended by an event (until) is never counted as short: its length is
// the run's, not the schedule's.
func WeakFaults(t scenario.Test, s nemesis.Schedule, outcomes []nemesis.Outcome) []WeakFault {
	t = t.WithDefaults()
	sys, err := system.Find(t.System)
	if err != nil || len(sys.Timeouts) == 0 {
		return nil
	}
	opts := t.Effective().SystemOptions
	var out []WeakFault
	for _, to := range sys.Timeouts {
		timeout, err := time.ParseDuration(opts[to.Option])
		if err != nil || timeout <= 0 {
			continue
		}
		for _, kind := range to.Kinds {
			w := WeakFault{Kind: kind, Fault: -1, Timeout: timeout, Option: to.Option, What: to.What}
			reached := false
			for _, o := range outcomes {
				if !o.Fired || string(o.Kind) != kind || o.Fault < 0 || o.Fault >= len(s.Faults) {
					continue
				}
				f := s.Faults[o.Fault]
				w.Fired++
				if f.Until != nil {
					// Ended by an event of the run: its length is not the
					// schedule's to tell, so it is not called too short.
					reached = true
					continue
				}
				if l := faultLength(f); l >= timeout {
					reached = true
				} else if w.Fault < 0 || l > w.Longest {
					w.Longest, w.Fault = l, o.Fault
					w.Targets = strings.Join(faultTargets(f), ", ")
				}
			}
			if w.Fired > 0 && !reached && !slices.ContainsFunc(out, func(x WeakFault) bool { return x.Kind == kind }) {
				out = append(out, w)
			}
		}
	}
	return out
}

// faultTargets are whom a fault hit as its schedule names them.
func faultTargets(f nemesis.Fault) []string {
	switch {
	case len(f.Targets) > 0:
		return f.Targets
	case len(f.From) > 0:
		return []string{strings.Join(f.From, ", ") + " → " + strings.Join(f.To, ", ")}
	}
	var out []string
	for _, g := range f.Groups {
		out = append(out, "["+strings.Join(g, " ")+"]")
	}
	return out
}

// weakWarning is the warning of a run with weak faults ("" when none).
func weakWarning(weak []WeakFault) string {
	if len(weak) == 0 {
		return ""
	}
	var parts, kinds []string
	for _, w := range weak {
		parts = append(parts, w.String())
		kinds = append(kinds, w.Kind+"s")
	}
	return fmt.Sprintf("faults too short to test the design: %s; a holder keeps its lock through such faults, "+
		"so this run says little about %s (give longer ones with --nemesis-file, or a shorter timeout with -o)",
		strings.Join(parts, "; "), strings.Join(kinds, " or "))
}
