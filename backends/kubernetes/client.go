package kubernetes

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

var (
	errNotFound   = errors.New("NotFound")
	errConflict   = errors.New("Conflict")
	errNoLease    = errors.New("lease not initialized, call get or create first")
	errLostLeader = errors.New("failed to renew lease within renew-deadline: stopped leading")
	errDeadline   = errors.New("context deadline exceeded")
)

// elector is client-go's LeaderElector over a LeaseLock for one Lease, as
// one process keeps it across its runs: the record it observed, when it
// observed it on its own monotonic clock (observedTime: Go's time.Now
// carries a monotonic reading, and the elector only compares times it took
// itself), and the LeaseLock's cached object (its resourceVersion).
type elector struct {
	name        string
	observed    Record
	observedRaw string
	observedAt  time.Duration // observedTime, monotonic
	rv          int64         // the LeaseLock's cached lease (0: none yet)
	// unknown: a create or update of the current acquire or renewal timed
	// out (it may have been applied).
	unknown bool
}

// hold is a leadership the workload holds.
type hold struct {
	lease    lockapi.Lease
	e        *elector
	count    int
	renew    *sim.Proc // the renew loop
	renewing bool      // a renewal is in flight (its observer was told)
	lost     bool      // the renew loop gave up: OnStoppedLeading
}

// Client is a process's elector library: Acquire is LeaderElector.Run's
// acquire (tryAcquireOrRenew every RetryPeriod, jittered, until the wait
// budget runs out); once leading, a process of its own runs renew (a poll of
// tryAcquireOrRenew every RetryPeriod that gives up after RenewDeadline
// without success: OnStoppedLeading) and, with ReleaseOnCancel, release.
// Release is the cancellation of the run's context. The lease's Deadline is
// when the current renew poll gives up, on the client's monotonic clock: the
// leader believes it leads until then.
type Client struct {
	p        *sim.Proc
	c        *Cluster
	o        Options
	identity string
	servers  []sim.NodeID
	server   int // the API server the client's connection goes to
	electors map[string]*elector
	held     map[string]*hold
	onRenew  func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

func newClient(p *sim.Proc, c *Cluster) *Client {
	return &Client{p: p, c: c, o: c.opts, identity: p.Node().Name(), servers: sim.IDs(c.nodes), server: p.Rand().IntN(len(c.nodes)),
		electors: map[string]*elector{}, held: map[string]*hold{}}
}

// OnRenew registers the observer of the leader's renewals.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { c.onRenew = fn }

func (c *Client) observe(l lockapi.Lease, done bool, err error) {
	if c.onRenew != nil {
		c.onRenew(l, done, err)
	}
}

// call sends r to the client's API server and waits until the context's
// deadline until, at most request-timeout; a timeout moves the connection
// to the next API server (the old one is presumed gone). A context already
// done sends nothing.
func (c *Client) call(p *sim.Proc, r Request, until time.Duration) (Response, error) {
	r.Client = c.identity
	timeout := min(c.o.requestTimeout(), until-p.Mono())
	if timeout <= 0 {
		return Response{}, fmt.Errorf("%s lease %s/%s: %w", r.Verb, Namespace, r.Name, errDeadline)
	}
	body, err := p.Call(c.servers[c.server], r, timeout)
	if err != nil {
		c.server = (c.server + 1) % len(c.servers)
		return Response{}, fmt.Errorf("%s lease %s/%s: %w (%w)", r.Verb, Namespace, r.Name, err, lockapi.ErrUnknown)
	}
	if p.Mono() > until {
		// The answer was read only after the context's deadline (the
		// client was paused meanwhile): the expired context wins, as the
		// timer fires before the response is read and parsed; the request
		// may have been applied.
		return Response{}, fmt.Errorf("%s lease %s/%s: %w after the request was sent (%w)", r.Verb, Namespace, r.Name, errDeadline, lockapi.ErrUnknown)
	}
	resp := body.(Response)
	switch resp.Status {
	case StatusOK, StatusCreated:
		return resp, nil
	case StatusNotFound:
		return resp, fmt.Errorf("%s lease %s/%s: %w", r.Verb, Namespace, r.Name, errNotFound)
	case StatusConflict:
		return resp, fmt.Errorf("%s lease %s/%s: %s: %w", r.Verb, Namespace, r.Name, resp.Reason, errConflict)
	case StatusTimeout:
		return resp, fmt.Errorf("%s lease %s/%s on %s: %s (%w)", r.Verb, Namespace, r.Name, resp.Server, resp.Reason, lockapi.ErrUnknown)
	}
	return resp, fmt.Errorf("%s lease %s/%s on %s: %d %s", r.Verb, Namespace, r.Name, resp.Server, resp.Status, resp.Reason)
}

func (c *Client) elector(name string) *elector {
	e := c.electors[name]
	if e == nil {
		e = &elector{name: name}
		c.electors[name] = e
	}
	return e
}

func (e *elector) isLeader(identity string) bool { return e.observed.Holder == identity }

// isLeaseValid: observedTime + the observed record's leaseDurationSeconds is
// after now.
func (e *elector) isLeaseValid(now time.Duration) bool {
	return e.observedAt+time.Duration(e.observed.DurationSeconds)*time.Second > now
}

func (e *elector) setObserved(p *sim.Proc, r Record) {
	e.observed = r
	e.observedAt = p.Mono()
}

// get is LeaseLock.Get.
func (c *Client) get(p *sim.Proc, e *elector, until time.Duration) (Record, string, error) {
	resp, err := c.call(p, Request{Verb: VerbGet, Name: e.name}, until)
	if err != nil {
		return Record{}, "", err
	}
	e.rv = resp.ResourceVersion
	return resp.Record, resp.Record.encode(), nil
}

// write is LeaseLock.Create or Update.
func (c *Client) write(p *sim.Proc, e *elector, v Verb, r Record, until time.Duration) error {
	if v == VerbUpdate && e.rv == 0 {
		return errNoLease
	}
	resp, err := c.call(p, Request{Verb: v, Name: e.name, Record: r, ResourceVersion: e.rv}, until)
	if err != nil {
		if lockapi.Unknown(err) {
			e.unknown = true
		}
		return err
	}
	e.rv = resp.ResourceVersion
	return nil
}

// tryAcquireOrRenew is client-go's, step by step; its context ends at
// until (each request also bounded by request-timeout).
func (c *Client) tryAcquireOrRenew(p *sim.Proc, e *elector, until time.Duration) (bool, error) {
	now := p.Mono()
	wall := p.Wall()
	rec := Record{Holder: c.identity, DurationSeconds: c.o.leaseSeconds(), RenewTime: wall, AcquireTime: wall}

	// 1. fast path for the leader to update optimistically assuming that the
	// record observed last time is the current version.
	if e.isLeader(c.identity) && e.isLeaseValid(now) {
		old := e.observed
		fast := rec
		fast.AcquireTime, fast.Transitions = old.AcquireTime, old.Transitions
		if err := c.write(p, e, VerbUpdate, fast, until); err == nil {
			e.setObserved(p, fast)
			return true, nil
		}
	}

	// 2. obtain or create the ElectionRecord.
	cur, raw, err := c.get(p, e, until)
	if err != nil {
		if !errors.Is(err, errNotFound) {
			return false, err
		}
		if err := c.write(p, e, VerbCreate, rec, until); err != nil {
			return false, err
		}
		e.setObserved(p, rec)
		return true, nil
	}

	// 3. Record obtained, check the Identity & Time.
	if e.observedRaw != raw {
		e.setObserved(p, cur)
		e.observedRaw = raw
	}
	if cur.Holder != "" && e.isLeaseValid(now) && !e.isLeader(c.identity) {
		return false, fmt.Errorf("lease %s/%s is held by %s and has not yet expired: %w", Namespace, e.name, cur.Holder, lockapi.ErrNotHeld)
	}

	// 4. Update, keeping acquireTime and leaseTransitions when leading.
	if e.isLeader(c.identity) {
		rec.AcquireTime, rec.Transitions = cur.AcquireTime, cur.Transitions
	} else {
		rec.Transitions = cur.Transitions + 1
	}
	if err := c.write(p, e, VerbUpdate, rec, until); err != nil {
		return false, err
	}
	e.setObserved(p, rec)
	return true, nil
}

// jittered is wait.Jitter(RetryPeriod, JitterFactor).
func (c *Client) jittered(p *sim.Proc) time.Duration {
	d := c.o.RetryPeriod
	return d + time.Duration(p.Rand().Float64()*JitterFactor*float64(d))
}

// token is the fencing token of a leadership just taken.
func (c *Client) token(e *elector) (uint64, bool) {
	switch c.o.Fencing {
	case FencingTransitions:
		return uint64(e.observed.Transitions) + 1, true
	case FencingResourceVersion:
		return uint64(e.rv), true
	}
	return 0, false
}

// Acquire becomes leader of the Lease key: LeaderElector.acquire, its
// context ending after wait (0: one try). Nested acquires by the holder are
// counted on the client.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	p := c.p
	if h := c.held[key]; h != nil && !h.lost {
		h.count++
		return h.lease, nil
	}
	if h := c.held[key]; h != nil {
		// The last run stopped leading by itself; its release (with
		// ReleaseOnCancel) ends before the next run starts.
		for !h.renew.Finished() {
			p.Sleep(c.o.RetryPeriod / 4)
		}
		delete(c.held, key)
	}
	e := c.elector(key)
	e.unknown = false
	deadline := p.Mono() + wait
	var last error
	for {
		ok, err := c.tryAcquireOrRenew(p, e, max(deadline, p.Mono()+c.o.requestTimeout()))
		if ok {
			return c.lead(p, e), nil
		}
		last = err
		d := c.jittered(p)
		if p.Mono()+d > deadline {
			break
		}
		p.Sleep(d)
	}
	if e.unknown {
		return lockapi.Lease{}, fmt.Errorf("acquire lease %s/%s: a write timed out and may have made us leader (last: %v): %w",
			Namespace, key, last, lockapi.ErrUnknown)
	}
	return lockapi.Lease{}, fmt.Errorf("acquire lease %s/%s: not leader within %v (last: %v): %w", Namespace, key, wait, last, lockapi.ErrNotAcquired)
}

// lead starts leading: the lease handed to the workload and the renew loop.
func (c *Client) lead(p *sim.Proc, e *elector) lockapi.Lease {
	token, has := c.token(e)
	l := lockapi.Lease{Key: e.name, Owner: c.identity, Token: token, HasToken: has,
		// renew's first poll starts at once and gives up after RenewDeadline.
		Deadline: p.Mono() + c.o.RenewDeadline,
		Detail: fmt.Sprintf("Lease %s/%s, resourceVersion %d, leaseTransitions %d, via %s", Namespace, e.name, e.rv,
			e.observed.Transitions, c.c.nodes[c.server].Name())}
	h := &hold{lease: l, e: e, count: 1}
	c.held[e.name] = h
	h.renew = p.Spawn(fmt.Sprintf("%s/renew-%s", p.Name(), e.name), func(w *sim.Proc) { c.renewLoop(w, h) })
	return l
}

// renewLoop is LeaderElector.renew: wait.Until(poll, RetryPeriod) where
// each poll calls tryAcquireOrRenew at once and then every RetryPeriod until
// it succeeds or RenewDeadline has passed since the poll started (the
// poll's context also ends the request in flight). A poll that fails stops
// the leadership (OnStoppedLeading); with ReleaseOnCancel the Lease is then
// released.
func (c *Client) renewLoop(w *sim.Proc, h *hold) {
	for first := true; ; first = false {
		if !first {
			w.Sleep(c.o.RetryPeriod)
		}
		end := w.Mono() + c.o.RenewDeadline
		ok := false
		for {
			start := w.Mono()
			if start >= end {
				break // the poll's context is done
			}
			h.renewing = true
			c.observe(h.lease, false, nil)
			got, err := c.tryAcquireOrRenew(w, h.e, end)
			h.renewing = false
			if got {
				ok = true
				h.lease.Deadline = w.Mono() + c.o.RetryPeriod + c.o.RenewDeadline
				c.observe(h.lease, true, nil)
				break
			}
			c.observe(h.lease, true, fmt.Errorf("renew: %w", err))
			next := start + c.o.RetryPeriod
			if next >= end {
				break
			}
			w.Sleep(max(0, next-w.Mono()))
		}
		if !ok {
			h.lost = true
			if c.o.ReleaseOnCancel {
				c.tryRelease(w, h.e, w.Mono()+c.o.RenewDeadline)
			}
			return
		}
	}
}

// tryRelease is LeaderElector.release: within RenewDeadline, get the Lease
// and, if the record this elector observed last names it (IsLeader: the
// observation may be old), update it to no holder, leaseDurationSeconds 1
// and the fetched leaseTransitions, retrying on Conflict. The update carries
// the resourceVersion just fetched, whoever holds the Lease now.
func (c *Client) tryRelease(p *sim.Proc, e *elector, until time.Duration) bool {
	for p.Mono() < until {
		cur, _, err := c.get(p, e, until)
		if err != nil {
			return false
		}
		if !e.isLeader(c.identity) {
			return true
		}
		wall := p.Wall()
		rec := Record{Transitions: cur.Transitions, DurationSeconds: 1, RenewTime: wall, AcquireTime: wall}
		if err := c.write(p, e, VerbUpdate, rec, until); err != nil {
			if errors.Is(err, errConflict) {
				continue
			}
			return false
		}
		e.setObserved(p, rec)
		return true
	}
	return false
}

// Release stops leading: the run's context is cancelled, which ends the
// renew loop (and the renewal in flight); with ReleaseOnCancel the Lease is
// released as client-go does. ErrNotHeld: the renew loop had already given
// up (OnStoppedLeading came first).
func (c *Client) Release(l lockapi.Lease) error {
	h := c.held[l.Key]
	if h == nil || h.lease.Owner != l.Owner {
		return fmt.Errorf("%w: no leadership of %s/%s", lockapi.ErrNotHeld, Namespace, l.Key)
	}
	if h.count--; h.count > 0 {
		return nil
	}
	delete(c.held, l.Key)
	if h.lost {
		return fmt.Errorf("release lease %s/%s: %w: %w", Namespace, l.Key, errLostLeader, lockapi.ErrNotHeld)
	}
	h.renew.Kill()
	if h.renewing {
		h.renewing = false
		c.observe(h.lease, true, fmt.Errorf("renew cancelled by the release (%w)", lockapi.ErrUnknown))
	}
	if !c.o.ReleaseOnCancel {
		return nil
	}
	h.e.unknown = false
	if !c.tryRelease(c.p, h.e, c.p.Mono()+c.o.RenewDeadline) && h.e.unknown {
		return fmt.Errorf("release lease %s/%s: the update timed out (%w)", Namespace, l.Key, lockapi.ErrUnknown)
	}
	return nil
}
