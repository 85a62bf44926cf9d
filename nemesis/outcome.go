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

// tally is what happened to one fault during the run.
type tally struct {
	seen      int // events that matched the trigger
	triggered bool
	triggerAt time.Duration
	started   bool
	startAt   time.Duration
	// missed says why a fault that started had no effect ("" if it had one).
	missed string
	delay  *delayTally
}

// delayTally is what a delay saw: the links it was on and how many messages
// it delayed.
type delayTally struct {
	from, to []string
	until    time.Duration // 0: until the end of the run
	matched  int
}

// Outcomes says what became of each fault of the schedule, in order, in a run
// that ended at end.
func (n *Nemesis) Outcomes(end time.Duration) []Outcome {
	out := make([]Outcome, len(n.faults))
	for i, f := range n.faults {
		why := n.tallies[i].whyNot(f, end)
		out[i] = Outcome{Fault: i, Kind: f.Kind, Fired: why == "", DidNotFire: why}
	}
	return out
}

// whyNot says why f did not fire, "" if it did.
func (tl *tally) whyNot(f Fault, end time.Duration) string {
	at := time.Duration(f.At)
	switch {
	case tl.started && tl.missed != "":
		return tl.missed
	case tl.started && tl.delay != nil && tl.delay.matched == 0:
		return tl.delay.whyNot(f, tl.startAt)
	case tl.started:
		return ""
	case f.After == nil:
		return fmt.Sprintf("it was due at %v, after the run ended at %v", at, end)
	case at > end:
		return fmt.Sprintf("its trigger was to be armed at %v, after the run ended at %v", at, end)
	case tl.triggered:
		return fmt.Sprintf("its trigger happened at %v and it was due %v later, after the run ended at %v",
			tl.triggerAt, time.Duration(f.After.Delay), end)
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
	if tl.seen == 0 {
		return fmt.Sprintf("its trigger never happened: %s recorded no %s %s%s", t.Node, t.F, typ, since)
	}
	return fmt.Sprintf("its trigger never happened: %s recorded %d %s %s%s, and the fault waits for the %s",
		t.Node, tl.seen, t.F, typ, since, ordinal(max(t.Nth, 1)))
}

// whyNot says why a delay that started at start delayed nothing.
func (d *delayTally) whyNot(f Fault, start time.Duration) string {
	if len(d.from) == 0 || len(d.to) == 0 {
		return fmt.Sprintf("its from %v or to %v named no node when it started at %v", f.From, f.To, start)
	}
	what := "message"
	if f.Match != "" {
		what = f.Match + " message"
	}
	window := fmt.Sprintf("from %v to the end of the run", start)
	if d.until > 0 {
		window = fmt.Sprintf("from %v to %v", start, d.until)
	}
	return fmt.Sprintf("it delayed no message: no %s went from %s to %s %s",
		what, strings.Join(d.from, ", "), strings.Join(d.to, ", "), window)
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
