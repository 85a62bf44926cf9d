// Package holds is what lock clients keep about the locks they believe they
// hold, and the watchdog that renews a held lease in the background (Redisson's
// watchdog, RheaKV's keepLease). Both the Redis and the raftkv clients use it,
// so renewals look the same in every history.
//
// In the simulator the watchdog is a sim.Proc spawned on the client's node: a
// pause of the client stops it too, which is exactly why a watchdog cannot
// save a paused holder. Live, it is a goroutine (Keep, with a mutex).
package holds

import (
	"errors"
	"sync"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Hold is a lock the client believes it holds.
type Hold struct {
	// Lease is the grant, its deadline moved by each renewal.
	Lease lockapi.Lease
	// Count is the nesting depth of reentrant acquires.
	Count int
	// Released is set when the client gave the lock back; the watchdog stops.
	Released bool
}

// Renew performs one renewal of l on process w: nil when the lease was
// extended, an error wrapping lockapi.ErrNotHeld when it is certainly lost,
// any other error (typically wrapping lockapi.ErrUnknown) when the outcome is
// unknown and the watchdog should try again.
type Renew func(w *sim.Proc, l lockapi.Lease) error

// Observer is told of every renewal: before it (done false) and after it,
// with the outcome (see lockapi.RenewObserver).
type Observer func(l lockapi.Lease, done bool, err error)

// Watchdog renews h every interval, on process w's monotonic clock, until h
// is released or a renewal finds the lease lost. A successful renewal moves
// the deadline to the renewal's send time plus ttl. observe may be nil.
func Watchdog(w *sim.Proc, h *Hold, every, ttl time.Duration, renew Renew, observe Observer) {
	Keep(w, nil, h, every, ttl, func(l lockapi.Lease) error { return renew(w, l) }, observe)
}

// Keep is Watchdog for a client written against lockapi.Env: it renews h
// every interval on env's monotonic clock until h is released or a renewal
// finds the lease lost. mu, when not nil, guards h's fields: a live client's
// watchdogs are goroutines beside the one that releases. It is held around
// reads and writes of h only, never across a renewal or a sleep (in the
// simulator, a lock held across a blocking call would stop the kernel).
func Keep(env lockapi.Env, mu sync.Locker, h *Hold, every, ttl time.Duration, renew func(l lockapi.Lease) error, observe Observer) {
	for {
		env.Sleep(every)
		lock(mu)
		released, lease := h.Released, h.Lease
		unlock(mu)
		if released {
			return
		}
		if observe != nil {
			observe(lease, false, nil)
		}
		sent := env.Mono()
		err := renew(lease)
		if err == nil {
			lock(mu)
			h.Lease.Deadline = sent + ttl
			lease = h.Lease
			unlock(mu)
		}
		if observe != nil {
			observe(lease, true, err)
		}
		if errors.Is(err, lockapi.ErrNotHeld) {
			return
		}
	}
}

func lock(mu sync.Locker) {
	if mu != nil {
		mu.Lock()
	}
}

func unlock(mu sync.Locker) {
	if mu != nil {
		mu.Unlock()
	}
}
