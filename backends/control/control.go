// Package control is the control lock: it grants every acquire at once, to
// every client, with no lease and no fencing token. It exists to prove that the
// checks can fail: a workload run on it must be judged invalid.
package control

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends"
)

// Lock grants everything.
type Lock struct {
	name string
	seq  int
}

var _ backends.Lock = (*Lock)(nil)

// New returns the control lock for the client called name.
func New(name string) *Lock { return &Lock{name: name} }

// Acquire always succeeds immediately.
func (l *Lock) Acquire(key string, wait time.Duration) (backends.Lease, error) {
	l.seq++
	return backends.Lease{Key: key, Owner: fmt.Sprintf("%s-%d", l.name, l.seq)}, nil
}

// Release always succeeds.
func (l *Lock) Release(backends.Lease) error { return nil }
