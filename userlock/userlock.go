// Package userlock lets a lock written in a user's own Go code be tested by
// locklab like a built-in system: in the deterministic simulator and against
// the real server, with the same code.
//
// A user writes the lock against the client interface of the service it
// uses -- Redis (the go-redis shape), ZooKeeper (the go-zookeeper shape) or
// etcd (the clientv3 shape, package userlock/useretcd, apart so that a
// program without an etcd lock builds without clientv3 and gRPC), each
// satisfied unchanged by the real client library -- and registers it. A
// main package of a few lines then builds a locklab in which the lock is a
// system like any other: run, explore, shrink, sweep, matrix, report. The
// registrations here are the simulator's; package userlock/live registers
// the same lock with its live form too (run --live), and only a program that
// imports it links the live servers' client libraries.
//
//	func main() {
//		userlock.RegisterRedis(userlock.RedisLock{
//			Spec: userlock.Spec{Name: "mylock", Tokens: true},
//			New:  mylock.New,
//		})
//		cli.Main()
//	}
//
// In the simulator the lock runs as a process of a simulated client: its
// clocks, sleep and randomness must come from the Env it is given, and it
// must not read the machine's clock, sleep on it, start goroutines or use
// global randomness (`locklab vet ./mylock` finds these; see its doc for
// what it cannot). A lock that panics, calls its service from a goroutine of
// its own or returns a malformed lease is the user's bug and the run's
// verdict: the check lock-conduct names the call, the client and the time.
//
// docs/your-own-lock.md walks from an empty directory to the first
// counterexample; examples/ holds four locks (each its own module) and what
// locklab finds in each.
package userlock

import (
	"github.com/locklab/locklab/lockapi"
)

// Env is what a lock sees of its client's environment: its name, its
// monotonic and wall clocks, sleep and a random stream. In the simulator it
// is the client's process (its clocks follow the run's clock faults); live,
// the machine.
type Env = lockapi.Env

// Lease is a grant of the lock as the lock's client sees it: the key, the
// owner's value, the fencing token (HasToken) and the deadline the client
// believes in on its own monotonic clock (zero: no lease).
type Lease = lockapi.Lease

// Lock is the user's lock of one client: Acquire takes the lock of key,
// waiting at most wait (0: try once); Release gives it up.
//
// Acquire returns an error wrapping ErrNotAcquired when the lock was
// certainly not granted and ErrUnknown when it may have been (a request
// timed out); any other error counts as unknown too. Release returns an
// error wrapping ErrNotHeld when the lock was no longer this client's.
type Lock = lockapi.Lock

// The outcomes a Lock reports, to wrap with context and test with errors.Is.
var (
	// ErrNotAcquired: the lock was certainly not granted.
	ErrNotAcquired = lockapi.ErrNotAcquired
	// ErrNotHeld: a release found the lock no longer ours.
	ErrNotHeld = lockapi.ErrNotHeld
	// ErrUnknown: the request may have taken effect or not.
	ErrUnknown = lockapi.ErrUnknown
)

// Spec is what every user lock declares, whatever its service.
type Spec struct {
	// Name is the system's name on locklab's command line; it must not be a
	// built-in system's.
	Name string
	// Doc is one line saying what the lock is ("SET NX PX, Lua release").
	Doc string
	// Tokens says the lock's leases carry fencing tokens that increase with
	// every grant (Lease.HasToken and Lease.Token). Fenced storage then
	// checks them, and the conformance suite holds the lock to them.
	Tokens bool
	// SafeRelease says a release by a client that no longer holds the lock
	// never frees another holder's lock.
	SafeRelease bool

	// sessions says the lock is held while a session lives (ZooKeeper),
	// not until a lease deadline its client knows: a paused holder's
	// violation is then a session expiry (scenario.KindSessionExpiry).
	sessions bool
}
