package scenario

import (
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
)

// TokensMonotonic asserts that fencing tokens increase in the real-time order
// of grants, per key: a grant completed before another acquire was invoked
// has a lower token than that acquire gets, unless both are the same
// acquirer's nested (reentrant) grant with the same token.
func TokensMonotonic(r Result) error {
	type grant struct {
		token uint64
		owner string
	}
	done := map[string]grant{} // key -> highest completed grant
	floor := map[int]grant{}   // process -> done[key] when it invoked its acquire
	var bad []string
	for _, e := range r.Events {
		if e.F != history.FAcquire {
			continue
		}
		switch {
		case e.Type == history.Invoke:
			floor[e.Process] = done[e.Key]
		case e.Type == history.OK && e.Token != nil:
			f, t := floor[e.Process], *e.Token
			if f.token != 0 && (t < f.token || (t == f.token && f.owner != e.Owner)) {
				bad = append(bad, fmt.Sprintf("%s got token %d on %q after a grant of token %d to %s had completed",
					e.Node, t, e.Key, f.token, f.owner))
			}
			if t > done[e.Key].token {
				done[e.Key] = grant{t, e.Owner}
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("fencing tokens not monotonic (%d times), first: %s", len(bad), bad[0])
	}
	return nil
}

// Gap is a stretch of a run in which no acquire succeeded.
type Gap struct {
	// From is the completion of the last successful acquire before the gap
	// (0: the start of the run); To is the completion of the next one.
	From, To time.Duration
}

// Length is the gap's duration.
func (g Gap) Length() time.Duration { return g.To - g.From }

// AvailabilityGaps lists the stretches between consecutive successful
// acquires (any client, any key), longest first.
func AvailabilityGaps(events []history.Event) []Gap {
	var gaps []Gap
	var last time.Duration
	for _, e := range events {
		if e.F == history.FAcquire && e.Type == history.OK {
			gaps = append(gaps, Gap{From: last, To: time.Duration(e.Time)})
			last = time.Duration(e.Time)
		}
	}
	slices.SortStableFunc(gaps, func(a, b Gap) int { return int(b.Length() - a.Length()) })
	return gaps
}

// FaultGap is the gap in service around the first fault of a run: the
// stretch between successful acquires that contains the fault's start.
func FaultGap(events []history.Event) (Gap, bool) {
	var start int64 = -1
	for _, e := range events {
		if e.Type == history.Start {
			start = e.Time
			break
		}
	}
	if start < 0 {
		return Gap{}, false
	}
	for _, g := range AvailabilityGaps(events) {
		if g.From <= time.Duration(start) && time.Duration(start) <= g.To {
			return g, true
		}
	}
	return Gap{}, false
}

// AvailabilityGapWithin asserts that the gap in service around the first
// fault lasted between lo and hi.
func AvailabilityGapWithin(lo, hi time.Duration) func(Result) error {
	return func(r Result) error {
		g, ok := FaultGap(r.Events)
		switch {
		case !ok:
			return fmt.Errorf("availability gap: no successful acquire around the fault")
		case g.Length() < lo || g.Length() > hi:
			return fmt.Errorf("availability gap %v (from %v to %v), expected between %v and %v: %w", g.Length(),
				g.From, g.To, lo, hi, ErrTiming)
		}
		return nil
	}
}
