package raftnode

import "time"

// SessionLeases is the leader's clock on its clients' sessions (Chubby's
// master, ZooKeeper's leader): when it last heard from each session, on its
// own monotonic clock, and which sessions it has proposed to end. The
// sessions themselves are replicated state; their leases are not: each new
// leader starts them again on its clock, and ends a session only through the
// log, so that every replica ends it at the same point of the history.
//
// Reset (or Restart) must run before the first use.
type SessionLeases struct {
	// Timeout is how long the leader lets session go unheard before it
	// proposes its end.
	Timeout func(session int64) time.Duration
	// Propose proposes the end of session through the log. An error (the
	// proposal was refused) leaves the session to be proposed again at the
	// next Expire.
	Propose func(session int64) error
	// Granted, when set, is told of each lease the leader starts on its own
	// rather than on a client's contact: every session at Restart, and a
	// session Expire finds it has never heard from.
	Granted func(session int64)

	contact  map[int64]time.Duration // session -> last contact (monotonic)
	expiring map[int64]bool          // sessions whose end is proposed and not yet applied
}

// Reset forgets every contact and every proposed end: a (re)started or
// crashed replica knows nothing of its clients.
func (l *SessionLeases) Reset() {
	l.contact, l.expiring = map[int64]time.Duration{}, map[int64]bool{}
}

// Restart is what a new leader does: it forgets what it knew and grants each
// of sessions, in order, a fresh lease from now (it cannot know how long a
// client has been silent under the old leader).
func (l *SessionLeases) Restart(now time.Duration, sessions []int64) {
	l.Reset()
	for _, id := range sessions {
		l.grant(id, now)
	}
}

// Heard notes that the leader heard from session at now: its lease starts
// again.
func (l *SessionLeases) Heard(session int64, now time.Duration) {
	l.contact[session] = now
}

// Expiring reports whether the end of session is proposed and has not
// applied yet: the leader no longer serves it.
func (l *SessionLeases) Expiring(session int64) bool { return l.expiring[session] }

// Ended forgets session, whose end applied.
func (l *SessionLeases) Ended(session int64) {
	delete(l.expiring, session)
	delete(l.contact, session)
}

// Expire goes through sessions in order (the caller's, sorted, so the
// proposals are made in the same order on every run): a session never heard
// from is granted a lease from now; one silent for longer than its Timeout at
// now, and not proposed yet, has its end proposed, and is expiring once the
// proposal is accepted.
func (l *SessionLeases) Expire(now time.Duration, sessions []int64) {
	for _, id := range sessions {
		at, ok := l.contact[id]
		if !ok {
			l.grant(id, now)
			continue
		}
		if now-at > l.Timeout(id) && !l.expiring[id] {
			if l.Propose(id) == nil {
				l.expiring[id] = true
			}
		}
	}
}

// grant starts the lease of session at now on the leader's own account.
func (l *SessionLeases) grant(session int64, now time.Duration) {
	l.contact[session] = now
	if l.Granted != nil {
		l.Granted(session)
	}
}
