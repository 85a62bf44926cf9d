package nemesis

import (
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// Counts reports whether e is an event f's trigger counts: an event of the
// trigger's client, function and type (ok by default), recorded at or after
// the time the trigger is armed, and not the nemesis's own. The fault starts
// at the trigger's Nth such event.
func (f Fault) Counts(e history.Event) bool {
	return f.counts(e, f.After.eventType())
}

func (f Fault) counts(e history.Event, typ history.Type) bool {
	t := f.After
	return e.Process != history.NemesisProcess && e.Node == t.Node && e.F == t.F && e.Type == typ &&
		time.Duration(e.Time) >= time.Duration(f.At)
}

// eventType is the type of the events the trigger follows (ok by default).
func (t *Trigger) eventType() history.Type {
	if t.Type == "" {
		return history.OK
	}
	return history.Type(t.Type)
}

// Observer is the history observer that starts f (which has a trigger) in
// either world: it counts in tl the events f counts and, at the trigger's
// Nth, marks tl triggered at now() and calls start, at once (inside the
// recording client's own step, so that the fault takes hold before the
// client does anything else) or after the trigger's delay (after runs a
// function that much later on the world's clock). mu, when not nil, guards
// tl (live mode's clients record from their own goroutines).
func (f Fault) Observer(tl *Tally, mu sync.Locker, now func() time.Duration, after func(time.Duration, func()), start func()) func(history.Event) {
	typ, nth, delay := f.After.eventType(), max(f.After.Nth, 1), time.Duration(f.After.Delay)
	return func(e history.Event) {
		if !f.counts(e, typ) {
			return
		}
		if mu != nil {
			mu.Lock()
		}
		fire := false
		if !tl.Triggered {
			tl.Seen++
			if fire = tl.Seen >= nth; fire {
				tl.Triggered, tl.TriggerAt = true, now()
			}
		}
		if mu != nil {
			mu.Unlock()
		}
		switch {
		case !fire:
		case delay > 0:
			after(delay, start)
		default:
			start()
		}
	}
}

// EndObserver is the history observer that ends f (which has an end anchor,
// Until) in either world: it counts in tl the events of the anchor recorded
// after f started (from event tl.FromIndex on) and, at the anchor's Nth,
// marks tl ended and calls tl.Stop at once (inside the recording client's
// own step: the paused holder resumes before that client does anything
// else) or after the anchor's delay. A fault that has already stopped (its
// duration ran out first) stays stopped. mu, when not nil, guards tl.
func (f Fault) EndObserver(tl *Tally, mu sync.Locker, after func(time.Duration, func())) func(history.Event) {
	t := f.Until
	typ, nth, delay := t.eventType(), max(t.Nth, 1), time.Duration(t.Delay)
	return func(e history.Event) {
		if e.Process == history.NemesisProcess || e.Node != t.Node || e.F != t.F || e.Type != typ {
			return
		}
		if mu != nil {
			mu.Lock()
		}
		fire := false
		if tl.Started && !tl.Ended && e.Index >= tl.FromIndex {
			tl.UntilSeen++
			fire = tl.UntilSeen >= nth
			tl.Ended = fire
		}
		stop := tl.Stop
		if mu != nil {
			mu.Unlock()
		}
		switch {
		case !fire || stop == nil:
		case delay > 0:
			after(delay, stop)
		default:
			stop()
		}
	}
}
