package userlock

import (
	"fmt"

	"github.com/locklab/locklab/system"
)

// registerOver registers the lock of spec s over service: its system over
// the simulated service (simulated makes it) with its staged scenarios. A
// lock without New (hasNew false) is refused with a panic naming it, a
// programming error like a spec without a name. Its live form is package
// userlock/live's to register.
func (s Spec) registerOver(service string, hasNew bool, simulated func() system.System) {
	if !hasNew {
		panic(fmt.Sprintf("userlock: %s lock %s has no New", service, s.Name))
	}
	s.RegisterSystem(simulated())
}

// keyOr is the lock key (or node) of a workload's key as f makes it, or as
// def does when f is nil.
func keyOr(f, def func(key string) string) func(key string) string {
	if f == nil {
		return def
	}
	return f
}

// sameKey is the workload's key itself, the default lock key.
func sameKey(key string) string { return key }
