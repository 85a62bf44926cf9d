// Package holds is what lock clients keep about the locks they believe they
// hold, and the watchdog that renews a held lease in the background (Redisson's
// watchdog, RheaKV's keepLease). Both the Redis and the raftkv clients use it,
// so renewals look the same in every history.
//
// The watchdog is a sim.Proc spawned on the client's node: a pause of the
// client stops it too, which is exactly why a watchdog cannot save a paused
// holder.
package holds

import (
	"errors"
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
	for {
		w.Sleep(every)
		if h.Released {
			return
		}
		lease := h.Lease
		if observe != nil {
			observe(lease, false, nil)
		}
		sent := w.Mono()
		err := renew(w, lease)
		if err == nil {
			h.Lease.Deadline = sent + ttl
			lease = h.Lease
		}
		if observe != nil {
			observe(lease, true, err)
		}
		if errors.Is(err, lockapi.ErrNotHeld) {
			return
		}
	}
}
