package sim

// observer is what Observe installed: fn, called every `every` events.
type observer struct {
	every, left uint64
	fn          func()
}

// Observe makes RunUntil call fn after every `every` events it executes (every
// 0 removes the observer). fn runs between events, outside any node: it may
// read Now and Processed and call Stop, and must not change the world (no
// scheduling, no faults, no randomness), so a run with an observer executes
// exactly the events of a run without one. The harness uses it to report
// progress and to bound a run's memory.
func (w *World) Observe(every uint64, fn func()) {
	if every == 0 || fn == nil {
		w.obs = nil
		return
	}
	w.obs = &observer{every: every, left: every, fn: fn}
}

// Stop makes RunUntil return before its next event, leaving the clock at the
// last event executed. Events stay queued: a later RunUntil carries on. It is
// how an observer ends a run early.
func (w *World) Stop() { w.stopped = true }

// Stopped reports whether Stop ended the last RunUntil early.
func (w *World) Stopped() bool { return w.stopped }
