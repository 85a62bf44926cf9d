package raftkv

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/backends/holds"
	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/lockapi"
)

// Client is the live lock client (RheaKV's DistributedLock), the same
// behaviour as the simulated raftkv client: it finds the leader (following
// redirects), retries a request across nodes under one session and sequence
// number until its retry budget is spent, acquires reentrantly under one
// acquirer id per key, and renews held leases from a watchdog goroutine.
// Its Acquire and Release are called from one goroutine; the watchdog runs on
// its own, with its own Env (the same node: a pause of the client stops it).
type Client struct {
	c        *Cluster
	env      lockapi.Env
	watchEnv func() lockapi.Env
	id       string

	mu      sync.Mutex
	leader  int
	seqs    map[string]uint64
	held    map[string]*holds.Hold
	onRenew func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// NewClient returns a lock client for the client node env.Name(). watchEnv
// makes the Env of each watchdog goroutine (same node, own randomness).
func (c *Cluster) NewClient(env lockapi.Env, watchEnv func() lockapi.Env) *Client {
	return &Client{c: c, env: env, watchEnv: watchEnv, id: fmt.Sprintf("%s-%08x", env.Name(), env.Rand().Uint32()),
		leader: env.Rand().IntN(len(c.nodes)), seqs: map[string]uint64{}, held: map[string]*holds.Hold{}}
}

// OnRenew registers the watchdog observer.
// Calls are serialised: watchdogs of several holds may renew at once.
func (cl *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	var mu sync.Mutex
	cl.onRenew = func(l lockapi.Lease, done bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		fn(l, done, err)
	}
}

// Acquirer is the acquirer id this client uses for key.
func (cl *Client) Acquirer(key string) string { return cl.id + ":" + key }

func (cl *Client) mainSession() string               { return cl.id }
func (cl *Client) watchdogSession(key string) string { return cl.id + "/watchdog:" + key }

// request sends cmd under session from env's node until a leader answers,
// the retry budget is spent, or the state machine refuses it.
func (cl *Client) request(env lockapi.Env, session string, cmd lockfsm.Command) (lockfsm.Result, error) {
	o := cl.c.opts
	cl.mu.Lock()
	cl.seqs[session]++
	cmd.Session, cmd.Seq = session, cl.seqs[session]
	cl.mu.Unlock()
	until := env.Mono() + o.RetryBudget
	var uncertain error
	for attempt := 1; ; attempt++ {
		if o.Stamp == raftkv.StampClient {
			cmd.Stamp = int64(env.Wall())
		}
		cl.mu.Lock()
		target := cl.leader
		cl.mu.Unlock()
		node := cl.c.nodes[target].name
		r, err := faultnet.Call(cl.c.net, env.Name(), node, Request{Cmd: cmd}, o.RequestTimeout,
			func() Response { return cl.c.Serve(node, Request{Cmd: cmd}) })
		next := (target + 1) % len(cl.c.nodes)
		switch {
		case errors.Is(err, faultnet.ErrClosed):
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: %w: %w", cmd.Op, cmd.Key, lockapi.ErrUnknown, err)
		case err != nil:
			uncertain = err
			cl.setLeader(next)
		case r.Unknown != "":
			uncertain = errors.New(r.Unknown)
			cl.setLeader(next)
		case r.NotLeader:
			if r.Leader != 0 && r.Leader-1 != target {
				cl.setLeader(r.Leader - 1)
				break
			}
			cl.setLeader(next)
			env.Sleep(lockapi.Backoff(env.Rand(), o.BackoffMax))
		case r.Invalid != "":
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s refused: %s", cmd.Op, cmd.Key, r.Invalid)
		case r.Result.Code == lockfsm.Stale:
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: superseded by a later request of session %s", cmd.Op, cmd.Key, session)
		default:
			cl.setLeader(target)
			return r.Result, nil
		}
		if env.Mono() >= until {
			if uncertain != nil {
				return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: %d attempts in %v, last uncertain: %w: %w",
					cmd.Op, cmd.Key, attempt, o.RetryBudget, lockapi.ErrUnknown, uncertain)
			}
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: %d attempts in %v: %w", cmd.Op, cmd.Key, attempt, o.RetryBudget, raftkv.ErrNoLeader)
		}
	}
}

func (cl *Client) setLeader(i int) {
	cl.mu.Lock()
	cl.leader = i
	cl.mu.Unlock()
}

func describeOwner(r lockfsm.Result) string {
	if r.Owner.Acquirer == "" {
		return "no owner"
	}
	return fmt.Sprintf("held by %s (context %q, token %d, %v of lease left)", r.Owner.Acquirer, r.Owner.Context,
		r.Owner.Token, r.Remaining)
}

// Acquire takes key (reentrantly if this client holds it), retrying try-lock
// with random back-off until wait is spent on the client's monotonic clock.
func (cl *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	env, o := cl.env, cl.c.opts
	start := env.Mono()
	var uncertain, last error
	for attempt := 1; ; attempt++ {
		sent := env.Mono()
		r, err := cl.request(env, cl.mainSession(), lockfsm.Command{Op: lockfsm.OpTryLock, Key: key,
			Acquirer: cl.Acquirer(key), Lease: o.Lease, Context: []byte(env.Name())})
		switch {
		case err == nil && r.Success:
			return cl.granted(key, r, sent), nil
		case err == nil:
			last = errors.New(describeOwner(r))
		case lockapi.Unknown(err):
			uncertain = err
		default:
			last = err
		}
		elapsed := env.Mono() - start
		if elapsed >= wait {
			if uncertain != nil {
				return lockapi.Lease{}, fmt.Errorf("raftkv: acquire %s: %d attempts, one uncertain: %w", key, attempt, uncertain)
			}
			return lockapi.Lease{}, fmt.Errorf("raftkv: acquire %s: %d attempts in %v, last: %v: %w", key, attempt, elapsed,
				last, lockapi.ErrNotAcquired)
		}
		lockapi.SleepBackoff(env, o.BackoffMax, wait-elapsed)
	}
}

func (cl *Client) granted(key string, r lockfsm.Result, sent time.Duration) lockapi.Lease {
	o := cl.c.opts
	deadline := sent + o.Lease
	cl.mu.Lock()
	defer cl.mu.Unlock()
	h := cl.held[key]
	if r.Code == lockfsm.ReentrantSuccess && h != nil && !h.Released {
		h.Count++
		h.Lease.Deadline = deadline
		return h.Lease
	}
	if h != nil {
		h.Released = true
	}
	lease := lockapi.Lease{Key: key, Owner: cl.Acquirer(key), Token: r.Owner.Token, HasToken: true, Deadline: deadline}
	h = &holds.Hold{Lease: lease, Count: 1}
	cl.held[key] = h
	if o.Watchdog {
		w := cl.watchEnv()
		go cl.watchdog(w, h)
	}
	return lease
}

// watchdog renews h every lease·2/3 until it is released or found lost. It
// ends when the run ends (its Env's Sleep does not return then).
func (cl *Client) watchdog(w lockapi.Env, h *holds.Hold) {
	o := cl.c.opts
	for {
		w.Sleep(o.Lease * 2 / 3)
		cl.mu.Lock()
		released, lease := h.Released, h.Lease
		cl.mu.Unlock()
		if released {
			return
		}
		if cl.onRenew != nil {
			cl.onRenew(lease, false, nil)
		}
		sent := w.Mono()
		r, err := cl.request(w, cl.watchdogSession(lease.Key), lockfsm.Command{Op: lockfsm.OpKeepLease, Key: lease.Key,
			Acquirer: lease.Owner, Lease: o.Lease})
		if err == nil && !r.Success {
			err = fmt.Errorf("raftkv: keep lease %s: %s: %w", lease.Key, describeOwner(r), lockapi.ErrNotHeld)
		}
		if err == nil {
			cl.mu.Lock()
			h.Lease.Deadline = sent + o.Lease
			lease = h.Lease
			cl.mu.Unlock()
		}
		if cl.onRenew != nil {
			cl.onRenew(lease, true, err)
		}
		if errors.Is(err, lockapi.ErrNotHeld) {
			return
		}
	}
}

// Release gives back one acquire of l (see the simulated client: the last
// release drains acquires that took effect without the client knowing).
func (cl *Client) Release(l lockapi.Lease) error {
	cl.mu.Lock()
	h := cl.held[l.Key]
	if h != nil && (h.Released || h.Lease.Owner != l.Owner) {
		h = nil
	}
	if h != nil && h.Count > 1 {
		h.Count--
		cl.mu.Unlock()
		if err := cl.unlock(l); !errors.Is(err, errStillHeld) {
			return err
		}
		return nil
	}
	if h != nil {
		h.Released = true
		delete(cl.held, l.Key)
	}
	cl.mu.Unlock()
	for range maxDrain {
		if err := cl.unlock(l); !errors.Is(err, errStillHeld) {
			return err
		}
	}
	return nil
}

const maxDrain = 16

var errStillHeld = errors.New("still held")

func (cl *Client) unlock(l lockapi.Lease) error {
	r, err := cl.request(cl.env, cl.mainSession(), lockfsm.Command{Op: lockfsm.OpUnlock, Key: l.Key, Acquirer: l.Owner})
	switch {
	case err != nil:
		return fmt.Errorf("raftkv: release %s: %w", l.Key, err)
	case !r.Success:
		return fmt.Errorf("raftkv: release %s: %s: %w", l.Key, describeOwner(r), lockapi.ErrNotHeld)
	case r.Owner.Acquires > 0:
		return errStillHeld
	}
	return nil
}
