package models

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/history"
)

// maxLeakAcquires is how many acquires of unknown outcome a leak's
// explanation names one by one.
const maxLeakAcquires = 3

// leakStory explains a renewal that succeeded while, by the history, its
// owner held nothing (the lock model found the lock free): a reentrant lock
// whose server counted more holds for the owner than its client took. An
// acquire of unknown outcome (a retried acquire: each attempt the server
// applies is one more hold) left holds that the owner's releases did not
// undo, so the lock stayed the owner's (it leaked) and the renewal found it
// held. The servers' record (c.Grants), when it counts holds, says how many
// the server kept; without it the history can only point at the acquires of
// unknown outcome. ok is false when neither tells such a story (the renewal
// of a free lock is then the service's own fault).
func (c LockService) leakStory(ops []op, key string, renew *lockStep) (lines []string, short string, evs []history.Event, ok bool) {
	uncertain := uncertainAcquires(ops, renew)
	at := renew.o.Invoke.Time
	g, inForce, held, peak := c.heldAt(key, renew.owner, at)
	switch {
	case c.Grants != nil && !inForce:
		return nil, "", nil, false // the record agrees: nobody held it
	case held < 1 && len(uncertain) == 0:
		return nil, "", nil, false
	}
	who := renew.who()
	lines = append(lines, fmt.Sprintf("Then: %s, although by the history %s held nothing: every hold its acquires took was released.", renew, who))
	for i, u := range uncertain {
		if i == maxLeakAcquires {
			lines = append(lines, fmt.Sprintf("%s had %d more acquires of unknown outcome.", who, len(uncertain)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("%s's acquire invoked %s came back with an unknown outcome%s: a retried acquire whose attempts may "+
			"have reached the server, each one it applied one more hold of a reentrant lock, which no release of %s undid.",
			who, history.FormatTime(u.Invoke.Time), outcomeAt(u), who))
		evs = append(evs, opEvents(u)...)
	}
	first := ""
	if len(uncertain) > 0 {
		first = fmt.Sprintf(" (invoked %s)", history.FormatTime(uncertain[0].Invoke.Time))
	}
	if held < 1 {
		short = fmt.Sprintf("%s's lease was renewed after it had released every hold the history shows: its acquire of unknown outcome%s "+
			"may have taken effect after all (on a reentrant lock each attempt applied is one more hold), leaving the lock its own", who, first)
		if inForce {
			lines = append(lines, fmt.Sprintf("The servers' record: %s's grant of %q by %s at %s was still in force at the renewal (%s).",
				who, key, cmpOr(g.Server, "the server"), history.FormatTime(g.At), history.FormatTime(at)))
			short += ": the servers' record shows its grant still in force"
		} else {
			short += " (the servers' record was not kept)"
		}
		return lines, short, evs, true
	}
	burst, from := holdBurst(g.Holds, at)
	most := clientHolds(ops, renew)
	what := fmt.Sprintf("counted %s of %q for %s (owner %q) at %s", history.Plural(peak.Holds, "hold", ""), key, who, renew.owner,
		history.FormatTime(peak.At))
	if burst.Holds-from > 1 {
		what = fmt.Sprintf("applied %d of %s's acquire attempts on %q (owner %q) at one moment, %s: its hold count rose from %d to %d",
			burst.Holds-from, who, key, renew.owner, history.FormatTime(burst.At), from, burst.Holds)
	}
	lines = append(lines, fmt.Sprintf("The servers' record: %s %s, where %s's client took at most %s at once; the count was still %d at "+
		"the renewal (%s): the lock stayed %s's after every release the history shows (it leaked; nobody else could take it while %s "+
		"kept renewing it).", cmpOr(g.Server, "the server"), what, who, history.Plural(most, "hold", ""), held, history.FormatTime(at), who, who))
	switch {
	case len(uncertain) == 0:
		short = fmt.Sprintf("%s's acquire attempts were applied more than once, each one more hold of the reentrant lock: the servers' "+
			"record still counted %s for %s after its releases, so the lock leaked and the renewal found it still %s's",
			who, history.Plural(held, "hold", ""), who, who)
	case held > len(uncertain):
		short = fmt.Sprintf("%s's retried acquire%s was applied more than once, each attempt the server applied one more hold of "+
			"the reentrant lock: the servers' record still counted %s for %s after its releases, so the lock leaked and the renewal "+
			"found it still %s's", who, strings.Replace(first, "invoked", "outcome unknown, invoked", 1), history.Plural(held, "hold", ""), who, who)
	default:
		short = fmt.Sprintf("%s's acquire of unknown outcome%s was applied: the servers' record counted %s for %s after its releases, "+
			"so the lock stayed held (it leaked) and the renewal found it still %s's", who, first, history.Plural(held, "hold", ""), who, who)
	}
	return lines, short, evs, true
}

// uncertainAcquires are the acquires of renew's owner (by its node, since an
// acquire's invocation may not name the owner) on the key of ops that ended
// with an unknown outcome before the renewal was invoked, and that the lock
// model left out (no later operation of the owner named them).
func uncertainAcquires(ops []op, renew *lockStep) []op {
	var out []op
	for _, o := range ops {
		if o.Invoke.Index >= renew.o.Invoke.Index {
			break
		}
		if o.Func() != history.FAcquire || o.Outcome() != history.Info || o.Invoke.Node != renew.o.Invoke.Node ||
			o.Invoke.Node == "" || (o.Invoke.Owner != "" && o.Invoke.Owner != renew.owner) {
			continue
		}
		if o.Completion != nil && o.Completion.Owner != "" && o.Completion.Owner != renew.owner {
			continue
		}
		out = append(out, o)
	}
	return out
}

// holdBurst is the moment, no later than at, at which the hold count rose
// most (the servers applying several acquire attempts at once): the count
// it reached, and the count before that moment.
func holdBurst(hs []HoldCount, at int64) (top HoldCount, from int) {
	before := 0
	for i := 0; i < len(hs) && hs[i].At <= at; {
		j := i
		for j+1 < len(hs) && hs[j+1].At == hs[i].At {
			j++
		}
		if rise := hs[j].Holds - before; rise > top.Holds-from {
			top, from = hs[j], before
		}
		before, i = hs[j].Holds, j+1
	}
	return top, from
}

// clientHolds is the most holds renew's owner took at once by the history
// before the renewal: its acquires that returned ok less its releases that
// did.
func clientHolds(ops []op, renew *lockStep) int {
	n, most := 0, 0
	for _, o := range ops {
		if o.Invoke.Index >= renew.o.Invoke.Index {
			break
		}
		if o.Outcome() != history.OK || holderOf(o.Completion) != renew.owner {
			continue
		}
		switch o.Func() {
		case history.FAcquire:
			n++
			most = max(most, n)
		case history.FRelease:
			n = max(n-1, 0)
		}
	}
	return most
}

// outcomeAt says when and how an operation of unknown outcome ended.
func outcomeAt(o op) string {
	if o.Completion == nil {
		return " (no answer before the end of the history)"
	}
	s := " at " + history.FormatTime(o.Completion.Time)
	if d := strings.TrimSpace(o.Completion.Detail); d != "" {
		s += " (" + d + ")"
	}
	return s
}

// heldAt finds, in the servers' record, owner's grant of key in force at
// true time at (inForce; the latest if several): the holds it counted at
// that moment (0 for a lock that counts none), and the most it had counted
// by then (with when).
func (c LockService) heldAt(key, owner string, at int64) (g ServerGrant, inForce bool, held int, peak HoldCount) {
	for _, sg := range c.Grants {
		if sg.Key != key || sg.Owner != owner || sg.At > at || (sg.Ended != 0 && sg.Ended < at) {
			continue
		}
		n, top := 0, HoldCount{}
		for _, h := range sg.Holds {
			if h.At > at {
				break
			}
			n = h.Holds
			if h.Holds > top.Holds {
				top = h
			}
		}
		if len(sg.Holds) > 0 && n == 0 {
			continue // its holds had all been released
		}
		g, inForce, held, peak = sg, true, n, top
	}
	return g, inForce, held, peak
}
