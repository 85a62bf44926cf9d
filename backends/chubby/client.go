package chubby

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

var (
	errNoMaster = errors.New("no master answered")
	errExpired  = errors.New("session expired")
)

type hold struct {
	lease   lockapi.Lease
	session int64
	count   int
}

// Client is a process's Chubby client library: one session kept alive by a
// KeepAlive process, a conservative local lease (started when a KeepAlive is
// sent, so it ends before the master's), and exclusive locks whose grants
// carry a sequencer; the lease's fencing token is the lock's generation. A
// holder believes it holds until its local lease runs out (jeopardy).
type Client struct {
	p        *sim.Proc
	cell     *Cell
	o        Options
	servers  []sim.NodeID
	master   int
	session  int64
	sessions []int64
	next     int64
	seq      uint64
	leaseEnd time.Duration // local lease, monotonic
	opening  bool
	io       *sim.Proc
	held     map[string]*hold
	onRenew  func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

func newClient(p *sim.Proc, c *Cell) *Client {
	return &Client{p: p, cell: c, o: c.opts, servers: sim.IDs(c.nodes), master: p.Rand().IntN(len(c.nodes)),
		next: int64(p.Node().ID()+1) << 32, held: map[string]*hold{}}
}

// leaseOwner is the owner of the leases of a process's session.
func leaseOwner(procName string, session int64) string {
	return fmt.Sprintf("%s/%#x", procName, session)
}

// OnRenew registers the observer of the local lease's renewals.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { c.onRenew = fn }

// call sends r to the master, following redirections, for at most one
// round over the replicas. unknown reports whether some attempt got no reply.
func (c *Client) call(p *sim.Proc, r Request) (resp Response, unknown bool, err error) {
	for range 2 * len(c.servers) {
		reply, err := p.Call(c.servers[c.master], r, c.o.RequestTimeout)
		if err != nil {
			unknown = true
			c.master = (c.master + 1) % len(c.servers)
			continue
		}
		resp = reply.(Response)
		if resp.Code != CodeNotMaster {
			return resp, unknown, nil
		}
		if resp.Master != 0 && int(resp.Master-1) != c.master {
			c.master = int(resp.Master - 1)
		} else {
			c.master = (c.master + 1) % len(c.servers)
			p.Sleep(c.o.Backoff)
		}
	}
	return Response{}, unknown, errNoMaster
}

// ensureSession opens a session if there is none.
func (c *Client) ensureSession(p *sim.Proc) error {
	for c.opening {
		p.Sleep(10 * time.Millisecond)
	}
	if c.session != 0 {
		return nil
	}
	c.opening = true
	defer func() { c.opening = false }()
	c.next++
	id := c.next
	c.seq++
	sent := p.Mono()
	c.cell.truth.opened(id, p.Name(), p.Node().Name())
	resp, _, err := c.call(p, Request{Op: OpOpen, Session: id, Seq: c.seq})
	if err != nil {
		return err
	}
	if resp.Code != CodeOK {
		return fmt.Errorf("open: %s", resp.Code)
	}
	c.session, c.leaseEnd = id, sent+c.o.Lease
	c.sessions = append(c.sessions, id)
	if c.io == nil {
		c.io = p.Spawn(p.Name()+"/chubby-keepalive", c.keepAlive)
	}
	return nil
}

// keepAlive extends the session lease; a holder's belief follows the local
// lease. Once the local lease has run out the client is in jeopardy; after
// the grace period without a successful KeepAlive it gives the session up.
func (c *Client) keepAlive(w *sim.Proc) {
	for {
		w.Sleep(c.o.keepAlive())
		if c.session == 0 || c.opening {
			continue
		}
		if w.Mono() > c.leaseEnd+c.o.Grace {
			// Jeopardy lasted the whole grace period: the session is
			// considered expired; the next request opens a new one.
			c.session = 0
			continue
		}
		keys := c.heldKeys()
		for _, k := range keys {
			c.observe(c.held[k].lease, false, nil)
		}
		session := c.session
		c.seq++
		sent := w.Mono()
		resp, _, err := c.call(w, Request{Op: OpKeepAlive, Session: session, Seq: c.seq})
		switch {
		case err != nil:
			// No master answered: the lease may have been extended or not.
			err = fmt.Errorf("keepalive: %w (%w)", err, lockapi.ErrUnknown)
		case resp.Code == CodeExpired:
			if c.session == session {
				c.session = 0
			}
			err = fmt.Errorf("keepalive: %w: %w", errExpired, lockapi.ErrNotHeld)
		default:
			c.leaseEnd = sent + c.o.Lease
		}
		for _, k := range keys {
			h := c.held[k]
			if h == nil {
				continue
			}
			if err == nil {
				h.lease.Deadline = c.leaseEnd
			}
			c.observe(h.lease, true, err)
		}
	}
}

func (c *Client) observe(l lockapi.Lease, done bool, err error) {
	if c.onRenew != nil {
		c.onRenew(l, done, err)
	}
}

func (c *Client) heldKeys() []string {
	return sorted.Keys(c.held)
}

// Acquire takes the exclusive lock key, retrying while it is held or in its
// lock-delay until wait runs out; reentrant on the client.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	p := c.p
	if h := c.held[key]; h != nil {
		h.count++
		return h.lease, nil
	}
	deadline := p.Mono() + wait
	unknown := false
	for {
		if err := c.ensureSession(p); err == nil {
			session := c.session
			c.seq++
			resp, lost, err := c.call(p, Request{Op: OpAcquire, Session: session, Seq: c.seq, Lock: key})
			unknown = unknown || lost
			switch {
			case err == nil && resp.Code == CodeOK:
				l := lockapi.Lease{Key: key, Owner: leaseOwner(p.Name(), session), Token: resp.Sequencer.Generation,
					HasToken: true, Deadline: c.leaseEnd,
					Detail: fmt.Sprintf("sequencer (%s, %s, generation %d), session %#x", key, resp.Sequencer.Mode, resp.Sequencer.Generation, session)}
				c.held[key] = &hold{lease: l, session: session, count: 1}
				return l, nil
			case err == nil && resp.Code == CodeExpired:
				if c.session == session {
					c.session = 0
				}
			}
		}
		if p.Mono()+c.o.Backoff >= deadline {
			break
		}
		p.Sleep(c.o.Backoff)
	}
	if unknown {
		return lockapi.Lease{}, fmt.Errorf("acquire %s: no reply to some attempt (%w)", key, lockapi.ErrUnknown)
	}
	return lockapi.Lease{}, fmt.Errorf("acquire %s: held by another session or in its lock-delay: %w", key, lockapi.ErrNotAcquired)
}

// Release gives the lock back cleanly (no lock-delay follows).
func (c *Client) Release(l lockapi.Lease) error {
	h := c.held[l.Key]
	if h == nil || h.lease.Owner != l.Owner {
		return fmt.Errorf("%w: no hold of %s", lockapi.ErrNotHeld, l.Owner)
	}
	if h.count--; h.count > 0 {
		return nil
	}
	delete(c.held, l.Key)
	session := h.session
	if session != c.session {
		return fmt.Errorf("%w: the session that held %s is gone", lockapi.ErrNotHeld, l.Key)
	}
	c.seq++
	resp, unknown, err := c.call(c.p, Request{Op: OpRelease, Session: session, Seq: c.seq, Lock: l.Key})
	switch {
	case err != nil:
		return fmt.Errorf("release %s: %w (%w)", l.Key, err, lockapi.ErrUnknown)
	case resp.Code == CodeOK:
		return nil
	case unknown:
		// An earlier attempt got no reply: it may have released the lock
		// (issue 28), so this attempt's "busy" or "expired" says nothing of
		// whether the release happened.
		return fmt.Errorf("release %s: %s after an attempt with no reply (%w)", l.Key, resp.Code, lockapi.ErrUnknown)
	}
	return fmt.Errorf("release %s: %s: %w", l.Key, resp.Code, lockapi.ErrNotHeld)
}
