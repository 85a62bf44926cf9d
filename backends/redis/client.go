package redis

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/locklab/locklab/backends/holds"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Transport is how a Redis lock client reaches Redis: the one thing the
// simulated client (over a sim.Proc, simTransport) and the live one (over
// go-redis, package backends/redis/live) do differently. Everything else of
// the recipe — attempts, the budget clock, back-off, owner ids, tokens, the
// watchdog, the release variants, the error texts and the classification of
// outcomes — is Client's, written once.
type Transport interface {
	// Do sends cmd (one of the commands of commands.go, or Wait) to the
	// instance commands go to now and waits at most timeout for its reply. It
	// returns the reply and the name of the instance it asked. An error
	// wrapping lockapi.ErrUnknown: the command may have run (it timed out, or
	// the connection broke after it went out); any other error: it certainly
	// did not (a replica's READONLY, an instance within its restart delay, a
	// refused connection). After either, a transport that follows a failover
	// asks for the primary again before the next command.
	Do(cmd any, timeout time.Duration) (Reply, string, error)
	// Go starts fn as a background routine of the client (its watchdog),
	// named name: a process on the client's node in the simulator (a pause of
	// the node stops it too), a goroutine live. fn gets the routine's own
	// environment and the transport it sends through.
	Go(name string, fn func(env lockapi.Env, t Transport))
}

// Client is the lock client library of one client: the Redis lock recipe,
// over a Transport. It is not shared between clients (it keeps
// per-acquisition state, like a real client). Acquire and Release are called
// from one routine; watchdogs run in their own (Transport.Go), and mu guards
// what they share with it.
type Client struct {
	env  lockapi.Env
	t    Transport
	opts Options
	id   string // stable acquirer id for reentrant modes
	seq  int

	mu   sync.Mutex             // guards held and the holds' fields (live watchdogs are goroutines)
	held map[string]*holds.Hold // client-side reentrancy and watchdogs
	// spare is a hold given back (released or forgotten) that nothing points
	// to any more (no watchdog), for the next hold to reuse.
	spare   *holds.Hold
	renewMu sync.Mutex // serialises the calls of onRenew (live watchdogs are goroutines)
	onRenew func(l lockapi.Lease, done bool, err error)

	// the last acquire command, boxed: the retries of one acquire send it again
	cmdKey, cmdOwner string
	cmd              any
	// the Detail of the last lease granted, and by whom
	grantedByName string
	grantedByText string
}

// Topology is where a simulated client finds Redis: one instance, or a
// primary with replicas watched by a monitor.
type Topology struct {
	// Primary is the instance commands go to first.
	Primary sim.NodeID
	// Monitor, when HasMonitor, is asked for the primary after a command timed
	// out or was refused by a replica (clients follow a failover).
	Monitor    sim.NodeID
	HasMonitor bool
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// NewClient returns a lock client for process p talking to the Redis instance
// on node server.
func NewClient(p *sim.Proc, server sim.NodeID, opts Options) *Client {
	return NewClientFor(p, Topology{Primary: server}, opts)
}

// NewClientFor returns a lock client for process p that finds Redis through t.
func NewClientFor(p *sim.Proc, t Topology, opts Options) *Client {
	// one allocation for the client, its transport and its route
	s := &struct {
		c Client
		t simTransport
		r route
	}{}
	s.r = route{topo: t, primary: t.Primary, timeout: opts.RequestTimeout}
	s.t = simTransport{p: p, r: &s.r}
	s.c.init(p, &s.t, opts)
	return &s.c
}

// New returns the lock client of the client env, reaching Redis through t
// (simulated or live). It draws the client's acquirer id from env's random
// stream.
func New(env lockapi.Env, t Transport, opts Options) *Client {
	c := new(Client)
	c.init(env, t, opts)
	return c
}

func (c *Client) init(env lockapi.Env, t Transport, opts Options) {
	c.env, c.t, c.opts = env, t, opts
	c.id = fmt.Sprintf("%s:%016x", env.Name(), env.Rand().Uint64())
	c.held = map[string]*holds.Hold{}
}

// OnRenew registers the watchdog observer (its calls are serialised).
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { c.onRenew = fn }

// observe tells the watchdog observer of a renewal, one call at a time.
func (c *Client) observe(l lockapi.Lease, done bool, err error) {
	if c.onRenew == nil {
		return
	}
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	c.onRenew(l, done, err)
}

func (c *Client) budgetClock() time.Duration {
	if c.opts.BudgetClock == ClockWall {
		return c.env.Wall()
	}
	return c.env.Mono()
}

// grantedBy is a lease's Detail when instance name granted it: "granted by
// NAME", built once per instance.
func (c *Client) grantedBy(name string) string {
	if c.grantedByName != name || c.grantedByText == "" {
		c.grantedByName, c.grantedByText = name, "granted by "+name
	}
	return c.grantedByText
}

// ownerID is fmt.Sprintf("%s-%d-%08x", name, seq, r) without fmt.
func ownerID(name string, seq int, r uint32) string {
	b := make([]byte, 0, len(name)+30)
	b = append(b, name...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, '-')
	var hex [8]byte
	h := strconv.AppendUint(hex[:0], uint64(r), 16)
	for range 8 - len(h) {
		b = append(b, '0')
	}
	return string(append(b, h...))
}

// do sends cmd with the request timeout.
func (c *Client) do(cmd any) (Reply, error) {
	r, _, err := c.t.Do(cmd, c.opts.RequestTimeout)
	return r, err
}

func fenceKey(key string) string { return key + ":fence" }

// acquireCmd is the command of one acquire attempt for owner (the same value
// for every retry of one acquire).
func (c *Client) acquireCmd(key, owner string) any {
	if c.cmd == nil || c.cmdKey != key || c.cmdOwner != owner {
		c.cmdKey, c.cmdOwner, c.cmd = key, owner, c.newAcquireCmd(key, owner)
	}
	return c.cmd
}

func (c *Client) newAcquireCmd(key, owner string) any {
	switch {
	case c.opts.Reentrancy == ReentrancyServer:
		fk := ""
		if c.opts.Fencing {
			fk = fenceKey(key)
		}
		return HoldLock{Key: key, Owner: owner, FenceKey: fk, TTL: c.opts.TTL}
	case c.opts.Fencing:
		return SetNXFence{Key: key, Value: owner, FenceKey: fenceKey(key), TTL: c.opts.TTL}
	default:
		return SetNX{Key: key, Value: owner, TTL: c.opts.TTL}
	}
}

// Acquire takes the lock, retrying with random back-off until wait is spent.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	if c.opts.Reentrancy == ReentrancyClient {
		c.mu.Lock()
		h := c.held[key]
		nested := h != nil && !h.Released
		var l lockapi.Lease
		if nested {
			h.Count++
			l = h.Lease
		}
		c.mu.Unlock()
		if nested {
			return l, nil
		}
	}
	owner := c.id
	if c.opts.Reentrancy == ReentrancyNone {
		c.seq++
		owner = ownerID(c.env.Name(), c.seq, c.env.Rand().Uint32())
	}
	start := c.budgetClock()
	var unknown, refused error
	for attempt := 1; ; attempt++ {
		lease, err := c.attempt(key, owner)
		switch {
		case err == nil:
			return lease, nil
		case lockapi.Unknown(err):
			unknown = err
		case err != lockapi.ErrNotAcquired:
			refused = err // a refusal, or a WAIT that fell short
		}
		elapsed := c.budgetClock() - start
		if elapsed >= wait {
			switch {
			case unknown != nil:
				return lockapi.Lease{}, fmt.Errorf("redis: acquire %s: %d attempts, one uncertain: %w", key, attempt, unknown)
			case refused != nil:
				return lockapi.Lease{}, fmt.Errorf("redis: acquire %s: %d attempts in %v, last: %v: %w",
					key, attempt, elapsed, refused, lockapi.ErrNotAcquired)
			}
			return lockapi.Lease{}, fmt.Errorf("redis: acquire %s: held by another client after %d attempts in %v: %w",
				key, attempt, elapsed, lockapi.ErrNotAcquired)
		}
		lockapi.SleepBackoff(c.env, c.opts.BackoffMax, wait-elapsed)
	}
}

// attempt makes one acquire attempt: nil with the lease, ErrNotAcquired when
// the key is held (or WAIT fell short), ErrUnknown on a timeout, another error
// when the instance refused the command.
func (c *Client) attempt(key, owner string) (lockapi.Lease, error) {
	sent := c.env.Mono()
	r, granter, err := c.t.Do(c.acquireCmd(key, owner), c.opts.RequestTimeout)
	if err != nil {
		return lockapi.Lease{}, err
	}
	if !r.OK {
		return lockapi.Lease{}, lockapi.ErrNotAcquired
	}
	lease := lockapi.Lease{Key: key, Owner: owner, Deadline: sent + c.opts.TTL, Detail: c.grantedBy(granter)}
	if c.opts.Fencing {
		lease.Token, lease.HasToken = uint64(r.Int), true
	}
	if c.opts.Wait > 0 {
		wr, _, err := c.t.Do(Wait{N: c.opts.Wait, Timeout: c.opts.WaitTimeout}, c.opts.RequestTimeout+c.opts.WaitTimeout)
		if err != nil || !wr.OK {
			// Not replicated as asked: give the key back and try again.
			if _, gerr := c.do(DelIfValue{Key: key, Value: owner}); lockapi.Unknown(gerr) {
				// Issue 28: the key may still be ours; the retries' refusals
				// (our own value) would not undo that.
				return lockapi.Lease{}, fmt.Errorf("WAIT %d after SET on %s: %d replica(s) acknowledged (%v), giving the key back: %w",
					c.opts.Wait, granter, wr.Int, err, gerr)
			}
			return lockapi.Lease{}, fmt.Errorf("WAIT %d after SET on %s: %d replica(s) acknowledged (%v): %w",
				c.opts.Wait, granter, wr.Int, err, lockapi.ErrNotAcquired)
		}
		lease.Detail += fmt.Sprintf(", WAIT %d: %d replica(s) acknowledged", c.opts.Wait, wr.Int)
	}
	c.mu.Lock()
	if h := c.held[key]; h != nil && !h.Released && c.opts.Reentrancy == ReentrancyServer {
		h.Count++
		h.Lease.Deadline = lease.Deadline
		l := h.Lease
		c.mu.Unlock()
		return l, nil
	}
	h := c.hold(lease)
	c.mu.Unlock()
	if c.opts.Watchdog {
		c.t.Go(c.env.Name()+"/watchdog", func(w lockapi.Env, t Transport) { c.watchdog(w, t, h) })
	}
	return lease, nil
}

// hold records l as held; mu is held.
func (c *Client) hold(l lockapi.Lease) *holds.Hold {
	h := c.spare
	if h == nil {
		h = new(holds.Hold)
	}
	c.spare = nil
	*h = holds.Hold{Lease: l, Count: 1}
	c.held[l.Key] = h
	return h
}

// watchdog renews h every TTL/3 until it is released or found lost, sending
// through t.
func (c *Client) watchdog(w lockapi.Env, t Transport, h *holds.Hold) {
	holds.Keep(w, &c.mu, h, c.opts.TTL/3, c.opts.TTL, func(l lockapi.Lease) error {
		r, _, err := t.Do(ExpireIfValue{Key: l.Key, Value: l.Owner, TTL: c.opts.TTL}, c.opts.RequestTimeout)
		switch {
		case err != nil:
			return fmt.Errorf("redis: renew %s: %w", l.Key, err)
		case !r.OK:
			return fmt.Errorf("redis: renew %s: %w", l.Key, lockapi.ErrNotHeld)
		}
		return nil
	}, c.observe)
}

// Release gives the lock back with the configured release variant.
func (c *Client) Release(l lockapi.Lease) error {
	c.mu.Lock()
	h := c.held[l.Key]
	if h != nil && !h.Released && c.opts.Reentrancy == ReentrancyClient && h.Count > 1 {
		h.Count--
		c.mu.Unlock()
		return nil
	}
	if h != nil && h.Lease.Owner == l.Owner && c.opts.Reentrancy != ReentrancyServer {
		h.Released = true
		delete(c.held, l.Key)
		c.giveBack(h)
	}
	c.mu.Unlock()
	switch {
	case c.opts.Reentrancy == ReentrancyServer:
		r, err := c.do(UnholdLock{Key: l.Key, Owner: l.Owner, TTL: c.opts.TTL})
		if err != nil {
			return err
		}
		if !r.OK {
			c.forget(l.Key)
			return fmt.Errorf("redis: release %s: %w", l.Key, lockapi.ErrNotHeld)
		}
		if r.Int == 0 {
			c.forget(l.Key)
		} else if h != nil {
			c.mu.Lock()
			h.Count--
			c.mu.Unlock()
		}
		return nil
	case c.opts.Release == ReleaseDel:
		r, err := c.do(Del{Key: l.Key})
		if err != nil {
			return err
		}
		if !r.OK {
			return fmt.Errorf("redis: DEL %s: no such key: %w", l.Key, lockapi.ErrNotHeld)
		}
		return nil
	case c.opts.Release == ReleaseCheckThenDel:
		r, err := c.do(Get{Key: l.Key})
		if err != nil {
			return err
		}
		if !r.OK || r.Value != l.Owner {
			return fmt.Errorf("redis: release %s: value is %q, not ours: %w", l.Key, r.Value, lockapi.ErrNotHeld)
		}
		if _, err := c.do(Del{Key: l.Key}); err != nil {
			return err
		}
		return nil
	default:
		r, err := c.do(DelIfValue{Key: l.Key, Value: l.Owner})
		if err != nil {
			return err
		}
		if !r.OK {
			return fmt.Errorf("redis: release %s: %w", l.Key, lockapi.ErrNotHeld)
		}
		return nil
	}
}

func (c *Client) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.held[key]; h != nil {
		h.Released = true
		delete(c.held, key)
		c.giveBack(h)
	}
}

// giveBack keeps h, just taken out of held, as the spare for the next hold
// unless a watchdog still reads it (it stops when it sees h released); mu is
// held.
func (c *Client) giveBack(h *holds.Hold) {
	if !c.opts.Watchdog {
		c.spare = h
	}
}
