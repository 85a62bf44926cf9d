package lockapi

import "sync"

// SerialRenewals returns fn made safe for watchdogs that renew at once (live,
// one goroutine per hold): its calls run one at a time. A RenewObserver's
// OnRenew wraps the observer it is given with it; in the simulator, where one
// routine runs at a time, it changes nothing.
func SerialRenewals(fn func(l Lease, done bool, err error)) func(l Lease, done bool, err error) {
	var mu sync.Mutex
	return func(l Lease, done bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		fn(l, done, err)
	}
}
