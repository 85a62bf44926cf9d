package lockapi

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"
)

// Grant is one grant of a lock as the server that made it recorded it, in
// true time. In the simulator the servers' record is the ground truth a run's
// verdicts can be checked against: it is kept beside the history, never in it
// (a history holds only what clients observed).
type Grant struct {
	// Scope is the lock state the grant lives in: one Redis deployment (its
	// primary and replicas share one), one Redlock instance, the raft group.
	Scope string
	// Server is the node that executed the grant.
	Server string
	// Key and Owner are the lock and the value or acquirer id it was given to.
	Key, Owner string
	// Client is the node that asked.
	Client string
	// At is when the server granted it.
	At time.Duration
	// Until is when the lease the server promised runs out: the server's
	// moment of granting (or of stamping the command) plus the lease, moved by
	// each renewal or reentrant acquire. 0 for a lock without leases.
	Until time.Duration
	// Released is when the owner gave it back on this scope (0: never).
	Released time.Duration
	// RemovedBy is the client node that deleted the lock although it was not
	// the owner's (a plain DEL of someone else's key), and Removed when.
	RemovedBy string
	Removed   time.Duration
	// Revoked is true when the server itself ended the grant (Released is
	// then when, RemovedBy the server) while its owner held it: a lock
	// without a lease taken from its holder (Revoked).
	Revoked bool
	// Holds are the hold counts a reentrant lock's server kept for the
	// owner while the grant lasted, each from its moment on, in order (nil:
	// the lock counts no holds). A retried acquire that the server applied
	// more than once shows here as more holds than the client took.
	Holds []HoldCount
}

// HoldCount is how many holds a reentrant lock's server counted for an
// owner from true time At on.
type HoldCount struct {
	At    time.Duration
	Holds int
}

type promise struct{ made, until time.Duration }

// grant is a Grant as the log keeps it: the names interned (indexes into the
// log's names), the renewals' promises apart. It holds one pointer (the
// owner), so a run's grants are cheap to keep.
type grant struct {
	owner                                  string
	at, until, released, removed, promised time.Duration // promised: the grant's own lease end
	scope, server, key, client, removedBy  uint32        // removedBy is 0 (names "") when none
	renewals                               int32         // 1 + index in GrantLog.renewals; 0: none
	holds                                  int32         // 1 + index in GrantLog.holds; 0: none
	revoked                                bool
}

// end is when the grant stopped protecting its owner: its lease ran out or
// the owner released it (a removal by someone else does not end the promise).
func (g *Grant) end() time.Duration {
	end := time.Duration(math.MaxInt64)
	if g.Until > 0 {
		end = g.Until
	}
	if g.Released > 0 && g.Released < end {
		end = g.Released
	}
	return end
}

// GrantLog collects the grants the servers of one deployment made. A nil
// *GrantLog records nothing, so servers call it unconditionally.
type GrantLog struct {
	off      bool // Record(false): nothing is recorded
	quorum   int
	chunks   [][]grant // the grants in order; a chunk never moves
	n        int
	names    names
	renewals [][]promise         // the renewals' promises of the grants that had any
	holds    [][]HoldCount       // the hold counts of the grants of reentrant locks
	open     map[ownedKey]*grant // each owner's latest grant of a key in a scope, until released
}

type ownedKey struct {
	scope, key uint32
	owner      string
}

// names interns the scope, server, key and client names of a log: a name's
// id is its index, and id 0 is "". A small cache keyed by the string's
// address finds the names servers pass again and again (their own, their
// scope's, their clients') without hashing them; it holds the strings, so an
// address it holds is never reused for other bytes.
type names struct {
	list  []string
	ids   map[string]uint32
	cache [16]string
	cids  [16]uint32
}

func (ns *names) slot(s string) int {
	return int((uintptr(unsafe.Pointer(unsafe.StringData(s)))>>3)^uintptr(len(s))) & (len(ns.cache) - 1)
}

// id interns s.
func (ns *names) id(s string) uint32 {
	if s == "" {
		return 0
	}
	i := ns.slot(s)
	if c := ns.cache[i]; len(c) == len(s) && unsafe.StringData(c) == unsafe.StringData(s) {
		return ns.cids[i]
	}
	id, ok := ns.ids[s]
	if !ok {
		if ns.ids == nil {
			ns.ids = map[string]uint32{}
			ns.list = append(ns.list, "")
		}
		id = uint32(len(ns.list))
		ns.list = append(ns.list, s)
		ns.ids[s] = id
	}
	ns.cache[i], ns.cids[i] = s, id
	return id
}

// lookup is s's id if s was interned.
func (ns *names) lookup(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	id, ok := ns.ids[s]
	return id, ok
}

// name is the name of id.
func (ns *names) name(id uint32) string {
	if id == 0 {
		return ""
	}
	return ns.list[id]
}

// NewGrantLog returns an empty log. quorum is how many scopes must hold
// grants to the same owner for it to hold the lock (Redlock's majority); 0 or
// 1 for a deployment with one lock state.
func NewGrantLog(quorum int) *GrantLog {
	return &GrantLog{quorum: max(quorum, 1), open: map[ownedKey]*grant{}}
}

// Quorum is how many scopes must hold a grant for the lock to be held (1
// but for Redlock's instances).
func (l *GrantLog) Quorum() int {
	if l == nil {
		return 1
	}
	return l.quorum
}

// Record turns recording on (the default of a new log) or off. A run that
// nobody audits against its servers' record turns it off: the servers then
// spare the record's memory and time (Recording).
func (l *GrantLog) Record(on bool) {
	if l != nil {
		l.off = !on
	}
}

// Recording reports whether the log records what it is told: a server asks
// before it gathers what to record.
func (l *GrantLog) Recording() bool { return l != nil && !l.off }

// The grants are kept in chunks of minGrantChunk, doubling up to
// maxGrantChunk: most runs grant little.
const (
	minGrantChunk = 16
	maxGrantChunk = 256
)

// add returns a zero grant appended to the log.
func (l *GrantLog) add() *grant {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == cap(l.chunks[k-1]) {
		size := minGrantChunk
		if k > 0 {
			size = min(2*cap(l.chunks[k-1]), maxGrantChunk)
		}
		l.chunks = append(l.chunks, make([]grant, 0, size))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = (*c)[:len(*c)+1]
	l.n++
	return &(*c)[len(*c)-1]
}

// all yields every grant, in order.
func (l *GrantLog) all(yield func(g *grant) bool) {
	for _, c := range l.chunks {
		for i := range c {
			if !yield(&c[i]) {
				return
			}
		}
	}
}

// Granted records that server granted key to owner (asked by client) in scope
// at true time at, with a lease promised until until (0: no lease). Renewals
// and releases of owner in scope apply to this grant from now on.
func (l *GrantLog) Granted(scope, server, key, owner, client string, at, until time.Duration) {
	if !l.Recording() {
		return
	}
	g := l.add()
	*g = grant{owner: owner, at: at, until: until, promised: until,
		scope: l.names.id(scope), server: l.names.id(server), key: l.names.id(key), client: l.names.id(client)}
	l.open[ownedKey{g.scope, g.key, owner}] = g
}

// openGrant is owner's open grant of key in scope (nil if none) and its key
// in open.
func (l *GrantLog) openGrant(scope, key, owner string) (*grant, ownedKey) {
	s, ok := l.names.lookup(scope)
	if !ok {
		return nil, ownedKey{}
	}
	k, ok := l.names.lookup(key)
	if !ok {
		return nil, ownedKey{}
	}
	ok2 := ownedKey{s, k, owner}
	return l.open[ok2], ok2
}

// Renewed records that scope extended owner's grant of key until until at
// true time at (a renewal, a reentrant acquire).
func (l *GrantLog) Renewed(scope, key, owner string, at, until time.Duration) {
	if !l.Recording() {
		return
	}
	if g, _ := l.openGrant(scope, key, owner); g != nil && until > g.until {
		g.until = until
		if g.renewals == 0 {
			l.renewals = append(l.renewals, nil)
			g.renewals = int32(len(l.renewals))
		}
		l.renewals[g.renewals-1] = append(l.renewals[g.renewals-1], promise{at, until})
	}
}

// Counted records that a reentrant lock's server counted holds holds of
// owner's open grant of key in scope from true time at on: after the grant,
// a reentrant acquire, or a release that left the lock held.
func (l *GrantLog) Counted(scope, key, owner string, at time.Duration, holds int) {
	if !l.Recording() {
		return
	}
	g, _ := l.openGrant(scope, key, owner)
	if g == nil {
		return
	}
	if g.holds == 0 {
		l.holds = append(l.holds, nil)
		g.holds = int32(len(l.holds))
	}
	l.holds[g.holds-1] = append(l.holds[g.holds-1], HoldCount{At: at, Holds: holds})
}

// promises are the lease ends g promised, with when: the grant's own and
// each renewal's, in order.
func (l *GrantLog) promises(g *grant) []promise {
	first := []promise{{g.at, g.promised}}
	if g.renewals == 0 {
		return first
	}
	return append(first, l.renewals[g.renewals-1]...)
}

// Promised is until when, as of true time at, the servers had promised
// owner the lock key (0 if they had not granted it): the latest lease end
// promised by then, with a quorum the latest end that a quorum of scopes
// promised. A client's lease deadline must not be later: it must count its
// lease from before its request reached a server.
func (l *GrantLog) Promised(key, owner string, at time.Duration) time.Duration {
	if l == nil {
		return 0
	}
	k, ok := l.names.lookup(key)
	if !ok {
		return 0
	}
	byScope := map[uint32]time.Duration{}
	var scopes []uint32
	for g := range l.all {
		if g.key != k || g.owner != owner {
			continue
		}
		for _, p := range l.promises(g) {
			if p.made > at {
				break
			}
			if _, seen := byScope[g.scope]; !seen {
				scopes = append(scopes, g.scope)
			}
			byScope[g.scope] = max(byScope[g.scope], p.until)
		}
	}
	ends := make([]time.Duration, 0, len(scopes))
	for _, s := range scopes {
		ends = append(ends, byScope[s])
	}
	slices.SortFunc(ends, func(a, b time.Duration) int { return cmp.Compare(b, a) })
	if l.quorum <= 1 {
		if len(ends) == 0 {
			return 0
		}
		return ends[0]
	}
	if len(ends) < l.quorum {
		return 0
	}
	return ends[l.quorum-1]
}

// Released records that owner gave key back in scope at true time at.
func (l *GrantLog) Released(scope, key, owner string, at time.Duration) {
	if g := l.closeGrant(scope, key, owner); g != nil {
		g.released = at
	}
}

// closeGrant takes owner's open grant of key in scope out of the open
// grants, for the record of how it ended, and returns it; nil when the log
// does not record or no such grant is open.
func (l *GrantLog) closeGrant(scope, key, owner string) *grant {
	if !l.Recording() {
		return nil
	}
	g, k := l.openGrant(scope, key, owner)
	if g != nil {
		delete(l.open, k)
	}
	return g
}

// Removed records that client node by deleted owner's key in scope without
// naming the owner (a plain DEL): a release when the grant was by's own, a
// removal of someone else's lock otherwise.
func (l *GrantLog) Removed(scope, key, owner, by string, at time.Duration) {
	g := l.closeGrant(scope, key, owner)
	if g == nil {
		return
	}
	if l.names.name(g.client) == by {
		g.released = at
	} else {
		g.removedBy, g.removed = l.names.id(by), at
	}
}

// Revoked records that server by itself ended owner's grant of key in
// scope at true time at, while the owner held it: the owner had not given
// it back and no lease the server promised had run out (a lock without a
// lease taken from its holder: a transaction aborted because its
// connection fell silent, a session ended, a crash that lost the lock).
// The holding ends there, and the revocation is a broken promise
// (Breaches), as a removal by someone else is. A grant whose lease had run
// out by then just ends with it.
func (l *GrantLog) Revoked(scope, key, owner, by string, at time.Duration) {
	g := l.closeGrant(scope, key, owner)
	if g == nil || (g.until > 0 && g.until <= at) {
		return
	}
	g.released, g.removedBy, g.removed, g.revoked = at, l.names.id(by), at, true
}

// export is g as a Grant.
func (l *GrantLog) export(g *grant) Grant {
	ns := &l.names
	return Grant{Scope: ns.name(g.scope), Server: ns.name(g.server), Key: ns.name(g.key), Owner: g.owner,
		Client: ns.name(g.client), At: g.at, Until: g.until, Released: g.released,
		RemovedBy: ns.name(g.removedBy), Removed: g.removed, Revoked: g.revoked, Holds: l.holdsOf(g)}
}

// holdsOf is a copy of g's hold counts (nil if none).
func (l *GrantLog) holdsOf(g *grant) []HoldCount {
	if g.holds == 0 {
		return nil
	}
	return slices.Clone(l.holds[g.holds-1])
}

// Grants returns a copy of the record, in the order the grants were made.
func (l *GrantLog) Grants() []Grant {
	if l == nil {
		return nil
	}
	out := make([]Grant, 0, l.n)
	for g := range l.all {
		out = append(out, l.export(g))
	}
	return out
}

// Holding is a span of true time in which one owner held a lock by the
// servers' record: one scope's grant, or (with a quorum) grants of at least
// the quorum of scopes at once.
type Holding struct {
	Key, Owner, Client string
	// From and To bound the holding; To is math.MaxInt64 for a lock without
	// a lease that was never released.
	From, To time.Duration
}

func (h Holding) String() string {
	to := "the end"
	if h.To != math.MaxInt64 {
		to = fmt.Sprintf("%.3fs", h.To.Seconds())
	}
	return fmt.Sprintf("%s as %s from %.3fs to %s", h.Client, h.Owner, h.From.Seconds(), to)
}

// Holdings are the spans in which owners held locks by the record, ordered
// by key, start and owner.
func (l *GrantLog) Holdings() []Holding {
	if l == nil {
		return nil
	}
	type ko struct{ key, owner string }
	byOwner := map[ko][]*Grant{}
	var order []ko
	grants := l.Grants()
	for i := range grants {
		g := &grants[i]
		k := ko{g.Key, g.Owner}
		if _, seen := byOwner[k]; !seen {
			order = append(order, k)
		}
		byOwner[k] = append(byOwner[k], g)
	}
	var out []Holding
	for _, k := range order {
		gs := byOwner[k]
		if l.quorum <= 1 {
			for _, g := range gs {
				if g.end() > g.At {
					out = append(out, Holding{Key: g.Key, Owner: g.Owner, Client: g.Client, From: g.At, To: g.end()})
				}
			}
			continue
		}
		out = append(out, quorumHoldings(gs, l.quorum)...)
	}
	slices.SortFunc(out, func(a, b Holding) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.From, b.From), cmp.Compare(a.Owner, b.Owner))
	})
	return out
}

// quorumHoldings are the spans in which at least quorum of one owner's
// grants (in distinct scopes) were in force at once.
func quorumHoldings(gs []*Grant, quorum int) []Holding {
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, g := range gs {
		if g.end() > g.At {
			edges = append(edges, edge{g.At, 1}, edge{g.end(), -1})
		}
	}
	// Ends before starts at the same instant: touching grants do not add up.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	var out []Holding
	n := 0
	var from time.Duration
	for _, e := range edges {
		n += e.delta
		switch {
		case e.delta > 0 && n == quorum:
			from = e.at
		case e.delta < 0 && n == quorum-1 && e.at > from:
			out = append(out, Holding{Key: gs[0].Key, Owner: gs[0].Owner, Client: gs[0].Client, From: from, To: e.at})
		}
	}
	return out
}

// Breach is a broken promise in the servers' record: two owners held the
// same lock at once, or a client deleted (or the server revoked) a lock that
// someone else held.
type Breach struct {
	Key string
	// Held is the holding that was broken; Other the one that broke it (for a
	// removal, only its Client is set).
	Held, Other Holding
	// From and To bound the overlap (for a removal, the moment of it).
	From, To time.Duration
	// Removal is true for a deletion of someone else's lock (or its
	// revocation by the server: Other.Client is the server).
	Removal bool
}

func (b Breach) String() string {
	if b.Removal {
		return fmt.Sprintf("%q: %s deleted the lock of %s at %.3fs", b.Key, b.Other.Client, b.Held, b.From.Seconds())
	}
	return fmt.Sprintf("%q: %s and %s overlap from %.3fs to %.3fs", b.Key, b.Held, b.Other, b.From.Seconds(), b.To.Seconds())
}

// Breaches are the broken promises of the record: every overlap of two
// owners' holdings of a key, and every removal of a lock while its owner's
// holding lasted (with a quorum, a removal from one scope breaks nothing by
// itself), ordered by key and time.
func (l *GrantLog) Breaches() []Breach {
	if l == nil {
		return nil
	}
	hs := l.Holdings()
	var out []Breach
	for i, a := range hs {
		for _, b := range hs[i+1:] {
			if b.Key != a.Key || b.From >= a.To {
				if b.Key != a.Key {
					break
				}
				continue
			}
			if b.Owner != a.Owner {
				out = append(out, Breach{Key: a.Key, Held: a, Other: b, From: b.From, To: min(a.To, b.To)})
			}
		}
	}
	grants := l.Grants()
	for i := range grants {
		g := &grants[i]
		if l.quorum > 1 || g.RemovedBy == "" || (g.Removed >= g.end() && !g.Revoked) {
			continue
		}
		held := Holding{Key: g.Key, Owner: g.Owner, Client: g.Client, From: g.At, To: g.end()}
		out = append(out, Breach{Key: g.Key, Held: held, Other: Holding{Client: g.RemovedBy}, From: g.Removed, To: g.Removed, Removal: true})
	}
	slices.SortFunc(out, func(a, b Breach) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.From, b.From)) })
	return out
}
