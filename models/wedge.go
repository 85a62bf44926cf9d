package models

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// ServerGrant is one grant of the servers' own record (in the simulator,
// lockapi.GrantLog), as the liveness check reads it: facts a history of
// what clients observed cannot hold. A history checked on its own (locklab
// check) has none, and the rules that need them are not applied.
type ServerGrant struct {
	// Key and Owner are the lock and the value or acquirer id it was given
	// to; Client is the node that asked, Server the node that granted it.
	Key, Owner, Client, Server string
	// At is when the server granted it (true time, ns).
	At int64
	// Lease says the server promised a lease end (a TTL) at some point:
	// the grant ends by itself.
	Lease bool
	// Standing says the grant was still in force when the run ended: never
	// released, removed or revoked, and without a lease.
	Standing bool
	// Ended is when the grant stopped holding the lock for its owner (true
	// time, ns): its lease ran out, it was released, removed or revoked; 0
	// if it never did.
	Ended int64
	// Holds are the hold counts a reentrant lock's server kept for the
	// owner while the grant lasted, in order (nil: the lock counts none).
	Holds []HoldCount
}

// HoldCount is how many holds a reentrant lock's server counted for a
// grant's owner from true time At (ns) on.
type HoldCount struct {
	At    int64
	Holds int
}

// wedge is a grant without a lease that never ended while the clients that
// wanted its lock failed to get it until the end of the history.
type wedge struct {
	grant ServerGrant
	// from is when nobody (as the clients saw it) held the lock any more.
	from int64
	// tries and clients count the acquire attempts made after from.
	tries   int
	clients []string
	// fault is the fault window that caused it, if any.
	fault *faultWindow
}

// findWedge finds the first standing grant of grants that wedged its lock:
// no client believed it held the lock from some time until the end (from),
// at least stallMax before the end, clients other than the grant's
// (an acquire by the grant's own client may see its own value) tried to
// acquire it after from and none succeeded. Faults do not excuse a wedge:
// a lock without a lease that nobody holds and nobody can take stays so.
func findWedge(grants []ServerGrant, ops []op, hs []holding, faults []faultWindow, end int64, stallMax time.Duration) *wedge {
	for _, g := range grants {
		if !g.Standing || g.Lease || g.At > end {
			continue
		}
		from := g.At
		held := false
		for i := range hs {
			if hs[i].Key != g.Key {
				continue
			}
			if hs[i].End >= end {
				held = true // a client believes it holds the lock at the end
				break
			}
			from = max(from, hs[i].End)
		}
		if held || time.Duration(end-from) <= stallMax {
			continue
		}
		w := wedge{grant: g, from: from}
		ok, last := false, int64(-1)
		for _, o := range ops {
			if o.Func() != history.FAcquire || o.Invoke.Key != g.Key || o.Invoke.Time < from {
				continue
			}
			if o.Outcome() == history.OK && o.Completion.Time >= from {
				ok = true
				break
			}
			client := clientName(o)
			if client == g.Client {
				continue
			}
			w.tries++
			last = max(last, completionTime(o, end))
			if !slices.Contains(w.clients, client) {
				w.clients = append(w.clients, client)
			}
		}
		// The attempts must go on until the end: the last one ended (or was
		// still waiting) within stallMax of it.
		if ok || w.tries == 0 || time.Duration(end-last) > stallMax {
			continue
		}
		slices.Sort(w.clients)
		w.fault = wedgeFault(faults, g)
		return &w
	}
	return nil
}

// wedgeSlack is how long after a fault ended a grant is still its doing: a
// request held by a cut lands when the cut heals.
const wedgeSlack = int64(time.Second)

// wedgeFault is the fault that caused g to stand. It prefers faults on g's
// client or server (or on every node): the one active when g was made or
// that ended just before (the request held by a cut lands at the heal; the
// reply that would have told the client, or the command that would have set
// the lease, cut off), else the first that began after it (the client cut
// off before it could set the lease or release); then any fault in the same
// order. Nil when none fits.
func wedgeFault(faults []faultWindow, g ServerGrant) *faultWindow {
	involves := func(f *faultWindow) bool {
		return len(f.Start.Targets) == 0 || slices.Contains(f.Start.Targets, g.Client) || slices.Contains(f.Start.Targets, g.Server)
	}
	for _, mine := range []bool{true, false} {
		var around, after *faultWindow
		for i := range faults {
			f := &faults[i]
			if f.Start.F == history.FLockDelay || f.Start.F == "clock-drift" || (mine && !involves(f)) {
				continue
			}
			if f.Start.Time <= g.At && f.End() >= g.At-wedgeSlack {
				if around == nil || f.Start.Time > around.Start.Time {
					around = f
				}
			}
			if f.Start.Time > g.At && (after == nil || f.Start.Time < after.Start.Time) {
				after = f
			}
		}
		if around != nil {
			return around
		}
		if after != nil {
			return after
		}
	}
	return nil
}

func clientName(o op) string {
	if o.Invoke.Node != "" {
		return o.Invoke.Node
	}
	return fmt.Sprintf("p%d", o.Invoke.Process)
}

// problem is the wedge in one sentence (the verdict's reason).
func (w *wedge) problem(end int64) string {
	g := w.grant
	s := fmt.Sprintf("wedged by the grant of %q to %s (owner %q) by %s at %s, which has no lease and was never released",
		g.Key, g.Client, g.Owner, g.Server, history.FormatTime(g.At))
	if w.fault != nil {
		s += ", left standing by the " + describeWindow(*w.fault)
	} else {
		s += ", with no fault to blame"
	}
	return s + fmt.Sprintf(": %s tried %d time(s) to acquire it from %s until the end at %s (%s) and never got it",
		strings.Join(w.clients, ", "), w.tries, history.FormatTime(w.from), history.FormatTime(end), ms(time.Duration(end-w.from)))
}

// describeWindow is a fault window as "partition c1 from 12.000s to 20.000s".
func describeWindow(f faultWindow) string {
	s := strings.TrimSpace(f.Start.F + " " + strings.Join(f.Start.Targets, ","))
	if f.Stop == nil || f.Stop.Index < 0 {
		return s + " fault from " + history.FormatTime(f.Start.Time) + " to the end"
	}
	return s + " fault from " + history.FormatTime(f.Start.Time) + " to " + history.FormatTime(f.Stop.Time)
}

// counterexample is the wedge's story.
func (w *wedge) counterexample(ops []op, end int64) *Counterexample {
	g := w.grant
	lines := []string{
		fmt.Sprintf("The servers' record: %s granted %q to %s (owner %q) at %s without a lease, and nothing ended the grant before the end of the run at %s.",
			g.Server, g.Key, g.Client, g.Owner, history.FormatTime(g.At), history.FormatTime(end)),
		fmt.Sprintf("From %s no client believed it held %q, and %s tried %d time(s) to acquire it, in vain: the lock is wedged, and faults do not excuse it, since nothing will ever free it.",
			history.FormatTime(w.from), g.Key, strings.Join(w.clients, ", "), w.tries),
	}
	if w.fault != nil {
		lines = append(lines, "The fault that left the grant standing: the "+describeWindow(*w.fault)+".")
	}
	var evs []history.Event
	for _, o := range ops {
		if o.Func() != history.FAcquire || o.Invoke.Key != g.Key || clientName(o) != g.Client {
			continue
		}
		if o.Invoke.Time <= g.At && completionTime(o, end) >= g.At-int64(time.Second) {
			evs = append(evs, opEvents(o)...)
		}
	}
	shown := 0
	for _, o := range ops {
		if shown >= maxStallEvents/2 || o.Func() != history.FAcquire || o.Invoke.Key != g.Key || o.Invoke.Time < w.from || clientName(o) == g.Client {
			continue
		}
		evs = append(evs, opEvents(o)...)
		shown++
	}
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	evs = slices.CompactFunc(evs, func(x, y history.Event) bool { return x.Index == y.Index })
	return &Counterexample{Explanation: lines, Events: evs}
}

// GrantDisagreements says, of the paired history h, for each grant of the servers' record made for
// an acquire its client recorded as fail (the request landed after the
// client gave up on it, or its reply was lost and the client, retrying,
// saw the lock held by its own grant), where the history and the record
// disagree: a fail is a promise that the acquire did not take effect (a
// grant the call gave back before it returned is no disagreement). At
// most max are told one by one; the rest are counted. quorum above 1 (a
// lock granted by a majority of instances) tells nothing: a grant of one
// instance of a failed acquire is the algorithm at work.
func GrantDisagreements(h *history.Paired, grants []ServerGrant, quorum, maxTold int) []string {
	if len(grants) == 0 || quorum > 1 || h == nil {
		return nil
	}
	type clientKey struct{ client, key string }
	byClient := map[clientKey][]op{}
	for _, o := range h.Ops() {
		if o.Func() == history.FAcquire {
			k := clientKey{clientName(o), o.Invoke.Key}
			byClient[k] = append(byClient[k], o)
		}
	}
	var out []string
	n := 0
	for _, g := range grants {
		acquires := byClient[clientKey{g.Client, g.Key}]
		i, _ := slices.BinarySearchFunc(acquires, g.At, func(o op, t int64) int {
			if o.Invoke.Time <= t {
				return -1
			}
			return 1
		})
		if i == 0 {
			continue
		}
		o := acquires[i-1]
		if o.Outcome() != history.Fail {
			continue
		}
		if g.At <= o.Completion.Time && g.Ended != 0 && g.Ended <= o.Completion.Time {
			continue // the call undid its grant (or let it run out) before it returned fail: honest
		}
		n++
		if len(out) >= maxTold {
			continue
		}
		when := "while it was waiting"
		if o.Completion.Time < g.At {
			when = fmt.Sprintf("%s after it gave up", ms(time.Duration(g.At-o.Completion.Time)))
		}
		out = append(out, fmt.Sprintf("the history and the servers' record disagree: %s's acquire of %q invoked at %s returned fail at %s, "+
			"but %s granted it to %s (owner %q) at %s, %s", g.Client, g.Key, history.FormatTime(o.Invoke.Time),
			history.FormatTime(o.Completion.Time), g.Server, g.Client, g.Owner, history.FormatTime(g.At), when))
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("the history and the servers' record disagree on %d more acquire(s) recorded as fail", n-len(out)))
	}
	return out
}
