package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// Faults is what a run asked of its nemesis, what it scheduled and what of
// that took effect, per fault kind: reports.Faults, the record results.json
// keeps, which TallyFaults fills in.
type Faults = reports.Faults

// FaultsOf tallies the run's faults: what it asked for, what was scheduled and
// what fired.
func FaultsOf(r scenario.Result) Faults {
	end := r.Ended
	if end == 0 {
		end = r.Test.Time
	}
	return TallyFaults(r.Test, r.Schedule, r.FaultOutcomes, end)
}

// TallyFaults tallies the faults of a run of t with schedule s whose faults
// ended as outcomes, in a run that stopped at end.
func TallyFaults(t scenario.Test, s nemesis.Schedule, outcomes []nemesis.Outcome, end time.Duration) Faults {
	t = t.WithDefaults()
	f := Faults{Scheduled: map[string]int{}, Fired: map[string]int{}}
	if t.Nemesis != "none" {
		f.Nemesis = t.Nemesis
	}
	for _, x := range s.Faults {
		f.Scheduled[string(x.Kind)]++
	}
	for _, o := range outcomes {
		if o.Fired {
			f.Fired[string(o.Kind)]++
		}
	}
	asked := f.Nemesis != "" || len(s.Faults) > 0
	switch {
	case !asked:
	case f.TotalFired() == 0:
		f.NoneFired = true
		f.Warning = noneFired(f, s, end, t.Time)
	default:
		f.Missing, f.Warning = missingKinds(f, s, end)
		weak := WeakFaults(t, s, outcomes)
		for _, w := range weak {
			f.Weak = append(f.Weak, w.String())
		}
		f.WeakWarning = weakWarning(weak)
	}
	return f
}

// noneFired is the warning of a run that asked for faults and saw none.
func noneFired(f Faults, s nemesis.Schedule, end, length time.Duration) string {
	const so = ", so the verdicts judge a run without faults"
	n := len(s.Faults)
	switch {
	case n == 0:
		return fmt.Sprintf("no fault fired: %s drew none in %s%s", randomNemesis(f.Nemesis), runLength(length), so)
	case n == 1:
		return fmt.Sprintf("1 fault scheduled, it did not fire (%s)%s", whyNotFired(s, allIndexes(n), end), so)
	}
	return fmt.Sprintf("%d faults scheduled, none fired (%s)%s", n, whyNotFired(s, allIndexes(n), end), so)
}

// randomNemesis names a random nemesis: "the random pause nemesis", "the
// random nemesis" (every kind: random, all).
func randomNemesis(n string) string {
	if n == "random" || n == "all" {
		return "the random nemesis"
	}
	return "the random " + n + " nemesis"
}

// DrewNoFault is the warning of a run about to start whose random nemesis
// drew no fault ("" when it drew some, or the run asked for none): a live
// run says it before it spends its time.
func DrewNoFault(t scenario.Test, s nemesis.Schedule) string {
	t = t.WithDefaults()
	if t.Nemesis == "none" || len(s.Faults) > 0 {
		return ""
	}
	return fmt.Sprintf("%s drew no fault in %s: this run will see none, so its verdicts will judge the system without faults "+
		"(another --seed or a longer --time draws some)", randomNemesis(t.Nemesis), runLength(t.Time))
}

// missingKinds are the groups of a --nemesis list (a kind, "clock") none of
// whose faults fired, and the warning that names them; nil and "" when the
// run asked for a swarm ("random", "all") or every group fired.
func missingKinds(f Faults, s nemesis.Schedule, end time.Duration) ([]string, string) {
	if f.Nemesis == "" || f.Nemesis == "random" || f.Nemesis == "all" {
		return nil, ""
	}
	var missing, said []string
	for _, group := range strings.Split(f.Nemesis, ",") {
		group = strings.TrimSpace(group)
		kinds, err := nemesis.ParseKinds(group)
		if err != nil || group == "all" {
			continue // a validated test has none; "all" is a swarm
		}
		scheduled := 0
		var idx []int
		for i, x := range s.Faults {
			if slices.Contains(kinds, x.Kind) {
				scheduled++
				idx = append(idx, i)
			}
		}
		fired := 0
		for _, k := range kinds {
			fired += f.Fired[string(k)]
		}
		switch {
		case fired > 0:
			continue
		case scheduled == 0:
			said = append(said, "drew no "+group)
		default:
			said = append(said, fmt.Sprintf("fired no %s (%d scheduled, %s)", group, scheduled, whyNotFired(s, idx, end)))
		}
		missing = append(missing, group)
	}
	if len(missing) == 0 {
		return nil, ""
	}
	return missing, fmt.Sprintf("--nemesis %s %s, so the verdicts say nothing about %s", f.Nemesis,
		strings.Join(said, " and "), strings.Join(missing, " or "))
}

// Why a scheduled fault did not fire, in classes a warning can count; the
// fault outcomes (results.json, the summary's "did not fire" lines) say it
// fault by fault.
const (
	notFiredEnded   = "due after the run ended"
	notFiredTrigger = "waiting for a trigger that did not come in time"
	notFiredNoOp    = "without effect when it started"
)

// whyNotFired sums up why the faults of s at indexes idx, none of which
// fired, did not: "due after the run ended" (one), "both ..." (two), "all
// ..." (more), or the count of each class ("1 due after the run ended, 2
// waiting for a trigger that did not come in time").
func whyNotFired(s nemesis.Schedule, idx []int, end time.Duration) string {
	counts := map[string]int{}
	var order []string
	for _, i := range idx {
		c := notFiredClass(s.Faults[i], end)
		if counts[c] == 0 {
			order = append(order, c)
		}
		counts[c]++
	}
	slices.Sort(order)
	if len(order) == 1 {
		switch n := len(idx); {
		case n == 1:
			return order[0]
		case n == 2:
			return "both " + order[0]
		default:
			return "all " + order[0]
		}
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[c], c)
	}
	return strings.Join(parts, ", ")
}

// notFiredClass is why fault f, which did not fire, did not in a run that
// stopped at end: its trigger did not come in time, it was due after the
// end, or else it started and had no effect (its targets named no node, it
// cut no link, it delayed no message).
func notFiredClass(f nemesis.Fault, end time.Duration) string {
	switch {
	case f.After != nil:
		return notFiredTrigger
	case time.Duration(f.At) >= end:
		return notFiredEnded
	}
	return notFiredNoOp
}

// allIndexes is 0..n-1.
func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// runLength prints a run's length as the --time flag takes it: "10s",
// "1m" (not "1m0s").
func runLength(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
