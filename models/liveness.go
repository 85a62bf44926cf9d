package models

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/reuse"
)

// Availability is the liveness check ("liveness"). It judges availability
// from the history:
//
//   - the share of acquire attempts that succeeded;
//   - stalls: windows in which some client wanted a lock (from its first
//     attempt until one succeeded, retries and pauses between them included),
//     nobody held it (as the clients saw it: from an acquire's return until the
//     release was invoked, the lease deadline passed or the holder crashed)
//     and no fault was active: a deadlock or an orphaned lock;
//   - recovery: after each fault window, how long until an acquire succeeded
//     again.
//
// Faults excuse unavailability while they last, except clock drift (which
// can last a whole run and does not stop a lock from being granted).
//
// A lock the service held back by design (a lock-delay system event,
// history.FLockDelay: Chubby refusing a lock whose holder's session expired)
// is not free while it is held back: no stall is counted then, the attempts
// on it then are not judged (they are counted apart), the share of the time
// it was held back is reported apart from the time it was held, and a
// recovery is judged without the time it spent held back. A wait that
// outlasts the lock-delay is judged as any other.
type Availability struct {
	// StallMax is the longest tolerated stall. Default: 10 s, or 1.5 times the
	// longest lease granted if that is longer (an orphaned grant, such as an
	// acquire that timed out but took effect, blocks the lock until its lease
	// runs out: that is how leases recover, not a deadlock).
	StallMax time.Duration
	// RecoveryMax is the longest tolerated recovery after a fault window
	// (judged only while no other fault is active). Default 30 s.
	RecoveryMax time.Duration
	// MinSuccess is the least share (0..1) of the acquire attempts made while
	// no fault was active that must succeed. Nil: DefaultMinSuccess; 0 turns
	// the judgement off.
	MinSuccess *float64
	// MinAttempts is how many acquire attempts made while no fault was active
	// a history needs before MinSuccess is judged: the share of a handful of
	// attempts says little. Default (0): DefaultMinAttempts.
	MinAttempts int
	// Grants is the servers' record of the grants of the run (nil: the
	// history alone, as `locklab check` reads it). With it, a grant without a
	// lease that was never released, while no client believed it held the
	// lock and the others kept failing to take it until the end for longer
	// than StallMax, is a wedged lock: invalid whatever faults overlap, for
	// nothing will ever free it.
	Grants []ServerGrant
}

// Defaults of Availability.
//
// DefaultMinSuccess: with the default workload (5 clients contending for one
// lock, 100 ms holds, a 5 s wait budget) every system grants 99% of the
// attempts without faults; under random faults (100 seeds of each system with
// the fenced-counter and list-append workloads) at least 64% of the attempts
// made outside fault windows succeed (raftkv's worst seed; 85% for Redis and
// Redlock, 90% or more in 95 of 100 seeds). 1000 clients on one lock get under
// 5%, and a nested acquire of a lock that is not reentrant about 17%: those
// clients starve.
const (
	DefaultStallMax    = 10 * time.Second
	DefaultRecoveryMax = 30 * time.Second
	DefaultMinSuccess  = 0.5
	DefaultMinAttempts = 10
)

// Name is "liveness".
func (Availability) Name() string { return "liveness" }

// Liveness reports true: a liveness failure is not a safety violation.
func (Availability) Liveness() bool { return true }

// Applies reports whether the history has acquire attempts.
func (Availability) Applies(events []history.Event) (bool, string) {
	return appliesIfAny(events, history.FAcquire, history.Invoke, "no acquire attempts in the history")
}

// Recovery is how long the lock took to be granted again after a fault window.
type Recovery struct {
	// Fault names the fault: kind and targets.
	Fault string `json:"fault"`
	// Start and Stop are the fault window's true times (ns).
	Start int64 `json:"start"`
	Stop  int64 `json:"stop"`
	// Recovered is when the first acquire after Stop returned ok (ns); -1 if none did.
	Recovered int64 `json:"recovered"`
	// Duration is Recovered - Stop (ns), or the rest of the history when the
	// lock never recovered while clients kept trying; -1 when nobody tried.
	Duration int64 `json:"duration"`
	// Judged: no other fault was active during the recovery, so RecoveryMax applies.
	Judged bool `json:"judged"`
	// HeldBack is how much of the recovery (ns) the service held a lock back
	// by design (a lock-delay): RecoveryMax applies to the rest.
	HeldBack int64 `json:"held_back,omitempty"`
}

// Stall is a window in which clients waited for a lock that nobody held.
type Stall struct {
	Key        string
	Start, End int64
	// Waiting are the acquire attempts of the clients that wanted the lock
	// during the stall.
	Waiting []op
	// Before is the holding that ended last before the stall, if any.
	Before *Holding
}

// Length is the stall's duration.
func (s Stall) Length() time.Duration { return time.Duration(s.End - s.Start) }

func (c Availability) withDefaults(h *history.Paired) Availability {
	if c.StallMax == 0 {
		c.StallMax = max(DefaultStallMax, h.Acquired().LongestLease*3/2)
	}
	if c.RecoveryMax == 0 {
		c.RecoveryMax = DefaultRecoveryMax
	}
	if c.MinSuccess == nil {
		c.MinSuccess = history.Ptr(DefaultMinSuccess)
	}
	if c.MinAttempts == 0 {
		c.MinAttempts = DefaultMinAttempts
	}
	return c
}

// Check measures and judges.
func (c Availability) Check(events []history.Event) Verdict {
	return c.checkPaired(completed(events))
}

func (c Availability) checkPaired(h *history.Paired) Verdict {
	c = c.withDefaults(h)
	c.StallMax, c.RecoveryMax = c.StallMax.Round(time.Millisecond), c.RecoveryMax.Round(time.Millisecond)
	ops := h.Ops()
	if !slices.ContainsFunc(ops, func(o op) bool { return o.Func() == history.FAcquire }) {
		return Verdict{Result: Unknown, Reason: "no acquire attempts in the history: nothing to judge"}
	}
	end := h.End()
	faults := excusingFaults(h, end)
	backs := holdBacksOf(h, end)
	holdings := crashAware(holdings(h), faults)
	share := measureShare(ops, holdings, faults, backs, end)
	stalls, fill := findStalls(ops, h.OpsOf(history.FAcquire), holdings, faults, backs, end)
	recoveries := findRecoveries(ops, faults, backs, end)
	v := Verdict{Result: Valid, Stats: share.stats(), Recoveries: recoveries}
	var longest *Stall
	var total time.Duration
	for i := range stalls {
		total += stalls[i].Length()
		if longest == nil || stalls[i].Length() > longest.Length() {
			longest = &stalls[i]
		}
	}
	v.Stats["stalls"], v.Stats["stall-total-ms"] = float64(len(stalls)), float64(total.Milliseconds())
	if longest != nil {
		v.Stats["stall-longest-ms"] = float64(longest.Length().Milliseconds())
	}
	var worst *Recovery
	for i, r := range recoveries {
		if r.Duration >= 0 && (worst == nil || r.Duration > worst.Duration) {
			worst = &recoveries[i]
		}
	}
	if worst != nil {
		v.Stats["recovery-max-ms"] = float64(time.Duration(worst.Duration).Milliseconds())
	}
	var problems []string
	var cx *Counterexample
	if w := findWedge(c.Grants, ops, holdings, h.Faults(), end, c.StallMax); w != nil {
		problems = append(problems, w.problem(end))
		cx = w.counterexample(ops, end)
		v.Stats["wedged-ms"] = float64(time.Duration(end - w.from).Milliseconds())
	}
	if longest != nil && longest.Length() > c.StallMax {
		fill(longest)
		problems = append(problems, fmt.Sprintf("clients waited %s for %q while no client believed it held it and no fault was active (limit %v)",
			ms(longest.Length()), longest.Key, c.StallMax))
		if cx == nil {
			cx = describeStall(*longest)
		}
	}
	for _, r := range recoveries {
		if r.Judged && time.Duration(r.Duration-r.HeldBack) > c.RecoveryMax {
			limit := fmt.Sprintf("limit %v", c.RecoveryMax)
			if r.HeldBack > 0 {
				limit = fmt.Sprintf("%s of it held back by lock-delay, not counted; %s", ms(time.Duration(r.HeldBack)), limit)
			}
			what := fmt.Sprintf("took %s to grant the lock again after the %s fault ending at %s (%s)",
				ms(time.Duration(r.Duration)), r.Fault, history.FormatTime(r.Stop), limit)
			if r.Recovered < 0 {
				what = fmt.Sprintf("never granted the lock again after the %s fault ending at %s (%s of trying, %s)",
					r.Fault, history.FormatTime(r.Stop), ms(time.Duration(r.Duration)), limit)
			}
			problems = append(problems, what)
			if cx == nil {
				cx = &Counterexample{Explanation: []string{"The lock " + what + "."}}
			}
			break
		}
	}
	if share.starving(c) {
		problems = append(problems, share.starvation(*c.MinSuccess))
		if cx == nil {
			cx = &Counterexample{Explanation: share.explainStarvation(*c.MinSuccess)}
		}
	}
	if len(problems) > 0 {
		v.Result, v.Reason, v.Counterexample = Invalid, strings.Join(problems, "; "), cx
		if cx != nil {
			v.Counterexample = withFaults(cx, h.Recorded())
		}
		return v
	}
	v.Reason = fmt.Sprintf("%s; longest stall %s (limit %v)", share.summary(c), msOf(longest), c.StallMax)
	if worst != nil {
		v.Reason += fmt.Sprintf("; slowest recovery after a fault %s", ms(time.Duration(worst.Duration)))
		if worst.HeldBack > 0 {
			v.Reason += fmt.Sprintf(" (%s of it held back by lock-delay)", ms(time.Duration(worst.HeldBack)))
		}
	}
	if share.heldBack != nil {
		v.Reason += "; " + share.heldBackSummary()
	}
	return v
}

func msOf(s *Stall) string {
	if s == nil {
		return "none"
	}
	return ms(s.Length())
}

// excusingFaults are the fault windows that excuse unavailability, by start.
func excusingFaults(h *history.Paired, end int64) []faultWindow {
	var out []faultWindow
	if n := len(h.Faults()); n > 0 {
		out = make([]faultWindow, 0, n)
	}
	for _, w := range h.Faults() {
		if w.Start.F == "clock-drift" || w.Start.F == history.FLockDelay {
			continue
		}
		if w.Stop == nil {
			w.Stop = &history.Event{Time: end, Index: -1}
		}
		out = append(out, w)
	}
	return out
}

// holdBack is a window in which the service held a lock back by design (a
// lock-delay system event, history.FLockDelay); key "" holds back every key.
type holdBack struct {
	key        string
	start, end int64
}

// holds reports whether b holds key back.
func (b holdBack) holds(key string) bool { return b.key == "" || b.key == key }

// holdBacksOf are the history's lock-delay windows, by start (one still
// open at the end lasts until end).
func holdBacksOf(h *history.Paired, end int64) []holdBack {
	var out []holdBack
	for _, w := range h.Faults() {
		if w.Start.F != history.FLockDelay {
			continue
		}
		b := holdBack{key: w.Start.Key, start: w.Start.Time, end: end}
		if w.Stop != nil {
			b.end = w.Stop.Time
		}
		out = append(out, b)
	}
	return out
}

// heldBackDuring reports whether one of backs holds key back at some time
// in (from, to) (or at from, when from == to).
func heldBackDuring(backs []holdBack, key string, from, to int64) bool {
	return slices.ContainsFunc(backs, func(b holdBack) bool {
		return b.holds(key) && b.end > from && (b.start < to || (from == to && b.start <= from))
	})
}

// findStalls sweeps each key's wants, holdings hs, hold-backs and the fault
// windows for times when clients wanted the lock, nobody held it, the
// service did not hold it back and no fault was active; fill adds to a stall
// the attempts that waited and the holding before it. acquires is the number
// of acquire operations in ops.
func findStalls(ops []op, acquires int, hs []holding, faults []faultWindow, backs []holdBack, end int64) (stalls []Stall, fill func(*Stall)) {
	holdings := groupByKey(hs, func(h *holding) string { return h.Key })
	buf := wantBufs.Get() // the wants without attempts, for the sweep alone
	defer func() {
		clear(*buf)
		*buf = (*buf)[:0]
		wantBufs.Put(buf)
	}()
	wantsOf := func(attempts bool) map[string][]want {
		var ws []want
		if attempts {
			ws = findWants(ops, acquires, end, true, nil)
		} else {
			ws = findWants(ops, acquires, end, false, *buf)
			*buf = ws
		}
		if len(ws) > 0 && !slices.ContainsFunc(ws, func(w want) bool { return w.key != ws[0].key }) {
			return map[string][]want{ws[0].key: ws} // one key: the wants as they are
		}
		wants := map[string][]want{}
		for _, w := range ws {
			wants[w.key] = append(wants[w.key], w)
		}
		return wants
	}
	wants := wantsOf(false)
	var out []Stall
	keys := sortedKeys(wants)
	for _, k := range keys {
		ks := keyStalls(k, wants[k], holdings[k], faults, backs, end)
		if len(keys) == 1 {
			out = ks // one key: its stalls, already by start
			break
		}
		out = append(out, ks...)
	}
	byStart := func(a, b Stall) int { return cmp.Compare(a.Start, b.Start) }
	if !slices.IsSortedFunc(out, byStart) { // a stable sort leaves sorted stalls as they are
		slices.SortStableFunc(out, byStart)
	}
	return out, func(s *Stall) {
		s.Waiting = waitersAt(wantsOf(true)[s.Key], s.Start, s.End)
		if b := lastBefore(holdings[s.Key], s.Start); b != nil {
			before := b.full()
			s.Before = &before
		}
	}
}

// want is a client wanting a lock: from its first attempt until an attempt
// succeeds (or its last attempt ends), retries and the pauses between them
// included.
type want struct {
	key        string
	start, end int64
	// attempts are the acquires, when asked for (findWants).
	attempts []op
}

// findWants finds the wants of ops, with their attempts if attempts is set
// (acquires, the number of acquire operations, sizes them).
// wantBufs keeps the memory of the wants a stall sweep reads (findStalls).
var wantBufs reuse.Pool[[]want]

func findWants(ops []op, acquires int, end int64, attempts bool, buf []want) []want {
	var open holdTable[want] // client+key -> its current want
	out := buf[:0]           // at most one want per acquire
	if cap(out) < acquires {
		out = make([]want, 0, acquires)
	}
	for _, o := range ops {
		if o.Func() != history.FAcquire {
			continue
		}
		client := o.Invoke.Node
		if client == "" {
			client = fmt.Sprintf("p%d", o.Invoke.Process)
		}
		id := holdKey{client, o.Invoke.Key}
		w, ok := open.get(id)
		if !ok {
			w = want{key: o.Invoke.Key, start: o.Invoke.Time}
		}
		if attempts {
			w.attempts = append(w.attempts, o)
		}
		w.end = completionTime(o, end)
		if o.Outcome() == history.OK {
			out = append(out, w)
			open.del(id)
			continue
		}
		open.set(id, w)
	}
	ids := open.keys(make([]holdKey, 0, open.len()))
	slices.SortFunc(ids, func(a, b holdKey) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	for _, id := range ids {
		w, _ := open.get(id)
		out = append(out, w)
	}
	return out
}

// packedBufs keeps the memory of the packed changes of stall sweeps.
var packedBufs reuse.Pool[[]int64]

// crashAware ends a holding when a crash of its node starts. hs is not
// changed: a copy is made when a holding ends earlier.
func crashAware(hs []holding, faults []faultWindow) []holding {
	var crashes []faultWindow
	for _, w := range faults {
		if w.Start.F == "crash" {
			crashes = append(crashes, w)
		}
	}
	if len(crashes) == 0 {
		return hs
	}
	copied := false
	for i := range hs {
		for _, w := range crashes {
			if slices.Contains(w.Start.Targets, hs[i].Node) && w.Start.Time >= hs[i].Start && w.Start.Time < hs[i].End {
				if !copied {
					hs, copied = slices.Clone(hs), true
				}
				hs[i].End = w.Start.Time
			}
		}
	}
	return hs
}

// keyStalls sweeps the times where the number of waiting acquires, holdings
// (a hold-back of the key counts as one) or active faults changes.
func keyStalls(key string, wants []want, hs []*holding, faults []faultWindow, backs []holdBack, end int64) []Stall {
	// The changes, each a time and a kind (see change). The changes at one
	// time are summed before anything is judged: their order among
	// themselves does not matter, so they are sorted by time alone.
	n := 2 * (len(wants) + len(hs) + len(faults) + len(backs))
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	each := func(f func(t int64, k change)) {
		for _, w := range wants {
			f(w.start, waitUp)
			f(w.end, waitDown)
		}
		for _, h := range hs {
			f(h.Start, holdUp)
			f(h.End, holdDown)
		}
		for _, w := range faults {
			f(w.Start.Time, faultUp)
			f(w.Stop.Time, faultDown)
		}
		for _, b := range backs {
			if b.holds(key) {
				f(b.start, holdUp)
				f(b.end, holdDown)
			}
		}
	}
	each(func(t int64, _ change) { lo, hi = min(lo, t), max(hi, t) })
	var cs changes
	if n > 0 && uint64(hi-lo) < 1<<60 && hi >= lo && !(lo < 0 && hi > math.MaxInt64+lo) {
		// Packed: (time - lo) << 3 | kind, sorted as integers.
		buf := packedBufs.Get()
		defer packedBufs.Put(buf)
		cs.packed, cs.lo = reuse.Room(*buf, n), lo
		each(func(t int64, k change) { cs.packed = append(cs.packed, (t-lo)<<3|int64(k)) })
		*buf = cs.packed
		slices.Sort(cs.packed)
	} else {
		cs.loose = make([]timedChange, 0, n)
		each(func(t int64, k change) { cs.loose = append(cs.loose, timedChange{t, k}) })
		slices.SortFunc(cs.loose, func(a, b timedChange) int { return cmp.Compare(a.t, b.t) })
	}
	// Two sweeps: the first counts the stalls, the second records them.
	var out []Stall
	for pass := range 2 {
		n := 0
		var cur Stall
		open := false
		wait, hold, faulted := int32(0), int32(0), int32(0)
		for i := 0; i < cs.len(); {
			t := cs.time(i)
			for ; i < cs.len() && cs.time(i) == t; i++ {
				switch cs.kind(i) {
				case waitUp:
					wait++
				case waitDown:
					wait--
				case holdUp:
					hold++
				case holdDown:
					hold--
				case faultUp:
					faulted++
				case faultDown:
					faulted--
				}
			}
			stalled := wait > 0 && hold == 0 && faulted == 0
			switch {
			case stalled && !open:
				cur, open = Stall{Key: key, Start: t}, true
			case !stalled && open:
				cur.End = t
				if pass == 1 {
					out = append(out, cur)
				}
				n++
				open = false
			}
		}
		if open {
			cur.End = end
			if pass == 1 {
				out = append(out, cur)
			}
			n++
		}
		if pass == 0 {
			if n == 0 {
				return nil
			}
			out = make([]Stall, 0, n)
		}
	}
	return out
}

func completionTime(o op, end int64) int64 {
	if o.Completion == nil {
		return end
	}
	return o.Completion.Time
}

// waitersAt are the attempts of the wants that overlap [from, to).
func waitersAt(wants []want, from, to int64) []op {
	var out []op
	for _, w := range wants {
		if w.start < to && from < w.end {
			out = append(out, w.attempts...)
		}
	}
	slices.SortFunc(out, func(a, b op) int { return a.Invoke.Index - b.Invoke.Index })
	return out
}

func lastBefore(hs []*holding, t int64) *holding {
	var best *holding
	for _, h := range hs {
		if h.End <= t && (best == nil || h.End > best.End) {
			best = h
		}
	}
	return best
}

// findRecoveries measures, after each fault window, the time until an
// acquire next returned ok, and how much of it the service held a lock back
// (backs).
func findRecoveries(ops []op, faults []faultWindow, backs []holdBack, end int64) []Recovery {
	n := 0
	for _, o := range ops {
		if o.Func() == history.FAcquire {
			n++
		}
	}
	oks, tries := make([]int64, 0, n), make([]int64, 0, n)
	for _, o := range ops {
		if o.Func() != history.FAcquire {
			continue
		}
		tries = append(tries, o.Invoke.Time)
		if o.Outcome() == history.OK {
			oks = append(oks, o.Completion.Time)
		}
	}
	slices.Sort(oks)
	out := make([]Recovery, 0, len(faults))
	for _, w := range faults {
		if w.Stop.Index < 0 {
			continue // still active at the end
		}
		r := Recovery{Fault: strings.TrimSpace(w.Start.F + " " + strings.Join(w.Start.Targets, ",")),
			Start: w.Start.Time, Stop: w.Stop.Time, Recovered: -1, Duration: -1}
		if i, _ := slices.BinarySearch(oks, w.Stop.Time); i < len(oks) {
			r.Recovered, r.Duration = oks[i], oks[i]-w.Stop.Time
		} else if slices.ContainsFunc(tries, func(t int64) bool { return t >= w.Start.Time }) {
			r.Duration = end - w.Stop.Time
		}
		r.Judged = r.Duration >= 0 && !slices.ContainsFunc(faults, func(o faultWindow) bool {
			return o.Start.Index != w.Start.Index && o.Start.Time < w.Stop.Time+r.Duration && o.End() > w.Stop.Time
		})
		if r.Duration > 0 && len(backs) > 0 {
			spans := make([]interval, 0, len(backs))
			for _, b := range backs {
				spans = append(spans, interval{b.start, b.end})
			}
			r.HeldBack = covered(spans, w.Stop.Time, w.Stop.Time+r.Duration)
		}
		out = append(out, r)
	}
	return out
}

// maxStallEvents caps the events shown for a stall.
const maxStallEvents = 20

func describeStall(s Stall) *Counterexample {
	var who []string
	var evs []history.Event
	for _, o := range s.Waiting {
		name := o.Invoke.Node
		if name == "" {
			name = fmt.Sprintf("p%d", o.Invoke.Process)
		}
		if !slices.Contains(who, name) {
			who = append(who, name)
		}
		if len(evs) < maxStallEvents {
			evs = append(evs, opEvents(o)...)
		}
	}
	lines := []string{fmt.Sprintf("From %s to %s (%s), %s waited for %q, no client believed it held it and no fault was active.",
		history.FormatTime(s.Start), history.FormatTime(s.End), ms(s.Length()), strings.Join(who, ", "), s.Key)}
	if s.Before != nil {
		lines = append(lines, "Last holder before: "+describeHolding(*s.Before)+".")
		evs = append(evs, s.Before.Acquired)
		if s.Before.Ended != nil {
			evs = append(evs, *s.Before.Ended)
		}
	} else {
		lines = append(lines, "Nobody had held it before: an orphaned lock, or one granted to an acquirer that never learned of it.")
	}
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	evs = slices.CompactFunc(evs, func(x, y history.Event) bool { return x.Index == y.Index })
	return &Counterexample{Explanation: lines, Events: evs}
}

// groupByKey groups pointers to the elements of xs by key, in order, each
// group allocated at its size.
func groupByKey[T any](xs []T, key func(*T) string) map[string][]*T {
	all := make([]*T, len(xs))
	oneKey := true // the usual case: one group, in order
	for i := range xs {
		all[i] = &xs[i]
		oneKey = oneKey && key(&xs[i]) == key(&xs[0])
	}
	if len(xs) > 0 && oneKey {
		return map[string][]*T{key(&xs[0]): all}
	}
	counts := map[string]int{}
	for i := range xs {
		counts[key(&xs[i])]++
	}
	out := make(map[string][]*T, len(counts))
	at := 0
	for i := range xs {
		k := key(&xs[i])
		g, ok := out[k]
		if !ok {
			g = all[at : at : at+counts[k]]
			at += counts[k]
		}
		out[k] = append(g, &xs[i])
	}
	return out
}

// change is what happens at a time in the stall sweep (keyStalls).
type change uint8

const (
	waitUp change = iota
	waitDown
	holdUp
	holdDown
	faultUp
	faultDown
)

type timedChange struct {
	t    int64
	kind change
}

// changes are the sweep's changes sorted by time: packed into integers when
// the times span less than 2^60 ns, loose otherwise.
type changes struct {
	packed []int64
	lo     int64
	loose  []timedChange
}

func (c *changes) len() int {
	if c.packed != nil {
		return len(c.packed)
	}
	return len(c.loose)
}

func (c *changes) time(i int) int64 {
	if c.packed != nil {
		return c.packed[i]>>3 + c.lo
	}
	return c.loose[i].t
}

func (c *changes) kind(i int) change {
	if c.packed != nil {
		return change(c.packed[i] & 7)
	}
	return c.loose[i].kind
}
