package raftkv

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/backends/holds"
	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/lockapi"
)

// Transport is how a Client reaches the raft nodes and runs its background
// routines: the client's recipe (leader tracking, retries, reentrancy, the
// watchdog, the outcome of every request) is written once over it. The
// simulated transport sends Request and Response messages from a sim.Proc
// (Cluster.NewClient); the live one carries them to hashicorp/raft nodes
// through a faultnet (backends/raftkv/live).
type Transport interface {
	// Nodes is how many raft nodes there are; a node is named by its index
	// in raft-id order (0 is n1).
	Nodes() int
	// Call sends req to node from env's process and waits at most timeout
	// for the node's Response. An error means no answer came and the
	// command may have taken effect; one wrapping ErrClosed also means the
	// run is over and the request is not retried.
	Call(env lockapi.Env, node int, req Request, timeout time.Duration) (Response, error)
	// Go runs fn as a background routine of the client's node called name
	// (the watchdog): a pause of the client stops it too.
	Go(name string, fn func(env lockapi.Env))
}

// ErrClosed marks a transport that ended with the run: a request on it is
// not retried, and its outcome is unknown.
var ErrClosed = errors.New("raftkv: transport closed")

// Client is the lock client library of one client (RheaKV's
// DistributedLock): it finds the leader, retries requests across nodes within
// a budget, acquires reentrantly under one acquirer id per key, and renews
// held leases from a watchdog routine. Its Acquire and Release are called
// from one routine; the watchdogs run on their own (live: goroutines, so the
// state they share with it is read and written under mu, never held across
// a request or a sleep).
type Client struct {
	env     lockapi.Env
	t       Transport
	opts    Options
	id      string            // this client's identity: acquirer ids and sessions derive from it
	owners  map[string]string // key -> Acquirer(key), built once per key (the Acquire routine's)
	context []byte            // the context of this client's try-locks (its node's name); read-only
	onRenew func(l lockapi.Lease, done bool, err error)

	mu     sync.Mutex
	leader int // index of the node believed to lead
	seqs   map[string]uint64
	held   map[string]*holds.Hold
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// ErrNoLeader means no node accepted the request within the retry budget and
// none of the attempts can have taken effect.
var ErrNoLeader = errors.New("no leader reachable")

// NewClient returns the lock client of the client env (its node's main
// routine) reaching the raft nodes through t.
func NewClient(env lockapi.Env, t Transport, o Options) *Client {
	return &Client{
		env:     env,
		t:       t,
		opts:    o,
		id:      fmt.Sprintf("%s-%08x", env.Name(), env.Rand().Uint32()),
		leader:  env.Rand().IntN(t.Nodes()),
		seqs:    map[string]uint64{},
		owners:  map[string]string{},
		context: []byte(env.Name()),
		held:    map[string]*holds.Hold{},
	}
}

// OnRenew registers the watchdog observer. Its calls are serialised:
// watchdogs of several holds may renew at once.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	c.onRenew = lockapi.SerialRenewals(fn)
}

// Acquirer is the acquirer id this client uses for key: the same for every
// acquire of key by this client, which is what makes its acquires reentrant.
// Called from the Acquire routine only.
func (c *Client) Acquirer(key string) string {
	a, ok := c.owners[key]
	if !ok {
		a = c.id + ":" + key
		c.owners[key] = a
	}
	return a
}

func (c *Client) mainSession() string               { return c.id }
func (c *Client) watchdogSession(key string) string { return c.id + "/watchdog:" + key }

func (c *Client) setLeader(i int) {
	c.mu.Lock()
	c.leader = i
	c.mu.Unlock()
}

// request sends cmd from env's routine under session until a node that
// leads answers, the retry budget is spent, or the state machine refuses it.
// Retries carry the same sequence number, so the command takes effect at
// most once.
func (c *Client) request(env lockapi.Env, session string, cmd lockfsm.Command) (lockfsm.Result, error) {
	c.mu.Lock()
	c.seqs[session]++
	cmd.Session, cmd.Seq = session, c.seqs[session]
	c.mu.Unlock()
	until := env.Mono() + c.opts.RetryBudget
	nodes := c.t.Nodes()
	var uncertain error
	for attempt := 1; ; attempt++ {
		if c.opts.Stamp == StampClient {
			cmd.Stamp = int64(env.Wall())
		}
		c.mu.Lock()
		target := c.leader
		c.mu.Unlock()
		r, err := c.t.Call(env, target, Request{Cmd: cmd}, c.opts.RequestTimeout)
		next := (target + 1) % nodes
		switch {
		case errors.Is(err, ErrClosed):
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: %w: %w", cmd.Op, cmd.Key, lockapi.ErrUnknown, err)
		case err != nil:
			uncertain = err
			c.setLeader(next)
		case r.NotLeader:
			if r.Leader != 0 && int(r.Leader-1) != target && int(r.Leader) <= nodes {
				c.setLeader(int(r.Leader - 1))
				break
			}
			c.setLeader(next)
			env.Sleep(lockapi.Backoff(env.Rand(), c.opts.BackoffMax))
		case r.Invalid != "":
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s refused: %s", cmd.Op, cmd.Key, r.Invalid)
		case r.Result.Code == lockfsm.Stale:
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: superseded by a later request of session %s", cmd.Op, cmd.Key, session)
		default:
			c.setLeader(target)
			return r.Result, nil
		}
		if env.Mono() >= until {
			if uncertain != nil {
				return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: %d attempts in %v, last uncertain: %w: %w",
					cmd.Op, cmd.Key, attempt, c.opts.RetryBudget, lockapi.ErrUnknown, uncertain)
			}
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: %d attempts in %v: %w", cmd.Op, cmd.Key, attempt, c.opts.RetryBudget, ErrNoLeader)
		}
	}
}

// refusal is a try-lock refused by the state machine: its text is the owner.
type refusal struct{ r lockfsm.Result }

func (e refusal) Error() string { return describeOwner(e.r) }

// describeOwner renders a refusal's owner for error messages.
func describeOwner(r lockfsm.Result) string {
	if r.Owner.Acquirer == "" {
		return "no owner"
	}
	return fmt.Sprintf("held by %s (context %q, token %d, %v of lease left)", r.Owner.Acquirer, r.Owner.Context,
		r.Owner.Token, r.Remaining)
}

// Acquire takes key (reentrantly if this client holds it), retrying try-lock
// with random back-off until wait is spent on the client's monotonic clock.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	env := c.env
	start := env.Mono()
	var uncertain, last error
	var refused lockfsm.Result // the last refusal, made an error only if it is the last outcome
	for attempt := 1; ; attempt++ {
		sent := env.Mono()
		r, err := c.request(env, c.mainSession(), lockfsm.Command{Op: lockfsm.OpTryLock, Key: key,
			Acquirer: c.Acquirer(key), Lease: c.opts.Lease, Context: c.context})
		switch {
		case err == nil && r.Success:
			return c.granted(key, r, sent), nil
		case err == nil:
			refused, last = r, nil
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
			if last == nil {
				last = refusal{refused}
			}
			return lockapi.Lease{}, fmt.Errorf("raftkv: acquire %s: %d attempts in %v, last: %v: %w", key, attempt, elapsed,
				last, lockapi.ErrNotAcquired)
		}
		lockapi.SleepBackoff(env, c.opts.BackoffMax, wait-elapsed)
	}
}

// granted records a successful try-lock sent at sent (client monotonic time)
// and starts the watchdog of a new hold.
func (c *Client) granted(key string, r lockfsm.Result, sent time.Duration) lockapi.Lease {
	deadline := sent + c.opts.Lease
	owner := c.Acquirer(key)
	c.mu.Lock()
	h := c.held[key]
	if r.Code == lockfsm.ReentrantSuccess && h != nil && !h.Released {
		h.Count++
		h.Lease.Deadline = deadline
		lease := h.Lease
		c.mu.Unlock()
		return lease
	}
	if h != nil {
		h.Released = true // our earlier grant was lost; its watchdog stops
	}
	lease := lockapi.Lease{Key: key, Owner: owner, Token: r.Owner.Token, HasToken: true, Deadline: deadline}
	h = &holds.Hold{Lease: lease, Count: 1}
	c.held[key] = h
	c.mu.Unlock()
	if c.opts.Watchdog {
		c.t.Go(c.env.Name()+"/watchdog", func(w lockapi.Env) { c.watchdog(w, h) })
	}
	return lease
}

// watchdog renews h every lease·2/3 until it is released or found lost (live,
// or until the run ends: its Env's Sleep does not return then).
func (c *Client) watchdog(w lockapi.Env, h *holds.Hold) {
	for {
		w.Sleep(c.opts.Lease * 2 / 3)
		c.mu.Lock()
		released, lease := h.Released, h.Lease
		c.mu.Unlock()
		if released {
			return
		}
		if c.onRenew != nil {
			c.onRenew(lease, false, nil)
		}
		sent := w.Mono()
		r, err := c.request(w, c.watchdogSession(lease.Key), lockfsm.Command{Op: lockfsm.OpKeepLease, Key: lease.Key,
			Acquirer: lease.Owner, Lease: c.opts.Lease})
		if err == nil && !r.Success {
			err = fmt.Errorf("raftkv: keep lease %s: %s: %w", lease.Key, describeOwner(r), lockapi.ErrNotHeld)
		}
		if err == nil {
			c.mu.Lock()
			h.Lease.Deadline = sent + c.opts.Lease
			lease = h.Lease
			c.mu.Unlock()
		}
		if c.onRenew != nil {
			c.onRenew(lease, true, err)
		}
		if errors.Is(err, lockapi.ErrNotHeld) {
			return
		}
	}
}

// Release gives back one acquire of l. The last release of a hold unlocks
// until the server's count reaches zero, giving back acquires that took
// effect without the client knowing (at most maxDrain of them).
func (c *Client) Release(l lockapi.Lease) error {
	c.mu.Lock()
	h := c.held[l.Key]
	if h != nil && (h.Released || h.Lease.Owner != l.Owner) {
		h = nil
	}
	if h != nil && h.Count > 1 {
		h.Count-- // whatever the outcome: if it did not take effect, the last release drains it
		c.mu.Unlock()
		if err := c.unlock(l); !errors.Is(err, errStillHeld) {
			return err
		}
		return nil
	}
	if h != nil {
		h.Released = true // stop the watchdog before the lock goes
		delete(c.held, l.Key)
	}
	c.mu.Unlock()
	for range maxDrain {
		if err := c.unlock(l); !errors.Is(err, errStillHeld) {
			return err
		}
	}
	return nil
}

// maxDrain bounds the unlocks of one last release.
const maxDrain = 16

// errStillHeld reports an unlock after which the acquirer still holds the key.
var errStillHeld = errors.New("still held")

func (c *Client) unlock(l lockapi.Lease) error {
	r, err := c.request(c.env, c.mainSession(), lockfsm.Command{Op: lockfsm.OpUnlock, Key: l.Key, Acquirer: l.Owner})
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

// Holder asks, through the log, who holds key now.
func (c *Client) Holder(key string) (lockfsm.Owner, bool, error) {
	r, err := c.request(c.env, c.mainSession(), lockfsm.Command{Op: lockfsm.OpGet, Key: key})
	if err != nil {
		return lockfsm.Owner{}, false, err
	}
	return r.Owner, r.Code == lockfsm.Owned, nil
}
