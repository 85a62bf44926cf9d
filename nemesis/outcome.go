package nemesis

import (
	"fmt"
	"strings"
	"time"
)

// Outcome says what became of one fault of a schedule in a run: whether it
// took effect, and if not, why not. A fault that did not fire leaves the run
// as if it had not been scheduled, so a report must say so.
type Outcome struct {
	// Fault is the fault's index in the schedule (faults[i]) and Kind its kind.
	Fault int  `json:"fault"`
	Kind  Kind `json:"kind"`
	// Fired reports whether the fault took effect: it started, hit at least
	// one node or link, and (a delay) delayed at least one message.
	Fired bool `json:"fired"`
	// DidNotFire says why a fault that did not fire did not (its trigger
	// never happened, it was due after the run ended, its match matched
	// nothing, ...).
	DidNotFire string `json:"did_not_fire,omitempty"`
}

// Tally is what happened to one fault during a run, in either world: what
// its Outcome is worked out from.
type Tally struct {
	// Seen counts the events that matched the trigger.
	Seen      int
	Triggered bool
	TriggerAt time.Duration
	Started   bool
	StartAt   time.Duration
	// Missed says why a fault that started had no effect ("" if it had one).
	Missed string
	// Delay is what a delay saw; nil where the messages delayed are not
	// counted (a delay a live system carries itself).
	Delay *DelayTally
	// FromIndex is the index of the first history event recorded after the
	// fault started: its end anchor counts events from there on.
	FromIndex int
	// UntilSeen counts the events that matched the end anchor; Ended is set
	// when the anchor's Nth came; Stop ends the fault early (set when it
	// starts).
	UntilSeen int
	Ended     bool
	Stop      func()
}

// DelayTally is what a delay saw: the links it was on and how many messages
// it delayed.
type DelayTally struct {
	From, To []string
	Until    time.Duration // 0: until the end of the run
	Matched  int
}

// Outcomes says what became of each fault of the schedule, in order, in a run
// that ended at end.
func (n *Nemesis) Outcomes(end time.Duration) []Outcome {
	return Outcomes(n.faults, n.tallies, end)
}

// Outcomes says what became of each of faults, in order, from their tallies,
// in a run that ended at end.
func Outcomes(faults []Fault, tallies []Tally, end time.Duration) []Outcome {
	out := make([]Outcome, len(faults))
	for i, f := range faults {
		why := tallies[i].WhyNot(f, end)
		out[i] = Outcome{Fault: i, Kind: f.Kind, Fired: why == "", DidNotFire: why}
	}
	return out
}

// WhyNot says why f did not fire in a run that ended at end, "" if it did.
func (tl *Tally) WhyNot(f Fault, end time.Duration) string {
	at := time.Duration(f.At)
	switch {
	case tl.Started && tl.Missed != "":
		return tl.Missed
	case tl.Started && tl.Delay != nil && tl.Delay.Matched == 0:
		return tl.Delay.whyNot(f, tl.StartAt)
	case tl.Started:
		return ""
	case f.After == nil:
		return fmt.Sprintf("it was due at %v, after the run ended at %v", at, end)
	case at > end:
		return fmt.Sprintf("its trigger was to be armed at %v, after the run ended at %v", at, end)
	case tl.Triggered:
		return fmt.Sprintf("its trigger happened at %v and it was due %v later, after the run ended at %v",
			tl.TriggerAt, time.Duration(f.After.Delay), end)
	}
	t := f.After
	typ := t.Type
	if typ == "" {
		typ = "ok"
	}
	since := ""
	if at > 0 {
		since = fmt.Sprintf(" at or after %v", at)
	}
	if tl.Seen == 0 {
		return fmt.Sprintf("its trigger never happened: %s recorded no %s %s%s", t.Node, t.F, typ, since)
	}
	return fmt.Sprintf("its trigger never happened: %s recorded %d %s %s%s, and the fault waits for the %s",
		t.Node, tl.Seen, t.F, typ, since, ordinal(max(t.Nth, 1)))
}

// whyNot says why a delay that started at start delayed nothing.
func (d *DelayTally) whyNot(f Fault, start time.Duration) string {
	if len(d.From) == 0 || len(d.To) == 0 {
		return fmt.Sprintf("its from %v or to %v named no node when it started at %v", f.From, f.To, start)
	}
	what := "message"
	if f.Match != "" {
		what = f.Match + " message"
	}
	window := fmt.Sprintf("from %v to the end of the run", start)
	if d.Until > 0 {
		window = fmt.Sprintf("from %v to %v", start, d.Until)
	}
	return fmt.Sprintf("it delayed no message: no %s went from %s to %s %s",
		what, strings.Join(d.From, ", "), strings.Join(d.To, ", "), window)
}

// ordinal renders 1 as "1st", 2 as "2nd", 11 as "11th".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
