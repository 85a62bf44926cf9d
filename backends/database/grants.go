package database

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// scope is the lock state of the record of grants: the one server's.
const scope = "db"

// RecordGrants makes the server record in log every lock it grants and when
// the grant ends, in true time: a unique row from its INSERT (or take-over)
// with the lease its expiry promises (expiry - the acquirer's clock, counted
// from when the acquirer stamped its insert) until its DELETE; a row lock
// from SELECT FOR UPDATE until its transaction commits or rolls back; an
// advisory lock until pg_advisory_unlock. A lock without a lease that the
// server takes from its holder — the transaction or session of a connection
// silent for conn-timeout, or every one of them in a crash — is a revocation
// (lockapi.GrantLog.Revoked). A later acquisition on the connection that
// already holds a lock takes it over: the earlier one's grant ends there.
// The record is the ground truth of a simulated run; it changes nothing of
// the run.
func (s *Server) RecordGrants(log *lockapi.GrantLog) { s.record = log }

func (s *Server) now() time.Duration { return s.node.World().Now() }

// clientOf is the name of the node that sent m.
func (s *Server) clientOf(m sim.Message) string { return s.node.World().Nodes()[m.From].Name() }

// lockKey is the lock's name of a row lock (its row is "lock/<name>").
func lockKey(row string) string { return strings.TrimPrefix(row, "lock/") }

// stampKey names a unique-row insert: its acquisition and the wall-clock
// reading its client stamped it with.
type stampKey struct {
	owner string
	now   time.Duration
}

// stamped notes that a client stamped owner's insert with its wall-clock
// reading now at true time at: the row's lease counts from there, however
// long the request then took to run (the record's side channel: the request
// itself carries only the reading).
func (s *Server) stamped(owner string, now, at time.Duration) {
	if !s.record.Recording() {
		return
	}
	if s.stamps == nil {
		s.stamps = map[stampKey]time.Duration{}
	}
	s.stamps[stampKey{owner, now}] = at
}

// stampOf is when (true time) req was stamped, forgotten once asked: at
// the latest now, the moment it runs.
func (s *Server) stampOf(req Req, now time.Duration) time.Duration {
	k := stampKey{req.Owner, req.Now}
	at, ok := s.stamps[k]
	delete(s.stamps, k)
	if !ok || at > now {
		return now
	}
	return at
}

// grantedRow records a unique row inserted or taken over, with the lease
// its expiry promises counted from when its client stamped it: the row
// expires by the clients' wall clocks at expiry, so an insert that waited
// (in a paused server, on a slow link) promises that much less, and one
// that ran after its expiry promises nothing.
func (s *Server) grantedRow(req Req, m sim.Message) {
	if s.record.Recording() {
		now := s.now()
		s.record.Granted(scope, s.node.Name(), req.Key, req.Owner, s.clientOf(m), now,
			s.stampOf(req, now)+(req.Expiry-req.Now))
	}
}

// grantedForUpdate records the grant of row to c (m is its SELECT FOR
// UPDATE) and notes its owner in rl.
func (s *Server) grantedForUpdate(rl *rowLock, row string, c *conn, m sim.Message) {
	owner := m.Body.(Req).Owner
	if rl.holder == c && rl.owner == owner {
		return
	}
	if rl.holder == c {
		s.record.Released(scope, lockKey(row), rl.owner, s.now())
	}
	rl.owner = owner
	s.record.Granted(scope, s.node.Name(), lockKey(row), owner, s.clientOf(m), s.now(), 0)
}

// endedForUpdate records the end of rl's grant: its transaction's end, or
// a revocation when the server aborted it.
func (s *Server) endedForUpdate(rl *rowLock, row string, aborted bool) {
	if aborted {
		s.record.Revoked(scope, lockKey(row), rl.owner, s.node.Name(), s.now())
	} else {
		s.record.Released(scope, lockKey(row), rl.owner, s.now())
	}
	rl.owner = ""
}

// grantedAdvisory records the grant of the advisory lock key to owner (m is
// its request): the connection may already hold it for an earlier owner.
func (s *Server) grantedAdvisory(key, owner string, m sim.Message) {
	if prev, held := s.advOwner[key]; held {
		if prev == owner {
			return
		}
		s.record.Released(scope, key, prev, s.now())
	}
	s.advOwner[key] = owner
	s.record.Granted(scope, s.node.Name(), key, owner, s.clientOf(m), s.now(), 0)
}

// crashed records that a crash took every row lock and advisory lock from
// its holder (unique rows are committed rows: they survive).
func (s *Server) crashed() {
	if !s.record.Recording() {
		return
	}
	now := s.now()
	for _, row := range slices.Sorted(maps.Keys(s.rows)) {
		if rl := s.rows[row]; rl.holder != nil {
			s.record.Revoked(scope, lockKey(row), rl.owner, s.node.Name(), now)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(s.advOwner)) {
		s.record.Revoked(scope, key, s.advOwner[key], s.node.Name(), now)
	}
}
