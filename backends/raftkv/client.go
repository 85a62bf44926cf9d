package raftkv

import (
	"errors"
	"fmt"
	"github.com/locklab/locklab/backends/holds"
	"time"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Client is the lock client library of one client process (RheaKV's
// DistributedLock): it finds the leader, retries requests across nodes within
// a budget, acquires reentrantly under one acquirer id per key, and renews
// held leases from a watchdog process. It is not shared between processes.
type Client struct {
	p       *sim.Proc
	servers []sim.NodeID
	opts    Options
	id      string // this client's identity: acquirer ids and sessions derive from it
	leader  int    // index in servers of the node believed to lead
	seqs    map[string]uint64
	owners  map[string]string // key -> Acquirer(key), built once per key
	context []byte            // the context of this client's try-locks (its node's name); read-only
	held    map[string]*holds.Hold
	onRenew func(l lockapi.Lease, done bool, err error)
	truth   *truth // the cluster's ground truth, told of client stamps
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// ErrNoLeader means no node accepted the request within the retry budget and
// none of the attempts can have taken effect.
var ErrNoLeader = errors.New("no leader reachable")

// NewClient returns a lock client for process p talking to the raft nodes
// servers (in raft-id order).
func NewClient(p *sim.Proc, servers []sim.NodeID, o Options) *Client {
	return &Client{
		p:       p,
		servers: servers,
		opts:    o,
		id:      fmt.Sprintf("%s-%08x", p.Name(), p.Rand().Uint32()),
		leader:  p.Rand().IntN(len(servers)),
		seqs:    map[string]uint64{},
		owners:  map[string]string{},
		context: []byte(p.Node().Name()),
		held:    map[string]*holds.Hold{},
	}
}

// OnRenew registers the watchdog observer.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { c.onRenew = fn }

// Acquirer is the acquirer id this client uses for key: the same for every
// acquire of key by this client, which is what makes its acquires reentrant.
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

// request sends cmd on behalf of process p under session until a node that
// leads answers, the retry budget is spent, or the state machine refuses it.
// Retries carry the same sequence number, so the command takes effect at
// most once.
func (c *Client) request(p *sim.Proc, session string, cmd lockfsm.Command) (lockfsm.Result, error) {
	c.seqs[session]++
	cmd.Session, cmd.Seq = session, c.seqs[session]
	until := p.Mono() + c.opts.RetryBudget
	var uncertain error
	for attempt := 1; ; attempt++ {
		if c.opts.Stamp == StampClient {
			cmd.Stamp = int64(p.Wall())
			c.truth.stamped(cmd, p.Node().Name(), p.World().Now())
		}
		target := c.leader
		body, err := p.Call(c.servers[target], Request{Cmd: cmd}, c.opts.RequestTimeout)
		var r *Response
		if err == nil {
			rr := body.(Response)
			r = &rr
		}
		switch {
		case err != nil:
			uncertain = err
			c.leader = (target + 1) % len(c.servers)
		case r.NotLeader:
			if r.Leader != 0 && int(r.Leader-1) != target && int(r.Leader) <= len(c.servers) {
				c.leader = int(r.Leader - 1)
				break
			}
			c.leader = (target + 1) % len(c.servers)
			p.Sleep(lockapi.Backoff(p.Rand(), c.opts.BackoffMax))
		case r.Invalid != "":
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s refused: %s", cmd.Op, cmd.Key, r.Invalid)
		case r.Result.Code == lockfsm.Stale:
			return lockfsm.Result{}, fmt.Errorf("raftkv: %s %s: superseded by a later request of session %s", cmd.Op, cmd.Key, session)
		default:
			c.leader = target
			return r.Result, nil
		}
		if p.Mono() >= until {
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
	start := c.p.Mono()
	var uncertain, last error
	var refused lockfsm.Result // the last refusal, made an error only if it is the last outcome
	for attempt := 1; ; attempt++ {
		sent := c.p.Mono()
		r, err := c.request(c.p, c.mainSession(), lockfsm.Command{Op: lockfsm.OpTryLock, Key: key,
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
		elapsed := c.p.Mono() - start
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
		lockapi.SleepBackoff(c.p, c.opts.BackoffMax, wait-elapsed)
	}
}

// granted records a successful try-lock sent at sent (client monotonic time).
func (c *Client) granted(key string, r lockfsm.Result, sent time.Duration) lockapi.Lease {
	deadline := sent + c.opts.Lease
	h := c.held[key]
	if r.Code == lockfsm.ReentrantSuccess && h != nil && !h.Released {
		h.Count++
		h.Lease.Deadline = deadline
		return h.Lease
	}
	if h != nil {
		h.Released = true // our earlier grant was lost; its watchdog stops
	}
	lease := lockapi.Lease{Key: key, Owner: c.Acquirer(key), Token: r.Owner.Token, HasToken: true, Deadline: deadline}
	h = &holds.Hold{Lease: lease, Count: 1}
	c.held[key] = h
	if c.opts.Watchdog {
		c.p.Spawn(c.p.Name()+"/watchdog", func(w *sim.Proc) { c.watchdog(w, h) })
	}
	return lease
}

// watchdog renews h every lease·2/3 until it is released or found lost.
func (c *Client) watchdog(w *sim.Proc, h *holds.Hold) {
	holds.Watchdog(w, h, c.opts.Lease*2/3, c.opts.Lease, func(w *sim.Proc, l lockapi.Lease) error {
		r, err := c.request(w, c.watchdogSession(l.Key), lockfsm.Command{Op: lockfsm.OpKeepLease, Key: l.Key,
			Acquirer: l.Owner, Lease: c.opts.Lease})
		switch {
		case err != nil:
			return err
		case !r.Success:
			return fmt.Errorf("raftkv: keep lease %s: %s: %w", l.Key, describeOwner(r), lockapi.ErrNotHeld)
		}
		return nil
	}, c.onRenew)
}

// Release gives back one acquire of l. The last release of a hold unlocks
// until the server's count reaches zero, giving back acquires that took
// effect without the client knowing (at most maxDrain of them).
func (c *Client) Release(l lockapi.Lease) error {
	h := c.held[l.Key]
	if h != nil && (h.Released || h.Lease.Owner != l.Owner) {
		h = nil
	}
	if h != nil && h.Count > 1 {
		h.Count-- // whatever the outcome: if it did not take effect, the last release drains it
		if err := c.unlock(l); !errors.Is(err, errStillHeld) {
			return err
		}
		return nil
	}
	if h != nil {
		h.Released = true // stop the watchdog before the lock goes
		delete(c.held, l.Key)
	}
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
	r, err := c.request(c.p, c.mainSession(), lockfsm.Command{Op: lockfsm.OpUnlock, Key: l.Key, Acquirer: l.Owner})
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
	r, err := c.request(c.p, c.mainSession(), lockfsm.Command{Op: lockfsm.OpGet, Key: key})
	if err != nil {
		return lockfsm.Owner{}, false, err
	}
	return r.Owner, r.Code == lockfsm.Owned, nil
}
