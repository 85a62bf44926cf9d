package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
)

// acquireShare is how many acquire attempts succeeded, overall and outside
// fault windows, and what explains the failures.
type acquireShare struct {
	// attempts and succeeded count every acquire attempt.
	attempts, succeeded int
	// calm and calmOK count the attempts that overlapped no fault window
	// that excuses unavailability: the ones the share is judged on.
	calm, calmOK int
	// selfBlocked counts the calm attempts that did not succeed although
	// their own client held the key when it asked (a nested acquire of a lock
	// that is not reentrant).
	selfBlocked int
	// clients are the clients that tried; neverAcquired those (sorted) whose
	// every attempt failed.
	clients       int
	neverAcquired []string
	// busy is the share of the time, from the first attempt to the end of
	// the history, in which some client held the lock (averaged over keys).
	busy float64
	// heldBack, when the service held a lock back by design (a lock-delay),
	// says how much: nil otherwise.
	heldBack *heldBackShare
}

// heldBackShare is what the service's hold-backs (lock-delays) took from
// the acquire attempts and from the time.
type heldBackShare struct {
	// attempts are the attempts made while the service held their lock back
	// (not judged: calm and calmOK leave them out).
	attempts int
	// share is the share of the time, as busy's, in which the service held
	// the lock back and nobody held it.
	share float64
}

// clientOf names the client of an operation: its node, or its process.
func clientOf(o op) string {
	if o.Invoke.Node != "" {
		return o.Invoke.Node
	}
	return fmt.Sprintf("p%d", o.Invoke.Process)
}

// measureShare counts the acquire attempts of ops; hs are the holdings,
// faults the excusing fault windows (by start) and backs the hold-backs of a
// history ending at end.
func measureShare(ops []op, hs []holding, faults []faultWindow, backs []holdBack, end int64) acquireShare {
	var s acquireShare
	if len(backs) > 0 {
		s.heldBack = &heldBackShare{}
	}
	calm := calmTest(faults)
	own := ownHoldings(hs)
	acquired := map[string]bool{}
	var order []string
	first, keys := int64(-1), map[string]bool{}
	lastKey := ""
	for _, o := range ops {
		if o.Func() != history.FAcquire {
			continue
		}
		client, ok := clientOf(o), o.Outcome() == history.OK
		had, seen := acquired[client]
		if !seen {
			order = append(order, client)
		}
		if !seen || (ok && !had) {
			acquired[client] = had || ok
		}
		if first < 0 {
			first = o.Invoke.Time
		}
		if len(keys) == 0 || o.Invoke.Key != lastKey { // runs of one key: noted once
			keys[o.Invoke.Key], lastKey = true, o.Invoke.Key
		}
		s.attempts++
		if ok {
			s.succeeded++
		}
		if len(backs) > 0 && heldBackDuring(backs, o.Invoke.Key, o.Invoke.Time, completionTime(o, end)) {
			s.heldBack.attempts++
			continue
		}
		if !calm(o.Invoke.Time, completionTime(o, end)) {
			continue
		}
		s.calm++
		switch {
		case ok:
			s.calmOK++
		case own(client, o.Invoke.Key, o.Invoke.Time):
			s.selfBlocked++
		}
	}
	s.clients = len(order)
	for _, c := range order {
		if !acquired[c] {
			s.neverAcquired = append(s.neverAcquired, c)
		}
	}
	slices.SortFunc(s.neverAcquired, compareNames)
	s.busy = busyShare(hs, keys, first, end)
	if s.heldBack != nil {
		s.heldBack.share = heldBackTime(hs, backs, keys, first, end)
	}
	return s
}

// interval is a time span [start, end).
type interval struct{ start, end int64 }

// covered is how much of [from, to) the spans cover.
func covered(spans []interval, from, to int64) int64 {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, func(a, b interval) int { return cmp.Compare(a.start, b.start) })
	var n int64
	cur := from
	for _, s := range spans {
		start, stop := max(s.start, cur), min(s.end, to)
		if stop > start {
			n += stop - start
			cur = stop
		}
	}
	return n
}

// heldBackTime is the share of [from, end] in which backs held the lock
// back and nobody held it, averaged over keys.
func heldBackTime(hs []holding, backs []holdBack, keys map[string]bool, from, end int64) float64 {
	if from < 0 || end <= from || len(keys) == 0 {
		return 0
	}
	var back int64
	for _, k := range sortedKeys(keys) {
		var held []interval
		for i := range hs {
			if hs[i].Key == k {
				held = append(held, interval{hs[i].Start, hs[i].End})
			}
		}
		both := slices.Clone(held)
		for _, b := range backs {
			if b.holds(k) {
				both = append(both, interval{b.start, b.end})
			}
		}
		back += covered(both, from, end) - covered(held, from, end)
	}
	return float64(back) / float64(int64(len(keys))*(end-from))
}

// compareNames orders client names naturally: c2 before c10.
func compareNames(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// calmTest returns a test of whether [from, to] overlaps none of the fault
// windows (sorted by start).
func calmTest(faults []faultWindow) func(from, to int64) bool {
	type span struct{ start, end int64 }
	var merged []span
	for _, w := range faults {
		if n := len(merged); n > 0 && w.Start.Time <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, w.End())
			continue
		}
		merged = append(merged, span{w.Start.Time, w.End()})
	}
	return func(from, to int64) bool {
		i, _ := slices.BinarySearchFunc(merged, from, func(s span, t int64) int {
			if s.end <= t {
				return -1
			}
			return 1
		})
		return i == len(merged) || merged[i].start >= to
	}
}

// ownHoldings returns a test of whether client held key at time t.
func ownHoldings(hs []holding) func(client, key string, t int64) bool {
	by := map[holdKey][]int32{} // indexes in hs
	for i := range hs {
		k := holdKey{hs[i].Node, hs[i].Key}
		by[k] = append(by[k], int32(i))
	}
	byStart := func(a, b int32) int { return cmp.Compare(hs[a].Start, hs[b].Start) }
	for _, l := range by {
		slices.SortFunc(l, byStart)
	}
	return func(client, key string, t int64) bool {
		l := by[holdKey{client, key}]
		i, _ := slices.BinarySearchFunc(l, t, func(j int32, t int64) int {
			if hs[j].Start <= t {
				return -1
			}
			return 1
		})
		return i > 0 && hs[l[i-1]].End > t
	}
}

// busyShare is the share of [from, end] in which some client held the lock,
// averaged over keys.
func busyShare(hs []holding, keys map[string]bool, from, end int64) float64 {
	if from < 0 || end <= from || len(keys) == 0 {
		return 0
	}
	by := map[string][]int32{} // indexes in hs
	for i := range hs {
		if keys[hs[i].Key] {
			by[hs[i].Key] = append(by[hs[i].Key], int32(i))
		}
	}
	byStart := func(a, b int32) int { return cmp.Compare(hs[a].Start, hs[b].Start) }
	var held int64
	for _, l := range by {
		slices.SortFunc(l, byStart)
		cur := from
		for _, j := range l {
			h := &hs[j]
			start, stop := max(h.Start, cur), min(h.End, end)
			if stop > start {
				held += stop - start
				cur = stop
			}
		}
	}
	return float64(held) / float64(int64(len(keys))*(end-from))
}

func (s acquireShare) share() float64 { return ratio(s.succeeded, s.attempts) }

func (s acquireShare) calmShare() float64 { return ratio(s.calmOK, s.calm) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (s acquireShare) stats() map[string]float64 {
	out := map[string]float64{
		"acquire-attempts":           float64(s.attempts),
		"acquire-success":            s.share(),
		"acquire-attempts-no-fault":  float64(s.calm),
		"acquire-success-no-fault":   s.calmShare(),
		"clients":                    float64(s.clients),
		"clients-never-acquired":     float64(len(s.neverAcquired)),
		"lock-held-share":            s.busy,
		"acquire-failed-self-holder": float64(s.selfBlocked),
	}
	if s.heldBack != nil {
		out["acquire-attempts-held-back"] = float64(s.heldBack.attempts)
		out["lock-held-back-share"] = s.heldBack.share
	}
	return out
}

// heldBackSummary says how long the service held the lock back by design
// and how many attempts were made meanwhile.
func (s acquireShare) heldBackSummary() string {
	attempts := fmt.Sprintf("the %d acquire attempts made then are", s.heldBack.attempts)
	if s.heldBack.attempts == 1 {
		attempts = "the 1 acquire attempt made then is"
	}
	return fmt.Sprintf("nobody held the lock but the service held it back by design (lock-delay) %.0f%% of the time; %s not judged",
		100*s.heldBack.share, attempts)
}

// starving reports whether too few of the calm attempts succeeded.
func (s acquireShare) starving(c Availability) bool {
	return s.calm >= c.MinAttempts && s.calmShare() < *c.MinSuccess
}

// judgedOn says which attempts the share was judged on.
func (s acquireShare) judgedOn() string {
	if s.calm == s.attempts {
		return fmt.Sprintf("%d acquire attempts", s.attempts)
	}
	return fmt.Sprintf("the %d acquire attempts made while %s (%.1f%% of all %d)", s.calm, s.calmWhen(), 100*s.share(), s.attempts)
}

// calmWhen says when the judged attempts were made.
func (s acquireShare) calmWhen() string {
	if s.heldBack != nil && s.heldBack.attempts > 0 {
		return "no fault was active and no lock-delay held the lock back"
	}
	return "no fault was active"
}

// starvation is the one-line problem: the share, the clients that never got
// the lock, and what explains it.
func (s acquireShare) starvation(minSuccess float64) string {
	msg := fmt.Sprintf("only %.1f%% of %s succeeded (at least %.1f%% required)", 100*s.calmShare(), s.judgedOn(), 100*minSuccess)
	if n := len(s.neverAcquired); n > 0 {
		msg += "; " + s.never()
	}
	return msg + "; " + s.cause()
}

// cause explains why attempts failed: the clients' own holdings, a lock too
// busy for its clients, or a lock that was free.
func (s acquireShare) cause() string {
	switch {
	case s.selfBlocked > 0:
		return fmt.Sprintf("%d of the %d failed attempts were made by a client that already held the lock: "+
			"a nested acquire of a lock that is not reentrant waits for itself, and the other clients wait for it",
			s.selfBlocked, s.calm-s.calmOK)
	case s.busy >= 0.9:
		return fmt.Sprintf("the lock was held %.0f%% of the time: its clients want more of it than one holder at a time can have "+
			"(contention; fewer clients, shorter holds or a longer acquire wait would let them through)", 100*s.busy)
	}
	if s.heldBack != nil {
		return fmt.Sprintf("although the lock was free %.0f%% of the time (held %.0f%%, held back by lock-delay %.0f%%)",
			100*(1-s.busy-s.heldBack.share), 100*s.busy, 100*s.heldBack.share)
	}
	return fmt.Sprintf("although the lock was free %.0f%% of the time", 100*(1-s.busy))
}

// never says how many clients never acquired the lock.
func (s acquireShare) never() string {
	if n := len(s.neverAcquired); n < s.clients {
		return fmt.Sprintf("%d of %d clients never acquired the lock", n, s.clients)
	}
	if s.clients == 1 {
		return "its one client never acquired the lock"
	}
	return fmt.Sprintf("none of the %d clients acquired the lock", s.clients)
}

// maxNamed caps the clients named in an explanation.
const maxNamed = 10

func (s acquireShare) explainStarvation(minSuccess float64) []string {
	lines := []string{fmt.Sprintf("Only %.1f%% of %s succeeded; at least %.1f%% must (liveness min-success).",
		100*s.calmShare(), s.judgedOn(), 100*minSuccess)}
	if n := len(s.neverAcquired); n > 0 {
		named := s.neverAcquired[:min(n, maxNamed)]
		more := ""
		if n > maxNamed {
			more = fmt.Sprintf(" and %d more", n-maxNamed)
		}
		never := s.never()
		lines = append(lines, fmt.Sprintf("%s%s: %s%s.", strings.ToUpper(never[:1]), never[1:], strings.Join(named, ", "), more))
	}
	cause := s.cause()
	return append(lines, strings.ToUpper(cause[:1])+cause[1:]+".")
}

// summary is the share in a valid verdict's reason.
func (s acquireShare) summary(c Availability) string {
	out := fmt.Sprintf("%.1f%% of %d acquire attempts succeeded", 100*s.share(), s.attempts)
	var notes []string
	if s.calm != s.attempts {
		notes = append(notes, fmt.Sprintf("%.1f%% of the %d made while %s", 100*s.calmShare(), s.calm, s.calmWhen()))
	}
	switch {
	case *c.MinSuccess <= 0:
	case s.calm < c.MinAttempts:
		notes = append(notes, fmt.Sprintf("too few outside faults to judge the share: %d, at least %d needed", s.calm, c.MinAttempts))
	default:
		notes = append(notes, fmt.Sprintf("at least %.1f%% required", 100**c.MinSuccess))
	}
	if len(notes) > 0 {
		out += " (" + strings.Join(notes, "; ") + ")"
	}
	return out
}
