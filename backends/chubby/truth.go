package chubby

import (
	"time"

	"github.com/locklab/locklab/lockapi"
)

// grantScope is the scope of the cell's grants in the record: one lock state,
// the replicated log's.
const grantScope = "chubby"

// truth records the cell's grants as the ground truth of a simulated run, in
// true time:
//
//   - a grant starts when the first replica applies the acquire that gave a
//     free lock to a session;
//   - its promise is the session's lease: the latest end, in true time, that
//     a master promised the session (its last contact with the session plus
//     the lease: a KeepAlive or any request it answered, the opening of the
//     session, or its own election, which gives every session a fresh lease);
//   - it ends when the release is applied (a clean release), or else when its
//     promise runs out;
//   - lock-delay is a further promise to the holder whose session expired
//     with the lock: when the expiry is applied, the grant's promise is
//     extended to the expiry plus the lock-delay (nobody else is to get the
//     lock before), so a grant to another within it is a breach in the record.
type truth struct {
	log      *lockapi.GrantLog
	lease    time.Duration
	delay    time.Duration
	applied  []bool                  // by log index: recorded already
	promise  map[int64]time.Duration // session -> latest lease end a master promised (true time)
	sessions map[int64]owner         // session -> the lease owner and client node of its holder
}

type owner struct{ owner, client string }

// RecordGrants makes the cell record in log every grant, lease promise and
// release (scope "chubby"). Call it before the run.
func (c *Cell) RecordGrants(log *lockapi.GrantLog) {
	c.truth = &truth{log: log, lease: c.opts.Lease, delay: c.opts.LockDelay,
		promise: map[int64]time.Duration{}, sessions: map[int64]owner{}}
}

func (t *truth) recording() bool { return t != nil && t.log.Recording() }

// opened notes the owner name of the locks session will hold (the client's
// lease owner) and its client node, before the session is asked for.
func (t *truth) opened(session int64, procName, client string) {
	if !t.recording() {
		return
	}
	t.sessions[session] = owner{owner: leaseOwner(procName, session), client: client}
}

// promised notes that a master promised session its lease until until (true
// time), at true time at; held are the locks the session holds in that
// master's state.
func (t *truth) promised(session int64, held []string, at, until time.Duration) {
	if !t.recording() || until <= t.promise[session] {
		return
	}
	t.promise[session] = until
	for _, k := range held {
		t.log.Renewed(grantScope, k, t.sessions[session].owner, at, until)
	}
}

// first reports whether the entry at index is applied for the first time by
// any replica, and notes that it was.
func (t *truth) first(index uint64) bool {
	if !t.recording() {
		return false
	}
	for uint64(len(t.applied)) <= index {
		t.applied = append(t.applied, make([]bool, max(len(t.applied), 64))...)
	}
	if t.applied[index] {
		return false
	}
	t.applied[index] = true
	return true
}

// entry records what x did, applied first by server at true time now:
// granted is whether an acquire gave a free lock to the session.
func (t *truth) entry(server string, x txn, o outcome, granted bool, now time.Duration) {
	if o.code != CodeOK {
		return
	}
	who := t.sessions[x.Session]
	switch x.Op {
	case "acquire":
		if granted {
			t.log.Granted(grantScope, server, x.Lock, who.owner, who.client, now, max(t.promise[x.Session], now))
		}
	case "release":
		t.log.Released(grantScope, x.Lock, who.owner, now)
	case "expire":
		for _, k := range o.lost {
			t.log.Renewed(grantScope, k, who.owner, now, now+t.delay)
		}
	}
}
