// Package control is the control lock: it grants every acquire at once, to
// every client, with no lease and no fencing token. It exists to prove that the
// checks can fail: a workload run on it must be judged invalid.
package control

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
)

// Lock grants everything.
type Lock struct {
	name   string
	seq    int
	grants *lockapi.GrantLog
	now    func() time.Duration
}

var _ lockapi.Lock = (*Lock)(nil)

// New returns the control lock for the client called name.
func New(name string) *Lock { return &Lock{name: name} }

// RecordGrants makes the lock record its grants in log, at the true times
// now returns: the control lock is its own server, and each grant is its own
// scope (it grants everyone at once).
func (l *Lock) RecordGrants(log *lockapi.GrantLog, now func() time.Duration) {
	l.grants, l.now = log, now
}

// Acquire always succeeds immediately.
func (l *Lock) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	l.seq++
	owner := fmt.Sprintf("%s-%d", l.name, l.seq)
	if l.grants.Recording() {
		l.grants.Granted("control/"+owner, "control", key, owner, l.name, l.now(), 0)
	}
	return lockapi.Lease{Key: key, Owner: owner}, nil
}

// Release always succeeds.
func (l *Lock) Release(ls lockapi.Lease) error {
	if l.grants.Recording() {
		l.grants.Released("control/"+ls.Owner, ls.Key, ls.Owner, l.now())
	}
	return nil
}
