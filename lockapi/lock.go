package lockapi

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Outcome errors. Wrap them with context; test with errors.Is.
var (
	// ErrUnknown marks an indeterminate outcome: the request may have taken
	// effect (at any time after it was sent) or not at all.
	ErrUnknown = errors.New("outcome unknown")
	// ErrNotAcquired means the lock was certainly not granted (held by another
	// client until the wait budget ran out, or refused).
	ErrNotAcquired = errors.New("lock not acquired")
	// ErrNotHeld means a release or renewal found the lock not held by us.
	ErrNotHeld = errors.New("lock not held by this acquirer")
	// ErrRejected means the storage refused the operation (a stale fencing token).
	ErrRejected = errors.New("rejected by the storage")
)

// Env is what a client program sees of its environment: its own clocks, sleep
// and randomness. In the simulator it is the client's process; live, the machine.
type Env interface {
	// Name is the client's name (its node).
	Name() string
	// Mono is the client's monotonic clock.
	Mono() time.Duration
	// Wall is the client's wall clock in Unix nanoseconds.
	Wall() time.Duration
	// Sleep blocks for d on the monotonic clock.
	Sleep(d time.Duration)
	// Rand is the client's random stream.
	Rand() *rand.Rand
}

// Lease is a grant of a lock as the client sees it.
type Lease struct {
	// Key is the lock's name.
	Key string
	// Owner identifies this acquisition: the lock value or acquirer id.
	Owner string
	// Token is the fencing token; HasToken is false for systems without one.
	Token    uint64
	HasToken bool
	// Deadline is when the client believes the lease ends, on its own monotonic
	// clock; zero for locks without leases.
	Deadline time.Duration
	// Detail says how the grant came about (which servers granted it), for the
	// history; empty when there is nothing to add.
	Detail string
}

// Lock is a lock service's client library, as workloads use it.
type Lock interface {
	// Acquire takes the lock key, waiting at most wait (0: try once).
	// It returns ErrNotAcquired (wrapped) when certainly not granted and
	// ErrUnknown when it may have been granted without the client knowing.
	Acquire(key string, wait time.Duration) (Lease, error)
	// Release gives the lock up. ErrNotHeld: it was no longer ours.
	Release(l Lease) error
}

// RenewObserver is implemented by locks whose client renews leases in the
// background (a watchdog). The workload's recorder registers itself so that
// renewals appear in the history.
type RenewObserver interface {
	// OnRenew registers fn to be called around every renewal: once with done =
	// false before the request, once with done = true and the outcome after it.
	OnRenew(fn func(l Lease, done bool, err error))
}

// Storage is the protected resource's client: numbered cells the workload reads
// and writes under the lock. token is the lease's fencing token (0 = none).
type Storage interface {
	// Read returns the value of key (0 if never written).
	Read(key string, token uint64) (int64, error)
	// Write sets key to value. ErrRejected: the storage refused it.
	Write(key string, value int64, token uint64) error
}

// Unknown reports whether err marks an indeterminate outcome.
func Unknown(err error) bool { return errors.Is(err, ErrUnknown) }
