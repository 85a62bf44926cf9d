package redis

import (
	"fmt"
	"github.com/locklab/locklab/backends/holds"
	"strconv"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Client is the lock client library of one client process. It is not shared
// between processes (it keeps per-acquisition state, like a real client).
type Client struct {
	p       *sim.Proc
	topo    Topology
	primary sim.NodeID // where commands go
	stale   bool       // ask the monitor for the primary before the next command
	opts    Options
	id      string // stable acquirer id for reentrant modes
	seq     int
	held    map[string]*holds.Hold // client-side reentrancy and watchdogs
	// spare is a hold given back (released or forgotten) that nothing points
	// to any more (no watchdog), for the next hold to reuse.
	spare   *holds.Hold
	onRenew func(l lockapi.Lease, done bool, err error)

	// the last acquire command, boxed: the retries of one acquire send it again
	cmdKey, cmdOwner string
	cmd              any
	// the Detail of the last lease granted, and by whom
	grantedByID   sim.NodeID
	grantedByText string
}

// Topology is where a client finds Redis: one instance, or a primary with
// replicas watched by a monitor.
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
	return &Client{
		p:       p,
		topo:    t,
		primary: t.Primary,
		opts:    opts,
		id:      fmt.Sprintf("%s:%016x", p.Name(), p.Rand().Uint64()),
		held:    map[string]*holds.Hold{},
	}
}

// OnRenew registers the watchdog observer.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { c.onRenew = fn }

func (c *Client) budgetClock() time.Duration {
	if c.opts.BudgetClock == ClockWall {
		return c.p.Wall()
	}
	return c.p.Mono()
}

func (c *Client) nodeName(id sim.NodeID) string { return c.p.World().Nodes()[id].Name() }

// grantedBy is a lease's Detail when instance id granted it: "granted by
// NAME", built once per instance.
func (c *Client) grantedBy(id sim.NodeID) string {
	if c.grantedByID != id || c.grantedByText == "" {
		c.grantedByID, c.grantedByText = id, "granted by "+c.nodeName(id)
	}
	return c.grantedByText
}

// call sends cmd to the primary from process p and waits at most timeout. A
// timeout is ErrUnknown; an instance that refused the command (a replica, an
// instance within its restart delay) gives a plain error: it certainly did not
// execute it. Either makes a monitored client ask for the primary again.
func (c *Client) call(p *sim.Proc, cmd any, timeout time.Duration) (Reply, error) {
	if c.stale && c.topo.HasMonitor {
		if r, err := p.Call(c.topo.Monitor, GetPrimary{}, c.opts.RequestTimeout); err == nil {
			c.primary, c.stale = r.(PrimaryIs).Node, false
		}
	}
	to := c.primary
	r, err := p.Call(to, cmd, timeout)
	if err != nil {
		c.stale = true
		return Reply{}, &unknownError{node: c.nodeName(to), errs: [2]error{lockapi.ErrUnknown, err}}
	}
	rep := r.(Reply)
	if rep.Err != "" {
		c.stale = true
		return rep, fmt.Errorf("redis %s: %s", c.nodeName(to), rep.Err)
	}
	return rep, nil
}

// unknownError is a command whose outcome is unknown (it timed out): "redis
// NODE: <ErrUnknown>: <cause>", formatted only when read (most are retried).
type unknownError struct {
	node string
	errs [2]error // ErrUnknown and the cause, what Unwrap returns (without allocating)
}

func (e *unknownError) Error() string {
	return "redis " + e.node + ": " + lockapi.ErrUnknown.Error() + ": " + e.errs[1].Error()
}

func (e *unknownError) Unwrap() []error { return e.errs[:] }

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

func (c *Client) do(cmd any) (Reply, error) { return c.call(c.p, cmd, c.opts.RequestTimeout) }

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
	if h := c.held[key]; h != nil && !h.Released && c.opts.Reentrancy == ReentrancyClient {
		h.Count++
		return h.Lease, nil
	}
	owner := c.id
	if c.opts.Reentrancy == ReentrancyNone {
		c.seq++
		owner = ownerID(c.p.Name(), c.seq, c.p.Rand().Uint32())
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
		lockapi.SleepBackoff(c.p, c.opts.BackoffMax, wait-elapsed)
	}
}

// attempt makes one acquire attempt: nil with the lease, ErrNotAcquired when
// the key is held (or WAIT fell short), ErrUnknown on a timeout, another error
// when the instance refused the command.
func (c *Client) attempt(key, owner string) (lockapi.Lease, error) {
	sent := c.p.Mono()
	r, err := c.do(c.acquireCmd(key, owner))
	if err != nil {
		return lockapi.Lease{}, err
	}
	if !r.OK {
		return lockapi.Lease{}, lockapi.ErrNotAcquired
	}
	granter := c.primary
	lease := lockapi.Lease{Key: key, Owner: owner, Deadline: sent + c.opts.TTL, Detail: c.grantedBy(granter)}
	if c.opts.Fencing {
		lease.Token, lease.HasToken = uint64(r.Int), true
	}
	if c.opts.Wait > 0 {
		wr, err := c.call(c.p, Wait{N: c.opts.Wait, Timeout: c.opts.WaitTimeout}, c.opts.RequestTimeout+c.opts.WaitTimeout)
		if err != nil || !wr.OK {
			// Not replicated as asked: give the key back and try again.
			if _, gerr := c.do(DelIfValue{Key: key, Value: owner}); lockapi.Unknown(gerr) {
				// Issue 28: the key may still be ours; the retries' refusals
				// (our own value) would not undo that.
				return lockapi.Lease{}, fmt.Errorf("WAIT %d after SET on %s: %d replica(s) acknowledged (%v), giving the key back: %w",
					c.opts.Wait, c.nodeName(granter), wr.Int, err, gerr)
			}
			return lockapi.Lease{}, fmt.Errorf("WAIT %d after SET on %s: %d replica(s) acknowledged (%v): %w",
				c.opts.Wait, c.nodeName(granter), wr.Int, err, lockapi.ErrNotAcquired)
		}
		lease.Detail += fmt.Sprintf(", WAIT %d: %d replica(s) acknowledged", c.opts.Wait, wr.Int)
	}
	if h := c.held[key]; h != nil && !h.Released && c.opts.Reentrancy == ReentrancyServer {
		h.Count++
		h.Lease.Deadline = lease.Deadline
		return h.Lease, nil
	}
	c.hold(lease)
	return lease, nil
}

func (c *Client) hold(l lockapi.Lease) {
	h := c.spare
	if h == nil {
		h = new(holds.Hold)
	}
	c.spare = nil
	*h = holds.Hold{Lease: l, Count: 1}
	c.held[l.Key] = h
	if c.opts.Watchdog {
		c.p.Spawn(c.p.Name()+"/watchdog", func(w *sim.Proc) { c.watchdog(w, h) })
	}
}

// watchdog renews h every TTL/3 until it is released or found lost.
func (c *Client) watchdog(w *sim.Proc, h *holds.Hold) {
	holds.Watchdog(w, h, c.opts.TTL/3, c.opts.TTL, func(w *sim.Proc, l lockapi.Lease) error {
		r, err := c.call(w, ExpireIfValue{Key: l.Key, Value: l.Owner, TTL: c.opts.TTL}, c.opts.RequestTimeout)
		switch {
		case err != nil:
			return fmt.Errorf("redis: renew %s: %w", l.Key, err)
		case !r.OK:
			return fmt.Errorf("redis: renew %s: %w", l.Key, lockapi.ErrNotHeld)
		}
		return nil
	}, c.onRenew)
}

// Release gives the lock back with the configured release variant.
func (c *Client) Release(l lockapi.Lease) error {
	h := c.held[l.Key]
	if h != nil && !h.Released && c.opts.Reentrancy == ReentrancyClient && h.Count > 1 {
		h.Count--
		return nil
	}
	if h != nil && h.Lease.Owner == l.Owner && c.opts.Reentrancy != ReentrancyServer {
		h.Released = true
		delete(c.held, l.Key)
		c.giveBack(h)
	}
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
			h.Count--
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
	if h := c.held[key]; h != nil {
		h.Released = true
		delete(c.held, key)
		c.giveBack(h)
	}
}

// giveBack keeps h, just taken out of held, as the spare for the next hold
// unless a watchdog still reads it (it stops when it sees h released).
func (c *Client) giveBack(h *holds.Hold) {
	if !c.opts.Watchdog {
		c.spare = h
	}
}
