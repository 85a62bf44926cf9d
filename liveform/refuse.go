package liveform

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
)

// RefuseRealServers says why a fault cannot run on a cluster of real
// servers whose clocks libfaketime cannot move (noClock, "" if it can),
// whose server-to-server links locklab does not carry (noPeerCut) and whose
// messages do not pass through locklab (noDelay).
func RefuseRealServers(f nemesis.Fault, servers, roles []string, noClock, noPeerCut, noDelay string) string {
	serverish := func(names []string) bool {
		for _, n := range names {
			if n == "servers" || slices.Contains(servers, n) || slices.Contains(roles, n) || ServerRole(n) {
				return true
			}
		}
		return false
	}
	switch f.Kind {
	case nemesis.ClockJump:
		if noClock != "" && serverish(f.Targets) {
			return noClock
		}
	case nemesis.Partition:
		switch {
		case len(f.Groups) > 0:
			n := 0
			for _, g := range f.Groups {
				if serverish(g) {
					n++
				}
			}
			if n > 1 {
				return noPeerCut
			}
		case len(f.From) > 0:
			if serverish(f.From) && serverish(f.To) {
				return noPeerCut
			}
		default:
			if serverish(f.Targets) {
				return noPeerCut
			}
		}
	case nemesis.Delay:
		if serverish(f.From) || serverish(f.To) {
			return noDelay
		}
	}
	return ""
}

// ServerRole reports whether name is a server role a schedule may give
// with an argument: "server-of:KEY" or "servers-but:NAME".
func ServerRole(name string) bool {
	for _, p := range []string{"server-of:", "servers-but:"} {
		if len(name) > len(p) && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// FailedLock is the lock of a client whose library could not be set up:
// every call fails with Err.
type FailedLock struct{ Err error }

// Acquire fails with the set-up error: the lock was not acquired.
func (f FailedLock) Acquire(string, time.Duration) (lockapi.Lease, error) {
	return lockapi.Lease{}, fmt.Errorf("%w: %w", f.Err, lockapi.ErrNotAcquired)
}

// Release fails with the set-up error: nothing was held.
func (f FailedLock) Release(lockapi.Lease) error {
	return fmt.Errorf("%w: %w", f.Err, lockapi.ErrNotHeld)
}

// FailedStorage is the storage of a client whose library could not be set
// up: every call fails with Err.
type FailedStorage struct{ Err error }

// Read fails with the set-up error.
func (f FailedStorage) Read(string, uint64) (int64, error) { return 0, f.Err }

// Write fails with the set-up error.
func (f FailedStorage) Write(string, int64, uint64) error { return f.Err }
