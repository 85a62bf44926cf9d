package userlock

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/sim"
)

// ConductCheck is the name of the check that judges a user's lock's conduct
// in a simulated run (Conduct.Audit).
const ConductCheck = "lock-conduct"

// Misconduct is one thing a user's lock did wrong in a run.
type Misconduct struct {
	// Client is the client whose lock it was.
	Client string
	// Call is the call it happened in (`Acquire("k", 2s)`, `Release("k")`,
	// or the service call a goroutine of its own made).
	Call string
	// At is when, on the run's clock (true time in the simulator).
	At time.Duration
	// What says what happened, in one line.
	What string
}

// Conduct is one run's record of what a user's lock did wrong: it panicked,
// called its service from a goroutine it started, or returned a malformed
// lease. Its Audit is the check lock-conduct. Safe for concurrent use (live
// locks run on goroutines).
type Conduct struct {
	now func() time.Duration // the run's clock; nil: the client's own (Env.Mono)

	mu    sync.Mutex
	calls int
	bad   []Misconduct
}

// NewConduct returns an empty record whose times are read from now (the
// simulated world's true time); nil: each client's monotonic clock.
func NewConduct(now func() time.Duration) *Conduct { return &Conduct{now: now} }

// Report records a misconduct of client's lock during call (what is
// formatted from format and args). at is when; a Conduct made with a clock
// reads its own instead.
func (c *Conduct) Report(client, call string, at time.Duration, format string, args ...any) {
	if c == nil {
		return
	}
	if c.now != nil {
		at = c.now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bad = append(c.bad, Misconduct{Client: client, Call: call, At: at, What: fmt.Sprintf(format, args...)})
}

// Misconducts lists what was recorded, in the order it happened.
func (c *Conduct) Misconducts() []Misconduct {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Misconduct(nil), c.bad...)
}

func (c *Conduct) called() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
}

// Audit is the check lock-conduct over this record: invalid when the lock
// misbehaved (every misconduct named: client, call, time, what), valid
// otherwise. It judges the record, not the history.
func (c *Conduct) Audit() models.Check { return conductCheck{c} }

type conductCheck struct{ c *Conduct }

func (conductCheck) Name() string         { return ConductCheck }
func (conductCheck) ReadsNoHistory() bool { return true }

func (k conductCheck) Check([]history.Event) models.Verdict {
	c := k.c
	c.mu.Lock()
	defer c.mu.Unlock()
	v := models.Verdict{Check: ConductCheck, Stats: map[string]float64{"calls": float64(c.calls), "misconduct": float64(len(c.bad))}}
	if len(c.bad) == 0 {
		v.Result = models.Valid
		v.Reason = fmt.Sprintf("the lock behaved in all %d calls: no panic, no call from a goroutine of its own, every lease well formed", c.calls)
		return v
	}
	v.Result = models.Invalid
	first := c.bad[0]
	v.Reason = fmt.Sprintf("the lock misbehaved %d times; first: client %s's %s at %s: %s", len(c.bad), first.Client, first.Call, first.At, first.What)
	ex := make([]string, 0, len(c.bad))
	for _, b := range c.bad {
		ex = append(ex, fmt.Sprintf("client %s's %s at %s: %s", b.Client, b.Call, b.At, b.What))
	}
	v.Counterexample = &models.Counterexample{Explanation: ex}
	return v
}

// Guard wraps the user's lock l of the client env: a panic in Acquire or
// Release is recovered (the call returns an error wrapping ErrUnknown, and
// c records the panic with the user's frame it came from), and each lease
// is checked against s (a token exactly when s.Tokens says, the key asked
// for, an owner). c may be nil (nothing is recorded; panics still become
// errors).
func Guard(l Lock, env Env, s Spec, c *Conduct) Lock {
	return &guarded{l: l, env: env, s: s, c: c}
}

type guarded struct {
	l   Lock
	env Env
	s   Spec
	c   *Conduct
}

// errPanicked marks a call of the user's lock that panicked.
var errPanicked = errors.New("the lock panicked")

func (g *guarded) report(call, format string, args ...any) {
	g.c.Report(g.env.Name(), call, g.env.Mono(), format, args...)
}

// recovered turns a panic of the user's code into err, recording it.
func (g *guarded) recovered(call string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if sim.Stopping(r) {
		panic(r) // the run ended or the client's node crashed: not the lock's doing
	}
	where := userFrame()
	g.report(call, "panicked: %v%s", r, where)
	*err = fmt.Errorf("%s: %w: %v%s: %w", call, errPanicked, r, where, ErrUnknown)
}

func (g *guarded) Acquire(key string, wait time.Duration) (l Lease, err error) {
	call := fmt.Sprintf("Acquire(%q, %s)", key, wait)
	g.c.called()
	defer g.recovered(call, &err)
	defer watchStuck(g.c, g.env.Name(), call)()
	l, err = g.l.Acquire(key, wait)
	if err != nil {
		return l, err
	}
	switch {
	case l.Key != key:
		g.report(call, "returned a lease of key %q", l.Key)
		l.Key = key
	case l.Owner == "":
		g.report(call, "returned a lease without an owner (Lease.Owner is empty)")
	case g.s.Tokens && !l.HasToken:
		g.report(call, "returned a lease without a fencing token, although the lock declares Tokens")
	case !g.s.Tokens && l.HasToken:
		g.report(call, "returned a lease with a fencing token (%d), although the lock does not declare Tokens", l.Token)
	case l.HasToken && l.Token == 0:
		g.report(call, "returned fencing token 0 (tokens start at 1: the storage takes 0 for no token)")
	}
	return l, nil
}

func (g *guarded) Release(l Lease) (err error) {
	call := fmt.Sprintf("Release(%q)", l.Key)
	g.c.called()
	defer g.recovered(call, &err)
	defer watchStuck(g.c, g.env.Name(), call)()
	return g.l.Release(l)
}

// userFrame names the first frame of the panicking stack outside the Go
// runtime and locklab (" at file.go:12 in pkg.Func"), or "".
func userFrame() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		ours := strings.HasPrefix(f.Function, "github.com/locklab/locklab/") && !strings.Contains(f.Function, "_test.")
		if !strings.HasPrefix(f.Function, "runtime.") && !ours {
			return fmt.Sprintf(" at %s:%d in %s", f.File, f.Line, f.Function)
		}
		if !more {
			return ""
		}
	}
}
