package scenario

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/system"
)

// Kinds of violation: what made two clients hold the lock at once, or what
// let a write land outside its lease. A catalog variant declares the kind its
// counterexample shows (Variant.Kind); random exploration hunts for it.
const (
	// KindGCPause: the earlier holder was paused across its own lease deadline.
	KindGCPause = "gc-pause"
	// KindClockJump: a server's clock jumped or drifted, and the later holder's
	// grant came from that server, which had granted the earlier one too.
	KindClockJump = "clock-jump"
	// KindFailover: a replica was promoted, and the later holder's grant came
	// from it.
	KindFailover = "failover"
	// KindRestartRegrant: a server that granted the earlier holder crashed and
	// restarted without its state, then granted the later one.
	KindRestartRegrant = "restart-regrant"
	// KindNonOwnerRelease: a third client, no longer the holder, released the
	// lock while the earlier holder held it (a DEL unlock), and the later
	// holder got it.
	KindNonOwnerRelease = "non-owner-release"
	// KindLeaderClockAhead: a server whose wall clock was set ahead (jumped or
	// drifted forward) granted the later holder before the earlier holder's
	// lease ran out; unlike KindClockJump it need not have granted the earlier
	// one (leadership moved to it).
	KindLeaderClockAhead = "leader-clock-ahead"
	// KindHolderClock: a holder's own clock jumped or drifted around its
	// grant, and the two grants overlapped before the earlier lease ran out by
	// true time (a validity check fooled by the client's wall clock).
	KindHolderClock = "holder-clock"
	// KindSessionExpiry: the service expired the earlier holder's session
	// while it held the lock (a session-expired event, e.g. ZooKeeper's leader
	// on its clock), or a holder whose client knows no lease deadline was
	// paused or cut off while it held the lock, and the service granted the
	// lock again.
	KindSessionExpiry = "session-expiry"
	// KindDelayedWrite: a write the network delayed outlived its writer's
	// hold: another client was granted the lock while it was in flight.
	KindDelayedWrite = "delayed-write"
	// KindOther is an overlap no rule explains.
	KindOther = "other"
)

// Kinds are the kinds of violation ViolationKinds tells apart, KindOther last.
var Kinds = []string{KindGCPause, KindClockJump, KindFailover, KindRestartRegrant, KindNonOwnerRelease,
	KindLeaderClockAhead, KindHolderClock, KindSessionExpiry, KindDelayedWrite, KindOther}

// ViolationKinds classifies every time two clients held a lock at once by
// what caused it, and every write the network delayed past a new grant
// (KindDelayedWrite), sorted, each kind once. An overlap no rule explains is
// KindOther.
func ViolationKinds(events []history.Event) []string { return violationKinds(events, true, nil) }

// ViolationKinds is ViolationKinds(r.Events), without looking for
// overlapping holdings again when the run's mutual-exclusion check found
// none: that check derived the holdings from the same history, paired the
// same way, and is valid exactly when no two of them overlap.
func (r *Result) ViolationKinds() []string {
	overlaps := true
	for _, v := range r.Verdicts {
		if v.Check == (models.MutualExclusion{}).Name() && v.Result == models.Valid {
			overlaps = false
		}
	}
	return violationKinds(r.Events, overlaps, r.marks)
}

// violationKinds is ViolationKinds; without overlaps, it classifies only
// the delayed writes (the caller knows no two holdings overlap). marks, when
// not nil, are the indexes of the start and stop events (history.Paired's).
func violationKinds(events []history.Event, overlaps bool, marks []int32) []string {
	windows := faultWindowsOf(events, marks)
	var kinds []string
	var ovs []models.Overlap
	if overlaps {
		ovs = models.Overlaps(models.Holdings(events))
	}
	var clients map[string]bool
	if len(ovs) > 0 {
		clients = clientsOf(events)
	}
	for _, o := range ovs {
		found := causes(o, windows, events, clients)
		if len(found) == 0 {
			found = []string{KindOther}
		}
		kinds = append(kinds, found...)
	}
	if delayedWrite(events, windows) {
		kinds = append(kinds, KindDelayedWrite)
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// window is a fault (or system event) from its start to its stop.
type window struct {
	kind        string
	targets     []string
	detail      string
	start, stop int64
}

func faultWindowsOf(events []history.Event, marks []int32) []window {
	var out []window
	open := map[history.WindowKey]int{} // -> index in out
	n := len(events)
	if marks != nil { // only the start and stop events
		n = len(marks)
	}
	for k := range n {
		i := k
		if marks != nil {
			i = int(marks[k])
		}
		e := &events[i]
		if e.Type != history.Start && e.Type != history.Stop {
			continue // no key to build for the operations (most of the history)
		}
		key := history.WindowKeyOf(e)
		switch e.Type {
		case history.Start:
			open[key] = len(out)
			out = append(out, window{kind: e.F, targets: e.Targets, detail: e.Detail, start: e.Time, stop: -1})
		case history.Stop:
			if i, ok := open[key]; ok {
				out[i].stop = e.Time
				delete(open, key)
			}
		}
	}
	end := int64(0)
	if len(events) > 0 {
		end = events[len(events)-1].Time
	}
	for i := range out {
		// A clock step that stays (it starts and stops at once) lasts to the end.
		if out[i].stop < 0 || (out[i].kind == string(nemesis.ClockJump) && out[i].stop == out[i].start) {
			out[i].stop = end
		}
	}
	return out
}

// isClock reports whether a window moves a clock; ahead, whether it moves it
// forward (a jump by a positive amount, a positive drift).
func (w window) isClock() (clock, ahead bool) {
	clock = w.kind == string(nemesis.ClockJump) || w.kind == string(nemesis.ClockDrift)
	return clock, clock && !strings.Contains(w.detail, " -")
}

// causes lists the kinds that explain overlap o, A being the earlier holder.
// If B was granted the lock before A's own lease deadline, the service broke
// its lease: by a server clock that jumped or ran fast while holding A's key
// (a server that granted both), a server clock set ahead that granted B, a
// failover to the node that granted B, a restart of a server that granted
// both, a release by a third client, or a holder's own clock. If B came after A's
// deadline, A outlived its lease: by a pause across it. A holder without a
// deadline (a session) lost its lock to a pause or a cut.
func causes(o models.Overlap, windows []window, events []history.Event, clients map[string]bool) []string {
	if o.A.Deadline == nil {
		return sessionCauses(o, windows)
	}
	var out []string
	deadline := *o.A.Deadline
	early := o.B.Start < deadline
	for _, w := range windows {
		clock, ahead := w.isClock()
		both := grantedBy(o.A.Acquired.Detail, w.targets) && grantedBy(o.B.Acquired.Detail, w.targets)
		switch {
		case !early && w.kind == string(nemesis.Pause) && slices.Contains(w.targets, o.A.Node) && w.start <= deadline && w.stop >= deadline:
			out = append(out, KindGCPause)
		case early && clock && w.start <= o.B.Start && w.stop >= o.A.Start && both:
			out = append(out, KindClockJump)
		case early && clock && (slices.Contains(w.targets, o.A.Node) || slices.Contains(w.targets, o.B.Node)) &&
			w.start <= o.B.Start && w.stop >= o.A.Start:
			out = append(out, KindHolderClock)
		case early && ahead && w.start <= o.B.Start && w.stop >= o.B.Start && !slices.ContainsFunc(w.targets, func(n string) bool { return clients[n] }) &&
			(!hasGrantor(o.B.Acquired.Detail) || grantedBy(o.B.Acquired.Detail, w.targets)):
			out = append(out, KindLeaderClockAhead)
		case early && w.kind == string(system.EventFailover) && w.start >= o.A.Start && w.start <= o.B.Start && grantedBy(o.B.Acquired.Detail, w.targets[:1]):
			out = append(out, KindFailover)
		case early && w.kind == string(nemesis.Crash) && w.stop >= o.A.Start && w.stop <= o.B.Start && both:
			out = append(out, KindRestartRegrant)
		}
	}
	if early && releasedByAnother(o, events) {
		out = append(out, KindNonOwnerRelease)
	}
	if sessionExpired(o, windows) {
		out = append(out, KindSessionExpiry)
	}
	return out
}

// sessionExpired reports whether the service expired A's session (the
// session-expired event a session-based service records, e.g. ZooKeeper's
// leader on its clock) while A held the lock and before B's grant.
func sessionExpired(o models.Overlap, windows []window) bool {
	for _, w := range windows {
		if w.kind == string(system.EventSessionExpired) && slices.Contains(w.targets, o.A.Node) && w.start >= o.A.Start && w.start <= o.B.Start {
			return true
		}
	}
	return false
}

// sessionCauses: A's client knew no deadline; a pause or a cut of A that
// began while it held the lock and before B's grant let its session expire.
func sessionCauses(o models.Overlap, windows []window) []string {
	if sessionExpired(o, windows) {
		return []string{KindSessionExpiry}
	}
	for _, w := range windows {
		if (w.kind == string(nemesis.Pause) || w.kind == string(nemesis.Partition)) && slices.Contains(w.targets, o.A.Node) &&
			w.start >= o.A.Start && w.start <= o.B.Start {
			return []string{KindSessionExpiry}
		}
	}
	return nil
}

// releasedByAnother reports whether a client other than the two holders
// released the key successfully between A's grant and B's, a lock it no
// longer held (nonOwnerRelease).
func releasedByAnother(o models.Overlap, events []history.Event) bool {
	_, ok := nonOwnerRelease(o, events)
	return ok
}

// nonOwnerRelease is the first successful release of the key, between A's
// grant and B's, by a client other than the two holders, of a lock it no
// longer held: its own grant (the latest that returned to it before the
// release) came before A's, so the lock had passed on to A when its release
// deleted it. A third client granted after A took the lock over from A and
// released its own (a lease of A's that ran out early is another kind's
// story); a release whose grant the history does not show counts. It
// returns the release's completion and its invocation.
func nonOwnerRelease(o models.Overlap, events []history.Event) (rel [2]*history.Event, ok bool) {
	for i := range events {
		e := &events[i]
		if e.Time > o.B.Start {
			break
		}
		if e.F == history.FRelease && e.Type == history.OK && e.Key == o.A.Key && e.Time >= o.A.Start &&
			e.Node != o.A.Node && e.Node != o.B.Node {
			if granted, ok := grantedAt(events[:i], e); !ok || granted < o.A.Start {
				return [2]*history.Event{e, invocationOf(events[:i], e)}, true
			}
		}
	}
	return rel, false
}

// invocationOf is the invocation that e completes (nil when none is found).
func invocationOf(before []history.Event, e *history.Event) *history.Event {
	for i := len(before) - 1; i >= 0; i-- {
		if b := &before[i]; b.Process == e.Process && b.Type == history.Invoke {
			return b
		}
	}
	return nil
}

// grantedAt is when the latest acquire of the releaser of rel, on its key,
// that returned ok before it did (among before) returned; ok is false when
// there is none.
func grantedAt(before []history.Event, rel *history.Event) (int64, bool) {
	for i := len(before) - 1; i >= 0; i-- {
		e := &before[i]
		if e.F == history.FAcquire && e.Type == history.OK && e.Key == rel.Key && e.Node == rel.Node &&
			(rel.Owner == "" || e.Owner == rel.Owner) {
			return e.Time, true
		}
	}
	return 0, false
}

// delayedWrite reports whether a write invoked while a delay of its
// writer's messages to the storage was on, which did not come back ok in
// time, was overtaken by another client's grant of the same key before the
// delay ended.
func delayedWrite(events []history.Event, windows []window) bool {
	for _, w := range windows {
		if w.kind != string(nemesis.Delay) || !slices.Contains(w.targets, "storage") {
			continue
		}
		for i := range events {
			e := &events[i]
			if e.Type != history.Info || e.F != history.FWrite || !slices.Contains(w.targets, e.Node) {
				continue
			}
			inv := invocationTime(events[:i], e)
			if inv < w.start || inv > w.stop {
				continue
			}
			for j := range events[i:] {
				g := &events[i+j]
				if g.Time > w.stop {
					break
				}
				if g.F == history.FAcquire && g.Type == history.OK && g.Key == e.Key && g.Node != e.Node {
					return true
				}
			}
		}
	}
	return false
}

// invocationTime is the time of the invocation that e completes (e's time
// when none is found).
func invocationTime(before []history.Event, e *history.Event) int64 {
	for i := len(before) - 1; i >= 0; i-- {
		if b := &before[i]; b.Process == e.Process && b.Type == history.Invoke {
			return b.Time
		}
	}
	return e.Time
}

// clientsOf is the set of client nodes of a history.
func clientsOf(events []history.Event) map[string]bool {
	out := map[string]bool{}
	for i := range events {
		e := &events[i]
		if e.Process != history.NemesisProcess {
			out[e.Node] = true
		}
	}
	return out
}

// hasGrantor reports whether a grant's detail names the nodes that granted it.
func hasGrantor(detail string) bool { return strings.Contains(detail, "granted by ") }

// grantedBy reports whether a grant's detail names one of the nodes.
func grantedBy(detail string, nodes []string) bool {
	_, list, found := strings.Cut(detail, "granted by ")
	if !found {
		return false
	}
	list, _, _ = strings.Cut(list, " ")
	list = strings.TrimSuffix(list, ",")
	for _, n := range strings.Split(list, ",") {
		if slices.Contains(nodes, n) {
			return true
		}
	}
	return false
}
