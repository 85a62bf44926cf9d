package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Story tells a run in plain words for a person reading a counterexample:
// which faults (and system events such as a failover) happened when; for the
// first time two clients believed they held the same lock, who held it, how
// each grant came about, with which token, until when, and what the storage
// did with their reads and writes; how the tokens of successive grants were
// ordered; when nothing overlapped, what the faults did to the clients
// they hit; and the run's notes (Result.Notes).
func Story(r Result) []string { return StoryOf(r, "") }

// StoryOf is Story told around the first overlap that shows a violation of
// kind (ViolationKinds; the first overlap when none does, or kind is ""), so
// that a run shrunk to keep a kind tells that kind: a release by a client
// that no longer held the lock is named, with the grant it deleted.
func StoryOf(r Result, kind string) []string {
	ev := r.Events
	out := faultLines(ev)
	overlaps := models.Overlaps(models.Holdings(ev))
	if len(overlaps) == 0 {
		out = append(out, "No two clients believed they held the same lock at once.")
		out = append(out, aftermath(ev)...)
	} else {
		o := overlaps[0]
		if kind != "" {
			windows, clients := faultWindowsOf(ev, nil), clientsOf(ev)
			for _, c := range overlaps {
				if slices.Contains(causes(c, windows, ev, clients), kind) {
					o = c
					break
				}
			}
		}
		out = append(out, overlapLines(ev, o, len(overlaps))...)
		if kind == KindNonOwnerRelease {
			out = append(out, nonOwnerLines(ev, o)...)
		}
	}
	out = append(out, tokenOrder(ev)...)
	if sold, stock, err := ItemsSold(r); err == nil && stock > 0 && r.Test.Workload == "stock" {
		verdict := "within the stock"
		if sold > stock {
			verdict = "OVERSOLD"
		}
		out = append(out, fmt.Sprintf("The shop sold %d item(s) of the %d it had: %s.", sold, stock, verdict))
	}
	for _, n := range r.Notes {
		out = append(out, n+".") // notes carry no full stop: the report adds its own
	}
	return out
}

// at renders a history time.
func at(ns int64) string { return history.FormatTime(ns) }

// faultLines lists every fault and system event as it started.
func faultLines(ev []history.Event) []string {
	var out []string
	for _, e := range ev {
		if e.Type == history.Start {
			out = append(out, fmt.Sprintf("At %s: %s on %s — %s.", at(e.Time), e.F, strings.Join(e.Targets, ", "), e.Detail))
		}
	}
	if len(out) == 0 {
		return []string{"No faults."}
	}
	return out
}

// overlapLines tells the first overlap.
func overlapLines(ev []history.Event, o models.Overlap, total int) []string {
	out := []string{fmt.Sprintf("Two clients held %q at once from %s to %s (%s; %d overlap(s) in all):",
		o.A.Key, at(o.Start), at(o.End), o.Length().Round(time.Millisecond), total)}
	out = append(out, "  "+grantLine(o.A), "  "+grantLine(o.B))
	out = append(out, "  What they did meanwhile:")
	for _, e := range storageOps(ev, o) {
		out = append(out, "    "+opLine(e))
	}
	if o.A.Token != nil && o.B.Token != nil {
		a, b := *o.A.Token, *o.B.Token
		switch {
		case b < a:
			out = append(out, fmt.Sprintf("  %s's grant came after %s's but carries the smaller token (%d < %d): the tokens are not ordered by grant, so a fenced storage cannot tell the stale holder.",
				o.B.Node, o.A.Node, b, a))
		case b > a:
			out = append(out, fmt.Sprintf("  Tokens increase with the grants (%d, then %d): a storage fencing with them refuses %s's operations only after it has checked one of %s's (reads are checked only with fence-reads).",
				a, b, o.A.Node, o.B.Node))
		default:
			out = append(out, fmt.Sprintf("  Both grants carry token %d: a fenced storage accepts both.", a))
		}
	}
	return out
}

// nonOwnerLines tell the release, by a third client, of a lock that had
// passed from it to o's earlier holder (nonOwnerRelease).
func nonOwnerLines(ev []history.Event, o models.Overlap) []string {
	rel, ok := nonOwnerRelease(o, ev)
	if !ok {
		return nil
	}
	done, inv := rel[0], rel[1]
	own := "the history shows no grant of it"
	for i := len(ev) - 1; i >= 0; i-- {
		if e := &ev[i]; e.Time <= done.Time && e.F == history.FAcquire && e.Type == history.OK && e.Key == done.Key &&
			e.Node == done.Node && (done.Owner == "" || e.Owner == done.Owner) {
			own = "its own grant came at " + at(e.Time)
			if e.Deadline != nil {
				own += ", lease until " + at(*e.Deadline)
			}
			break
		}
	}
	how := "a release that deletes the key without checking that the value is still its own"
	if inv != nil && inv.Time < o.A.Start {
		how = fmt.Sprintf("its release was invoked at %s, before %s's grant, and checked its ownership then: a release that checks "+
			"and deletes in two steps (GET, then DEL, say) deleted the lock %s held by the time its delete arrived", at(inv.Time), o.A.Node, o.A.Node)
	}
	return []string{fmt.Sprintf("  The cause: %s released %q at %s although it no longer held it (%s; %s was granted it at %s): %s. "+
		"%s was then granted the lock while %s still held it.", done.Node, done.Key, at(done.Time), own, o.A.Node, at(o.A.Start), how,
		o.B.Node, o.A.Node)}
}

func grantLine(h models.Holding) string {
	s := fmt.Sprintf("%s acquired it at %s", h.Node, at(h.Start))
	if d := h.Acquired.Detail; d != "" {
		s += " (" + d + ")"
	}
	if h.Token != nil {
		s += fmt.Sprintf(", token %d", *h.Token)
	}
	if h.Deadline != nil {
		s += ", lease until " + at(*h.Deadline)
	}
	switch {
	case h.Ended == nil && h.Deadline != nil && h.End == *h.Deadline:
		s += "; it believed it held the lock until its lease ran out"
	case h.Ended == nil:
		s += "; it still believed it held the lock at the end"
	case h.Ended.F == history.FRelease:
		s += "; it released at " + at(h.End)
	default:
		s += fmt.Sprintf("; its %s at %s came after its lease had run out", h.Ended.F, at(h.End))
	}
	return s + "."
}

// storageOps are what the two holders did with the storage under these
// grants, and the releases other clients made meanwhile (a DEL that freed the
// lock, say).
func storageOps(ev []history.Event, o models.Overlap) []history.Event {
	lo, hi := min(o.A.Start, o.B.Start), max(o.A.End, o.B.End)
	invoked := map[int]int64{} // process -> time of its open invocation
	var out []history.Event
	for _, e := range ev {
		if e.Type == history.Invoke {
			invoked[e.Process] = e.Time
		}
		if e.Time < lo || invoked[e.Process] > hi || e.Key != o.A.Key || !e.Type.IsCompletion() {
			continue
		}
		mine := (e.F == history.FRead || e.F == history.FWrite) && (e.Owner == o.A.Owner || e.Owner == o.B.Owner)
		others := e.F == history.FRelease && e.Node != o.A.Node && e.Node != o.B.Node && e.Time <= o.End
		if mine || others {
			out = append(out, e)
		}
	}
	return out
}

func opLine(e history.Event) string {
	s := fmt.Sprintf("%s %s %s", at(e.Time), e.Node, e.F)
	if e.Value != nil {
		s += fmt.Sprintf(" %d", *e.Value)
	}
	if e.Token != nil {
		s += fmt.Sprintf(" with token %d", *e.Token)
	}
	switch e.Type {
	case history.OK:
		switch e.F {
		case history.FWrite:
			s += ": accepted"
		case history.FRelease:
			s += ": ok"
		}
	case history.Fail:
		s += ": rejected (" + e.Detail + ")"
	default:
		s += ": outcome unknown (" + e.Detail + ")"
	}
	return s
}

// aftermath tells, for each fault on a client, how the client's first
// operation to complete after the fault began came out, when it did not
// succeed.
func aftermath(ev []history.Event) []string {
	var out []string
	for _, f := range ev {
		if f.Type != history.Start {
			continue
		}
		for _, e := range ev[f.Index+1:] {
			if e.Process == history.NemesisProcess || !slices.Contains(f.Targets, e.Node) || !e.Type.IsCompletion() {
				continue
			}
			if e.Type != history.OK {
				out = append(out, fmt.Sprintf("After the %s on %s began at %s, its %s came back %s at %s: %s.",
					f.F, e.Node, at(f.Time), e.F, e.Type, at(e.Time), e.Detail))
			}
			break
		}
	}
	return out
}

// tokenOrder says how often a grant's token was lower than the grant before.
func tokenOrder(ev []history.Event) []string {
	var prev *uint64
	grants, down := 0, 0
	for _, e := range ev {
		if e.F != history.FAcquire || e.Type != history.OK || e.Token == nil {
			continue
		}
		grants++
		if prev != nil && *e.Token < *prev {
			down++
		}
		prev = e.Token
	}
	if down == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Tokens are not ordered: %d of %d grants carried a smaller token than the grant before them.", down, grants)}
}
