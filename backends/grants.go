package backends

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
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
	// promises are the lease ends promised, with when: the grant's and each
	// renewal's. The grant's own is held in first (no allocation per grant).
	promises []promise
	first    [1]promise
}

type promise struct{ made, until time.Duration }

// end is when the grant stopped protecting its owner: its lease ran out or
// the owner released it (a removal by someone else does not end the promise).
func (g Grant) end() time.Duration {
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
	quorum int
	grants []*Grant
	slab   []Grant             // where the next grants are carved from
	open   map[ownedKey]*Grant // each owner's latest grant of a key in a scope, until released
}

type ownedKey struct{ scope, key, owner string }

// NewGrantLog returns an empty log. quorum is how many scopes must hold
// grants to the same owner for it to hold the lock (Redlock's majority); 0 or
// 1 for a deployment with one lock state.
func NewGrantLog(quorum int) *GrantLog {
	return &GrantLog{quorum: max(quorum, 1), open: map[ownedKey]*Grant{}}
}

// Granted records that server granted key to owner (asked by client) in scope
// at true time at, with a lease promised until until (0: no lease). Renewals
// and releases of owner in scope apply to this grant from now on.
func (l *GrantLog) Granted(scope, server, key, owner, client string, at, until time.Duration) {
	if l == nil {
		return
	}
	if len(l.slab) == 0 {
		l.slab = make([]Grant, 64)
	}
	g := &l.slab[0]
	l.slab = l.slab[1:]
	*g = Grant{Scope: scope, Server: server, Key: key, Owner: owner, Client: client, At: at, Until: until,
		first: [1]promise{{at, until}}}
	g.promises = g.first[:]
	l.grants = append(l.grants, g)
	l.open[ownedKey{scope, key, owner}] = g
}

// Renewed records that scope extended owner's grant of key until until at
// true time at (a renewal, a reentrant acquire).
func (l *GrantLog) Renewed(scope, key, owner string, at, until time.Duration) {
	if l == nil {
		return
	}
	if g := l.open[ownedKey{scope, key, owner}]; g != nil && until > g.Until {
		g.Until = until
		g.promises = append(g.promises, promise{at, until})
	}
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
	byScope := map[string]time.Duration{}
	var scopes []string
	for _, g := range l.grants {
		if g.Key != key || g.Owner != owner {
			continue
		}
		for _, p := range g.promises {
			if p.made > at {
				break
			}
			if _, seen := byScope[g.Scope]; !seen {
				scopes = append(scopes, g.Scope)
			}
			byScope[g.Scope] = max(byScope[g.Scope], p.until)
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
	if l == nil {
		return
	}
	k := ownedKey{scope, key, owner}
	if g := l.open[k]; g != nil {
		g.Released = at
		delete(l.open, k)
	}
}

// Removed records that client node by deleted owner's key in scope without
// naming the owner (a plain DEL): a release when the grant was by's own, a
// removal of someone else's lock otherwise.
func (l *GrantLog) Removed(scope, key, owner, by string, at time.Duration) {
	if l == nil {
		return
	}
	k := ownedKey{scope, key, owner}
	g := l.open[k]
	if g == nil {
		return
	}
	if g.Client == by {
		g.Released = at
	} else {
		g.RemovedBy, g.Removed = by, at
	}
	delete(l.open, k)
}

// Grants returns a copy of the record, in the order the grants were made.
func (l *GrantLog) Grants() []Grant {
	if l == nil {
		return nil
	}
	out := make([]Grant, len(l.grants))
	for i, g := range l.grants {
		out[i] = *g
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
	for _, g := range l.grants {
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
// same lock at once, or a client deleted a lock that someone else held.
type Breach struct {
	Key string
	// Held is the holding that was broken; Other the one that broke it (for a
	// removal, only its Client is set).
	Held, Other Holding
	// From and To bound the overlap (for a removal, the moment of it).
	From, To time.Duration
	// Removal is true for a deletion of someone else's lock.
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
	for _, g := range l.grants {
		if l.quorum > 1 || g.RemovedBy == "" || g.Removed >= g.end() {
			continue
		}
		held := Holding{Key: g.Key, Owner: g.Owner, Client: g.Client, From: g.At, To: g.end()}
		out = append(out, Breach{Key: g.Key, Held: held, Other: Holding{Client: g.RemovedBy}, From: g.Removed, To: g.Removed, Removal: true})
	}
	slices.SortFunc(out, func(a, b Breach) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.From, b.From)) })
	return out
}
