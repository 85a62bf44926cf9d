package shrink

import (
	"slices"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// anchor ties each fault that starts at a fixed time to the step of the
// lock's protocol it landed on, in the current failing run: a fault that
// began while a client held the lock starts right after that client's
// acquire returned ok (plus the time between them); any other right after the
// latest event of a client before it. The anchored run is the same run (each
// fault still starts when it did), but the failure no longer hangs on the
// clock: when delta debugging then removes a fault that only shifted the
// clients' timing (a partition that made a client retry later, say), the
// faults that matter still land in the same protocol phase instead of a
// second too early. Without anchors, such a failure needs every fault that
// moved the clients to the right place at the right moment, and ddmin cannot
// remove any of them.
//
// The whole schedule is anchored at once when that run still fails;
// otherwise fault by fault, keeping each anchor that still fails. Faults
// that already have a trigger, and faults that did not fire, stay as they
// are.
func (s *shrinker) anchor(cur scenario.Test) scenario.Test {
	if s.runs >= s.maxRuns || len(cur.Schedule.Faults) == 0 {
		return cur
	}
	r, err := harness.Run(cur)
	s.runs++
	if err != nil {
		return cur
	}
	fired := make([]bool, len(cur.Schedule.Faults))
	for _, o := range r.FaultOutcomes {
		if o.Fault >= 0 && o.Fault < len(fired) {
			fired[o.Fault] = o.Fired
		}
	}
	holdings := models.Holdings(r.Events)
	anchored := slices.Clone(cur.Schedule.Faults)
	changed := []int{}
	for i, f := range cur.Schedule.Faults {
		if f.After != nil || !fired[i] {
			continue
		}
		if tr, at, ok := anchorOf(time.Duration(f.At), r.Events, holdings); ok {
			g := cloneFault(f)
			g.After, g.At = tr, nemesis.Duration(at)
			anchored[i] = g
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		return cur
	}
	if c := withFaults(cur, anchored); s.fails(c) {
		return c
	}
	for _, i := range changed {
		if c := withFault(cur, i, anchored[i]); s.fails(c) {
			cur = c
		}
	}
	return cur
}

// anchorOf is the trigger that starts a fault due at t right after the
// protocol step it landed on, and the time its trigger is armed (the step's
// own time): the acquire of the client that held the lock at t (the latest
// grant when two held it), else the latest event of any client before t. ok
// is false when no client event precedes t.
func anchorOf(t time.Duration, events []history.Event, holdings []models.Holding) (*nemesis.Trigger, time.Duration, bool) {
	at := int64(t)
	var anchor *history.Event
	for i := range holdings {
		h := &holdings[i]
		if h.Start <= at && at <= h.End && (anchor == nil || h.Start >= anchor.Time) && h.Acquired.F == history.FAcquire {
			anchor = &h.Acquired
		}
	}
	if anchor == nil {
		for i := len(events) - 1; i >= 0; i-- {
			e := &events[i]
			if e.Time <= at && e.Process != history.NemesisProcess && slices.Contains(nemesis.TriggerFunctions, e.F) &&
				slices.Contains(nemesis.TriggerTypes, e.Type) {
				anchor = e
				break
			}
		}
	}
	if anchor == nil {
		return nil, 0, false
	}
	tr := &nemesis.Trigger{Node: anchor.Node, F: anchor.F, Delay: nemesis.Duration(at - anchor.Time)}
	if anchor.Type != history.OK {
		tr.Type = string(anchor.Type)
	}
	return tr, time.Duration(anchor.Time), true
}
