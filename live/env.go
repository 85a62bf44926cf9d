package live

import (
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
)

// env is a client's live environment: the run's clocks and real sleep. Every
// call passes the client's pause gate (a paused client does nothing), and a
// call after the run stopped ends the calling goroutine (runtime.Goexit):
// client programs loop forever, as in the simulator.
type env struct {
	r    *run
	name string
	rnd  *rand.Rand
}

var _ lockapi.Env = (*env)(nil)

func (e *env) gate() {
	if e.r.net.Gate(e.name) != nil || e.r.stopped() {
		runtime.Goexit()
	}
}

func (e *env) Name() string { return e.name }

func (e *env) Mono() time.Duration {
	e.gate()
	return e.r.now()
}

func (e *env) Wall() time.Duration {
	e.gate()
	return e.r.net.Wall(e.name)
}

func (e *env) Rand() *rand.Rand { return e.rnd }

// Sleep sleeps d of real time; a pause that outlasts it delays the wake-up
// until the pause ends.
func (e *env) Sleep(d time.Duration) {
	e.gate()
	if e.r.net.Sleep(d) != nil {
		runtime.Goexit()
	}
	e.gate()
}

// clock is the history.Clock of a live client: true time is the run's
// monotonic clock, and a client's monotonic clock is the same clock.
type clock struct{ r *run }

var _ history.Clock = clock{}

func (c clock) Now() time.Duration                       { return c.r.now() }
func (c clock) Local() time.Duration                     { return c.r.now() }
func (c clock) TrueAt(local time.Duration) time.Duration { return local }

// gatedLock and gatedStorage pass the client's gate before and after every
// call: a client paused while its request was out sees the reply only when
// it resumes, and a call that returns after the run stopped records nothing.
type gatedLock struct {
	lockapi.Lock
	e *env
}

func (g gatedLock) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	g.e.gate()
	l, err := g.Lock.Acquire(key, wait)
	g.e.gate()
	return l, err
}

func (g gatedLock) Release(l lockapi.Lease) error {
	g.e.gate()
	err := g.Lock.Release(l)
	g.e.gate()
	return err
}

// OnRenew forwards the watchdog observer, if the lock has one.
func (g gatedLock) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	if ro, ok := g.Lock.(lockapi.RenewObserver); ok {
		ro.OnRenew(fn)
	}
}

type gatedStorage struct {
	lockapi.Storage
	e *env
}

func (g gatedStorage) Read(key string, token uint64) (int64, error) {
	g.e.gate()
	v, err := g.Storage.Read(key, token)
	g.e.gate()
	return v, err
}

func (g gatedStorage) Write(key string, value int64, token uint64) error {
	g.e.gate()
	err := g.Storage.Write(key, value, token)
	g.e.gate()
	return err
}
