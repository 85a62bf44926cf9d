package nemesis

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
)

// This file is the fault interpreter of both worlds, the simulator's
// (Nemesis) and live mode's: how a fault starts (Start) and the sentences and
// windows its history events carry. Each world only performs the faults
// (Performer); names.go checks and resolves a fault's names, trigger.go
// starts a fault at its trigger, outcome.go says what became of it.

// Window records the window of a fault that starts now: record(Start) at
// once, and record(Stop) after d (at once when d is 0 and the fault is
// instantaneous; never when open), running undo (when not nil) just before
// the stop. after runs a function d later on the world's clock. It returns
// what ends the window early (an end anchor): it undoes the fault and
// records the stop at once, unless the window has already stopped.
func Window(record func(history.Type), after func(d time.Duration, fn func()), d time.Duration, open bool, undo func()) (stop func()) {
	record(history.Start)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if undo != nil {
				undo()
			}
			record(history.Stop)
		})
	}
	switch {
	case d > 0:
		after(d, stop)
	case !open:
		// An instantaneous fault (a clock jump that stays) ends at once,
		// and is not undone.
		once.Do(func() { record(history.Stop) })
	}
	return stop
}

// Detail is the sentence the history's events of a pause, crash, clock jump
// or clock drift carry ("pause for 5s", "crash, restart after 1s", ...).
func (f Fault) Detail() string {
	if f.Until != nil {
		return f.untilDetail()
	}
	d := int64(f.Duration)
	switch f.Kind {
	case Pause:
		return "pause for " + history.FormatDuration(d)
	case Crash:
		if d > 0 {
			return "crash, restart after " + history.FormatDuration(d)
		}
		return "crash, no restart"
	case ClockJump:
		detail := "wall clock jumps " + history.FormatDuration(int64(f.Amount))
		if d > 0 {
			detail += ", back after " + history.FormatDuration(d)
		}
		return detail
	case ClockDrift:
		return fmt.Sprintf("clock drift %+.3f", f.Drift)
	}
	panic(fmt.Sprintf("nemesis: no detail for fault kind %q", f.Kind))
}

// untilDetail is Detail for a fault with an end anchor ("pause until c2's
// 1st read ok +1ms (at most 30s)").
func (f Fault) untilDetail() string {
	end := "until " + f.Until.Words()
	if f.Duration > 0 {
		end += " (at most " + history.FormatDuration(int64(f.Duration)) + ")"
	}
	switch f.Kind {
	case Pause:
		return "pause " + end
	case Crash:
		return "crash, restart " + end
	case ClockJump:
		return "wall clock jumps " + history.FormatDuration(int64(f.Amount)) + ", back " + end
	case ClockDrift:
		return fmt.Sprintf("clock drift %+.3f ", f.Drift) + end
	}
	panic(fmt.Sprintf("nemesis: no detail for fault kind %q", f.Kind))
}

// Words says the trigger's event in words: "c2's 1st read ok", with
// " +1ms" for a delay.
func (t Trigger) Words() string {
	s := fmt.Sprintf("%s's %s %s %s", t.Node, ordinal(max(t.Nth, 1)), t.F, t.eventType())
	if t.Delay > 0 {
		s += " +" + history.FormatDuration(int64(t.Delay))
	}
	return s
}

// DelayDetail is the sentence the history's events of delay f carry, from
// and to being the nodes its ends named when it started.
func (f Fault) DelayDetail(from, to []string) string {
	detail := fmt.Sprintf("delay %v -> %v by %s", from, to, history.FormatDuration(int64(f.Amount)))
	if f.Match != "" {
		detail += " (" + f.Match + ")"
	}
	if f.Count > 0 {
		detail += fmt.Sprintf(", %d message(s)", f.Count)
	}
	return detail
}

// DelayWindow is how long the window the history shows for delay f lasts:
// its duration, or for a count-limited delay the delay itself; 0 (a delay
// with neither) lasts until the end of the run.
func (f Fault) DelayWindow() time.Duration {
	if f.Duration == 0 && f.Count > 0 {
		return time.Duration(f.Amount)
	}
	return time.Duration(f.Duration)
}

// Performer does faults in one world to its nodes (of type N), for Start:
// the simulator's network and nodes, or live mode's processes and proxies.
// Each fault method does its fault to the nodes now and returns what undoes
// it (nil: nothing to undo).
type Performer[N comparable] interface {
	// Now is the time on the run's clock.
	Now() time.Duration
	// Nodes resolves names to nodes as the fault starts (see Resolve); All
	// lists every node of the run; Name is a node's name.
	Nodes(names []string) []N
	All() []N
	Name(x N) string
	Pause(ns []N) (undo func())
	Crash(ns []N) (undo func())
	JumpClock(ns []N, d time.Duration) (undo func())
	SetDrift(ns []N, drift float64) (undo func())
	// Cut blocks each link (from, to), dropping what it carries when lossy.
	Cut(links [][2]N, lossy bool) (undo func())
	// Delay delays the messages delay f names from each of from to each of
	// to, for f's duration from now (0: to the end of the run); it returns
	// what counts the messages it delays (nil: they are not counted).
	Delay(f Fault, from, to []N) *DelayTally
	// Window records the window of a fault (see Window) and returns what
	// ends it early.
	Window(k Kind, targets []string, detail string, d time.Duration, open bool, undo func()) (stop func())
}

// Start starts fault f in the world p performs: the one interpreter of a
// fault for both worlds. It returns why the fault had no effect ("" if it
// had one, so far), for a delay what counts the messages it delays, and
// what ends the fault early (for its end anchor, Until).
func Start[N comparable](p Performer[N], f Fault) (missed string, delay *DelayTally, stop func()) {
	d := time.Duration(f.Duration)
	// A fault with an end anchor stays until it, or its duration if sooner.
	until := f.Until != nil
	names := func(ns []N) []string {
		out := make([]string, len(ns))
		for i, x := range ns {
			out[i] = p.Name(x)
		}
		return out
	}
	var ns []N
	switch f.Kind {
	case Pause, Crash, ClockJump, ClockDrift:
		if ns = p.Nodes(f.Targets); len(ns) == 0 {
			missed = fmt.Sprintf("its targets %v named no node when it started at %v", f.Targets, p.Now())
		}
	}
	switch f.Kind {
	case Pause:
		stop = p.Window(Pause, names(ns), f.Detail(), d, until, p.Pause(ns))
	case Crash:
		stop = p.Window(Crash, names(ns), f.Detail(), d, true, p.Crash(ns))
	case ClockJump:
		stop = p.Window(ClockJump, names(ns), f.Detail(), d, until, p.JumpClock(ns, time.Duration(f.Amount)))
	case ClockDrift:
		stop = p.Window(ClockDrift, names(ns), f.Detail(), d, true, p.SetDrift(ns, f.Drift))
	case Partition:
		c := PlanCut(f, p.Nodes, p.All(), p.Name)
		detail := c.Detail
		if f.Lossy {
			detail += ", lossy"
		}
		if until {
			detail += ", until " + f.Until.Words()
		}
		if len(c.Links) == 0 {
			missed = fmt.Sprintf("it cut no link when it started at %v (%s)", p.Now(), detail)
		}
		stop = p.Window(Partition, c.Targets, detail, d, true, p.Cut(c.Links, f.Lossy))
	case Delay:
		from, to := p.Nodes(f.From), p.Nodes(f.To)
		delay = p.Delay(f, from, to)
		fromNames, toNames := names(from), names(to)
		stop = p.Window(Delay, append(slices.Clone(fromNames), toNames...), f.DelayDetail(fromNames, toNames), f.DelayWindow(), true, nil)
	default:
		panic(fmt.Sprintf("nemesis: unknown fault kind %q", f.Kind))
	}
	return missed, delay, stop
}
