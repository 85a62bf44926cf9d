package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/reuse"
)

// MutualExclusion checks mutual exclusion as the clients experienced it: the
// intervals in which two different clients each believed they held the same
// lock must not overlap in true time.
//
// A client's belief starts when its acquire returns ok and ends when it invokes
// the release (or at the end of the history). A lease deadline bounds the
// belief only if the client acted on it: when the deadline passes before the
// release, the belief ends at the deadline or at the last storage operation the
// client invoked under the lease, whichever is later — a client that wrote
// after its lease ran out (because it was paused, say) clearly still believed
// it held the lock. Renewals move the deadline; nested (reentrant) acquires by
// the same owner extend the same interval.
type MutualExclusion struct {
	// MaxReported caps the overlaps listed in the counterexample (all are
	// counted). Default 5.
	MaxReported int
}

// Name is "mutual-exclusion".
func (MutualExclusion) Name() string { return "mutual-exclusion" }

// Holding is one interval in which a client believed it held a lock.
type Holding struct {
	Key   string
	Node  string
	Owner string
	Token *uint64
	// Start and End are true times (ns).
	Start, End int64
	// Acquired is the acquire completion; Ended is the event that ended the
	// belief (release invoke, last operation), nil at the end of the history.
	Acquired history.Event
	Ended    *history.Event
	// Deadline is the last known lease deadline (true time), nil without a lease.
	Deadline *int64
	// Released reports whether the client invoked a release.
	Released bool
}

// holding is a Holding as the checks keep it: the acquire's completion by
// reference (it stays in the paired history), not by value.
type holding struct {
	Key   string
	Node  string
	Owner string
	Token *uint64
	// Start and End are true times (ns).
	Start, End int64
	// Acquired is the acquire completion, in the paired history.
	Acquired *history.Event
	Ended    *history.Event
	Deadline *int64
	Released bool
}

// full is the Holding of h.
func (h *holding) full() Holding {
	return Holding{Key: h.Key, Node: h.Node, Owner: h.Owner, Token: h.Token, Start: h.Start, End: h.End,
		Acquired: *h.Acquired, Ended: h.Ended, Deadline: h.Deadline, Released: h.Released}
}

type holdingBuilder struct {
	idx    int // the holding's index in the holdings being built
	count  int
	lastOp *history.Event
}

// holdKey identifies a client's holding of a key (or its lease as an owner).
type holdKey struct{ node, key string }

// sortKey is the order of the holdings still active at the end of a history.
func (k holdKey) sortKey() string { return k.node + "\x00" + k.key }

// isStorageOp reports whether f touches the protected resource.
func isStorageOp(f string) bool {
	return f == history.FRead || f == history.FWrite || f == history.FAppend
}

// Holdings reconstructs every holding interval from a history, ordered by start.
func Holdings(events []history.Event) []Holding {
	buf := holdingBufs.Get()
	ph, err := history.PairEvents(events) // the holdings need the completed events alone
	if err != nil {
		ph = history.PairRecorded(events) // as completed does
	}
	hs := findHoldingsIn(ph, *buf)
	out := make([]Holding, len(hs))
	for i := range hs {
		out[i] = hs[i].full()
	}
	clear(hs)
	*buf = hs[:0]
	holdingBufs.Put(buf)
	return out
}

// holdingBufs keeps the memory of the holdings Holdings makes whole.
var holdingBufs reuse.Pool[[]holding]

// holdingsKey is the key of the holdings in a paired history's memo.
type holdingsKey struct{}

// holdings are the holdings of a paired history, derived once per history:
// read-only (copy before changing one).
func holdings(ph *history.Paired) []holding {
	return ph.Memo(holdingsKey{}, func() any { return findHoldings(ph) }).([]holding)
}

func findHoldings(ph *history.Paired) []holding { return findHoldingsIn(ph, nil) }

// findHoldingsIn is findHoldings in buf's memory when it has room.
func findHoldingsIn(ph *history.Paired, buf []holding) []holding {
	grants := ph.Grants() // one holding per successful acquire at most, in a history whose events agree
	f := holdingsFinder{done: buf[:0], builders: make([]holdingBuilder, 0, 16)}
	if cap(f.done) < grants {
		f.done = make([]holding, 0, grants)
	}
	for i := range ph.Len() {
		e := ph.At(i)
		switch {
		case e.Type == history.Start || e.Type == history.Stop:
		case isStorageOp(e.F):
			if e.Type == history.Invoke {
				f.storageOp(e)
			}
		default:
			f.lockOp(e)
		}
	}
	keys := f.active.keys(make([]holdKey, 0, f.active.len()))
	slices.SortFunc(keys, func(a, b holdKey) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	end := ph.End()
	for _, k := range keys {
		b, _ := f.active.get(k)
		f.finish(b, end, nil)
	}
	done := f.done
	sorted := true // usual: grants come in time order
	for i := 1; i < len(done) && sorted; i++ {
		a, b := &done[i-1], &done[i]
		sorted = a.Start < b.Start || (a.Start == b.Start && a.Acquired.Index <= b.Acquired.Index)
	}
	if !sorted { // a stable sort leaves sorted holdings unchanged
		slices.SortStableFunc(done, func(a, b holding) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Acquired.Index, b.Acquired.Index))
		})
	}
	return done
}

// holdingsFinder follows a history's grants, renewals and releases into
// holdings. done holds every holding from its grant on (finished in place),
// in the order of the grants; builders track the ones still open. Builders
// are carved from blocks that never move (the tables point into them), and
// a released holding's builder, to which no table points any more, is used
// again.
type holdingsFinder struct {
	done     []holding
	builders []holdingBuilder
	free     []*holdingBuilder
	active   holdTable[*holdingBuilder] // node+key -> current holding
	byOwner  holdTable[*holdingBuilder] // node+owner -> current holding, for storage operations
}

// newBuilder is a builder holding b, reused when one is free.
func (f *holdingsFinder) newBuilder(b holdingBuilder) *holdingBuilder {
	if n := len(f.free); n > 0 {
		p := f.free[n-1]
		f.free = f.free[:n-1]
		*p = b
		return p
	}
	if len(f.builders) == cap(f.builders) {
		f.builders = make([]holdingBuilder, 0, cap(f.builders))
	}
	f.builders = append(f.builders, b)
	return &f.builders[len(f.builders)-1]
}

// finish ends b's holding at releaseAt (by ended), or at its lease's
// deadline if that came first — unless the holder used it later.
func (f *holdingsFinder) finish(b *holdingBuilder, releaseAt int64, ended *history.Event) {
	h := &f.done[b.idx]
	h.End, h.Ended = releaseAt, ended
	if h.Deadline != nil && *h.Deadline < releaseAt {
		h.End, h.Ended = *h.Deadline, nil
		if b.lastOp != nil && b.lastOp.Time > *h.Deadline {
			h.End, h.Ended = b.lastOp.Time, b.lastOp
		}
	}
	if h.End < h.Start {
		h.End = h.Start
	}
}

// storageOp notes the invocation e of a storage operation as its holding's
// last. It carries the owner of the lease it runs under (its key is the
// resource's, which need not be the lock's).
func (f *holdingsFinder) storageOp(e *history.Event) {
	var b *holdingBuilder
	if e.Owner != "" {
		b, _ = f.byOwner.get(holdKey{e.Node, e.Owner})
	}
	if b == nil {
		b, _ = f.active.get(holdKey{e.Node, e.Key})
	}
	if b != nil {
		b.lastOp = e
	}
}

// lockOp follows a grant (an acquire's ok: a new holding, or a reentrant
// one counted), a renewal's ok and a release's invocation.
func (f *holdingsFinder) lockOp(e *history.Event) {
	grant, renewal, release := e.F == history.FAcquire && e.Type == history.OK, e.F == history.FRenew && e.Type == history.OK,
		e.F == history.FRelease && e.Type == history.Invoke
	if !grant && !renewal && !release {
		return // nothing below looks at it
	}
	k := holdKey{e.Node, e.Key}
	b, _ := f.active.get(k)
	var h *holding
	if b != nil {
		h = &f.done[b.idx]
	}
	switch {
	case grant:
		if b != nil && h.Owner == e.Owner {
			b.count++
			if e.Deadline != nil {
				h.Deadline = e.Deadline
			}
			return
		}
		if b != nil { // a new grant while the old one was never released
			f.finish(b, e.Time, e)
		}
		f.done = append(f.done, holding{Key: e.Key, Node: e.Node, Owner: e.Owner,
			Token: e.Token, Start: e.Time, Acquired: e, Deadline: e.Deadline})
		nb := f.newBuilder(holdingBuilder{count: 1, idx: len(f.done) - 1})
		f.active.set(k, nb)
		if e.Owner != "" {
			f.byOwner.set(holdKey{e.Node, e.Owner}, nb)
		}
	case b == nil:
	case renewal && e.Owner == h.Owner:
		if e.Deadline != nil {
			h.Deadline = e.Deadline
		}
	case release && (e.Owner == "" || e.Owner == h.Owner):
		b.count--
		if b.count <= 0 {
			h.Released = true
			f.finish(b, e.Time, e)
			f.active.del(k)
			// The owner's entry points to b, or to a later grant of the
			// owner (which it forgets): either way nothing points to b.
			f.byOwner.del(holdKey{e.Node, h.Owner})
			f.free = append(f.free, b)
		}
	}
}

// Overlap is a period in which two clients both believed they held a lock.
type Overlap struct {
	A, B       Holding
	Start, End int64
}

// Length is the overlap's duration.
func (o Overlap) Length() time.Duration { return time.Duration(o.End - o.Start) }

// ms renders a duration the way every duration is printed
// (history.FormatDuration): 104.6ms, 10.005s.
func ms(d time.Duration) string { return history.FormatDuration(int64(d)) }

// Overlaps finds every overlap between holdings of different clients on the
// same key, by a sweep over the intervals ordered by start.
func Overlaps(hs []Holding) []Overlap {
	return overlaps(len(hs), func(i int) span { return span{hs[i].Key, hs[i].Node, hs[i].Start, hs[i].End} },
		func(i int) Holding { return hs[i] })
}

// span is what Overlaps compares of a holding.
type span struct {
	key, node  string
	start, end int64
}

// overlaps is Overlaps of n holdings, whose spans at gives and full makes
// whole.
func overlaps(n int, at func(i int) span, full func(i int) Holding) []Overlap {
	var out []Overlap
	var active []int32 // indexes of the holdings
	for i := range n {
		h := at(i)
		kept := active[:0]
		for _, j := range active {
			if at(int(j)).end > h.start {
				kept = append(kept, j)
			}
		}
		active = kept
		for _, j := range active {
			if a := at(int(j)); a.key == h.key && a.node != h.node {
				out = append(out, Overlap{A: full(int(j)), B: full(i), Start: h.start, End: min(a.end, h.end)})
			}
		}
		active = append(active, int32(i))
	}
	return out
}

// Applies reports whether some acquire succeeded.
func (MutualExclusion) Applies(events []history.Event) (bool, string) {
	return appliesIfAny(events, history.FAcquire, history.OK, "no acquire succeeded: nobody held a lock")
}

// Check reports every overlap.
func (c MutualExclusion) Check(events []history.Event) Verdict {
	return c.checkPaired(completed(events))
}

func (c MutualExclusion) checkPaired(h *history.Paired) Verdict {
	hs := holdings(h)
	if len(hs) == 0 {
		return Verdict{Result: Unknown, Reason: "no successful acquire in the history: nothing to check"}
	}
	ovs := overlaps(len(hs), func(i int) span { return span{hs[i].Key, hs[i].Node, hs[i].Start, hs[i].End} },
		func(i int) Holding { return hs[i].full() })
	stats := map[string]float64{"holdings": float64(len(hs)), "overlaps": float64(len(ovs))}
	if len(ovs) == 0 {
		return Verdict{Result: Valid, Stats: stats, Reason: fmt.Sprintf("%d holdings, no two clients believed they held the same lock at once", len(hs))}
	}
	var total, longest time.Duration
	for _, o := range ovs {
		total += o.Length()
		longest = max(longest, o.Length())
	}
	stats["overlap-total-ms"] = float64(total.Milliseconds())
	stats["overlap-longest-ms"] = float64(longest.Milliseconds())
	limit := c.MaxReported
	if limit == 0 {
		limit = 5
	}
	cx := &Counterexample{}
	for i, o := range ovs {
		if i == limit {
			cx.Explanation = append(cx.Explanation, fmt.Sprintf("... and %d more overlaps.", len(ovs)-limit))
			break
		}
		cx.Explanation = append(cx.Explanation, describeOverlap(o))
		if i == 0 {
			cx.Events = overlapEvents(o)
			cx.Faults = faultsDuring(h.Recorded(), o.A.Start, o.End, o.A.Node, o.B.Node)
			for _, f := range cx.Faults {
				cx.Explanation = append(cx.Explanation, "  during fault: "+f.String())
			}
		}
	}
	return Verdict{Result: Invalid, Stats: stats, Counterexample: cx,
		Reason: fmt.Sprintf("%d overlap%s: two clients believed they held the same lock at once (longest %s, total %s)",
			len(ovs), plural(len(ovs)), ms(longest), ms(total))}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func describeHolding(h Holding) string {
	s := fmt.Sprintf("%s held %q", h.Node, h.Key)
	if h.Token != nil {
		s += fmt.Sprintf(" with token %d", *h.Token)
	}
	s += fmt.Sprintf(" from %s", history.FormatTime(h.Start))
	switch {
	case h.Ended != nil && h.Ended.F == history.FRelease:
		s += " until its release at " + history.FormatTime(h.End)
	case h.Ended != nil && h.Deadline != nil && h.End > *h.Deadline:
		s += fmt.Sprintf(" until its %s at %s, after its lease deadline %s", h.Ended.F, history.FormatTime(h.End), history.FormatTime(*h.Deadline))
	case h.Ended != nil:
		s += fmt.Sprintf(" until its next %s at %s", h.Ended.F, history.FormatTime(h.End))
	case h.Deadline != nil && h.End == *h.Deadline:
		s += " until its lease deadline " + history.FormatTime(h.End)
	default:
		s += " until the end of the history at " + history.FormatTime(h.End)
	}
	return s
}

func describeOverlap(o Overlap) string {
	return fmt.Sprintf("Overlap of %s on %q from %s to %s: %s; %s.", ms(o.Length()), o.A.Key,
		history.FormatTime(o.Start), history.FormatTime(o.End), describeHolding(o.A), describeHolding(o.B))
}

// overlapEvents are the events that bound the two holdings: each acquire's
// completion and the event that ended each belief (a release, or an operation
// after the lease deadline), in order.
func overlapEvents(o Overlap) []history.Event {
	out := []history.Event{o.A.Acquired, o.B.Acquired}
	for _, h := range []Holding{o.A, o.B} {
		if h.Ended != nil {
			out = append(out, *h.Ended)
		}
	}
	slices.SortFunc(out, func(x, y history.Event) int { return cmp.Compare(x.Index, y.Index) })
	return slices.CompactFunc(out, func(x, y history.Event) bool { return x.Index == y.Index })
}

// isAre is the verb that agrees with a count.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
