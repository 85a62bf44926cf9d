package kubernetes

import (
	"crypto/sha256"
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
	// releasing: the renew loop gave up and ReleaseOnCancel's release is
	// in flight; the workload still leads until it ends (client-go's Run
	// cancels OnStartedLeading's context only after renew returns).
	releasing bool
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
	o        Options
	identity string
	nodes    []*sim.Node // the API servers
	servers  []sim.NodeID
	server   int // the API server the client's connection goes to
	electors map[string]*elector
	held     map[string]*hold
	onRenew  func(l lockapi.Lease, done bool, err error)
	jitter   func() float64
	// late is set when the last answer was read after its context's
	// deadline and taken as the answer (LateAnswer); it is told in the
	// next lease handed out or renewal observed.
	late string
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

func newClient(p *sim.Proc, c *Cluster) *Client {
	return newElectorClient(p, c.opts, c.nodes)
}

func newElectorClient(p *sim.Proc, o Options, servers []*sim.Node) *Client {
	cl := &Client{p: p, o: o, identity: processIdentity(o.Identity, p.Node()), nodes: servers, servers: sim.IDs(servers),
		server: p.Rand().IntN(len(servers)), electors: map[string]*elector{}, held: map[string]*hold{}}
	cl.jitter = p.Rand().Float64
	return cl
}

// NewStandaloneClient returns the elector of process p over API servers
// that are not a Cluster's: nodes whose handlers answer each Request with a
// Response. A test that plays the API server itself (a scripted schedule of
// answers) drives the elector with it.
func NewStandaloneClient(p *sim.Proc, o Options, servers []*sim.Node) (*Client, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("kubernetes: a standalone elector needs at least one API server")
	}
	return newElectorClient(p, o, servers), nil
}

// processIdentity is the holder identity of a process on node n: with
// IdentityPerProcess the node's name (the hostname), "_" and a UUID of the
// process, as the Kubernetes components build it (id + "_" +
// string(uuid.NewUUID())); the UUID is derived from the node's name and
// incarnation, so that a restarted process is a new candidate and a run
// replays.
func processIdentity(id Identity, n *sim.Node) string {
	if id == IdentityNode {
		return n.Name()
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", n.Name(), n.Incarnation()))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%s_%x-%x-%x-%x-%x", n.Name(), u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// Identity is the holder identity the client writes to the Lease.
func (c *Client) Identity() string { return c.identity }

// SetJitter replaces the source of the acquire loop's jitter draws (by
// default the client's seeded stream): a test that drives client-go's
// elector, whose draws come from math/rand, feeds the model the same ones.
func (c *Client) SetJitter(fn func() float64) { c.jitter = fn }

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
	resp := body.(Response)
	if p.Mono() > until {
		// The answer was read only after the context's deadline (the
		// client was paused meanwhile): the answer and the deadline are
		// both ready when the client resumes, and Go's select picks either.
		if !c.lateAnswered() {
			return Response{}, fmt.Errorf("%s lease %s/%s: %w after the request was sent, the answer read after the deadline "+
				"(the expired context won the race) (%w)", r.Verb, Namespace, r.Name, errDeadline, lockapi.ErrUnknown)
		}
		c.late = fmt.Sprintf("the %s's answer was read %v after its context's deadline and won the race with it", r.Verb,
			p.Mono()-until)
	}
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

// lateAnswered decides whether an answer read after its context's deadline
// is taken (LateAnswer).
func (c *Client) lateAnswered() bool {
	switch c.o.LateAnswer {
	case LateExpired:
		return false
	case LateAnswered:
		return true
	}
	return c.p.Rand().IntN(2) == 0
}

// lateNote appends to detail the note of an answer read late, once.
func (c *Client) lateNote(detail string) string {
	if c.late == "" {
		return detail
	}
	detail += "; " + c.late
	c.late = ""
	return detail
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
	return resp.Record, resp.Record.observedBytes(), nil
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
	// client-go sets the fields on the record it goes on with: after a
	// failed fast path, a takeover writes the old acquireTime.
	if e.isLeader(c.identity) && e.isLeaseValid(now) {
		old := e.observed
		rec.AcquireTime, rec.Transitions = old.AcquireTime, old.Transitions
		if err := c.write(p, e, VerbUpdate, rec, until); err == nil {
			e.setObserved(p, rec)
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
	return d + time.Duration(c.jitter()*JitterFactor*float64(d))
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
// counted on the client. Once leading, a process of its own renews
// (LeaderElector.renew) and, with ReleaseOnCancel, releases when a renewal
// poll fails.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	p := c.p
	if h := c.held[key]; h != nil && !h.lost && !h.releasing {
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
	ok, last := c.acquire(p, e, p.Mono()+wait)
	if ok {
		h := c.lead(p, e)
		h.renew = p.Spawn(fmt.Sprintf("%s/renew-%s", p.Name(), e.name), func(w *sim.Proc) { c.renew(w, h) })
		return h.lease, nil
	}
	if e.unknown {
		return lockapi.Lease{}, fmt.Errorf("acquire lease %s/%s: a write timed out and may have made us leader (last: %v): %w",
			Namespace, key, last, lockapi.ErrUnknown)
	}
	return lockapi.Lease{}, fmt.Errorf("acquire lease %s/%s: not leader within %v (last: %v): %w", Namespace, key, wait, last, lockapi.ErrNotAcquired)
}

// acquire is LeaderElector.acquire: wait.JitterUntil(tryAcquireOrRenew,
// RetryPeriod, JitterFactor, sliding): a try at once, then one every
// jittered RetryPeriod after the last ended, until a try succeeds (true) or
// the next would start after deadline (false, the last try's error). Each
// try's requests are bounded by request-timeout, not by the deadline (the
// acquire's context has none: Run's).
func (c *Client) acquire(p *sim.Proc, e *elector, deadline time.Duration) (bool, error) {
	for {
		ok, err := c.tryAcquireOrRenew(p, e, max(deadline, p.Mono()+c.o.requestTimeout()))
		// BackoffUntil draws the next jittered wait after every try, the
		// successful one too (its context is cancelled then).
		d := c.jittered(p)
		if ok {
			return true, nil
		}
		if p.Mono()+d > deadline {
			return false, err
		}
		p.Sleep(d)
	}
}

// belief is how long after a successful renewal (or the acquisition) the
// leader still believes it leads at most, poll the time until the current
// renew poll gives up: client-go's Run cancels the context it gave
// OnStartedLeading only after renew returns, and renew returns only after
// ReleaseOnCancel's release, which may take RenewDeadline more (its Get
// and Update share one RenewDeadline timeout). Without ReleaseOnCancel the
// belief ends when the poll gives up.
func (c *Client) belief(poll time.Duration) time.Duration {
	if c.o.ReleaseOnCancel {
		return poll + c.o.RenewDeadline
	}
	return poll
}

// lead starts leading: the lease handed to the workload; the renew loop is
// the caller's to start.
func (c *Client) lead(p *sim.Proc, e *elector) *hold {
	token, has := c.token(e)
	l := lockapi.Lease{Key: e.name, Owner: c.identity, Token: token, HasToken: has,
		// renew's first poll starts at once and gives up after RenewDeadline.
		Deadline: p.Mono() + c.belief(c.o.RenewDeadline),
		Detail: c.lateNote(fmt.Sprintf("Lease %s/%s, resourceVersion %d, leaseTransitions %d, via %s", Namespace, e.name, e.rv,
			e.observed.Transitions, c.nodes[c.server].Name()))}
	h := &hold{lease: l, e: e, count: 1}
	c.held[e.name] = h
	return h
}

// renew is LeaderElector.renew: wait.Until(poll, RetryPeriod) (a poll at
// once, the next RetryPeriod after one ends) until a poll fails; then, with
// ReleaseOnCancel, release. The leadership ends when renew returns (Run's
// deferred cancel of OnStartedLeading's context, then OnStoppedLeading).
func (c *Client) renew(w *sim.Proc, h *hold) {
	for first := true; ; first = false {
		if !first {
			w.Sleep(c.o.RetryPeriod)
		}
		if !c.poll(w, h) {
			break
		}
	}
	if c.o.ReleaseOnCancel {
		h.releasing = true
		c.tryRelease(w, h.e, w.Mono()+c.o.RenewDeadline)
		h.releasing = false
	}
	h.lost = true
}

// poll is wait.PollUntilContextTimeout(ctx, RetryPeriod, RenewDeadline,
// immediate, tryAcquireOrRenew): a try at once, then one at each tick of a
// ticker started with the poll (ticks at start + k·RetryPeriod; a tick that
// came during a try waits in the channel and the try after it starts at
// once, further ones are dropped), until a try succeeds (true) or the
// poll's context ends RenewDeadline after it began (false): no try starts
// at or after it, and it ends the request in flight.
func (c *Client) poll(w *sim.Proc, h *hold) bool {
	start := w.Mono()
	end := start + c.o.RenewDeadline
	next := start + c.o.RetryPeriod // the next tick
	for {
		h.renewing = true
		c.observe(h.lease, false, nil)
		got, err := c.tryAcquireOrRenew(w, h.e, end)
		h.renewing = false
		if got {
			h.lease.Deadline = w.Mono() + c.belief(c.o.RetryPeriod+c.o.RenewDeadline)
			l := h.lease
			l.Detail = c.lateNote(l.Detail)
			c.observe(l, true, nil)
			return true
		}
		c.observe(h.lease, true, fmt.Errorf("renew: %w", err))
		now := w.Mono()
		at := next
		if next <= now {
			// A tick came during the try: the next try is at once.
			at = now
			next = start + (now-start)/c.o.RetryPeriod*c.o.RetryPeriod + c.o.RetryPeriod
		} else {
			next += c.o.RetryPeriod
		}
		if at >= end {
			// No try at or after the deadline (the poll's context is
			// created before its ticker, so a tick at RenewDeadline
			// comes after it): the poll ends with its context.
			w.Sleep(max(0, end-now))
			return false
		}
		w.Sleep(at - now)
	}
}

// tryRelease is LeaderElector.release, within RenewDeadline (until), as the
// client-go release line does it:
//
//   - 0.33 (v0.33 and before): if the last observed record names this
//     elector (IsLeader), update the Lease to no holder, leaseDurationSeconds
//     1 and the observed leaseTransitions, with the LeaseLock's cached
//     object: the resourceVersion last read or written. A Lease changed
//     since answers 409 Conflict: nothing is released.
//   - 0.36 (v0.34.0 to v0.36): get the Lease first (the LeaseLock now caches
//     the fetched object); then, if IsLeader (still the last observation,
//     not the record just fetched), update with the fetched
//     leaseTransitions and resourceVersion: a Lease another client took over
//     meanwhile is cleared. A Conflict (a renewal in flight landed in
//     between) ends the release.
//   - 0.37 (pre-releases): as 0.36, and a Conflict starts over with a get.
func (c *Client) tryRelease(p *sim.Proc, e *elector, until time.Duration) bool {
	release := func(transitions int) error {
		wall := p.Wall()
		rec := Record{Transitions: transitions, DurationSeconds: 1, RenewTime: wall, AcquireTime: wall}
		if err := c.write(p, e, VerbUpdate, rec, until); err != nil {
			return err
		}
		e.setObserved(p, rec)
		return nil
	}
	if c.o.ClientGo == ClientGo033 {
		if !e.isLeader(c.identity) {
			return true
		}
		return release(e.observed.Transitions) == nil
	}
	for {
		cur, _, err := c.get(p, e, until)
		if err != nil {
			return false
		}
		if !e.isLeader(c.identity) {
			return true
		}
		err = release(cur.Transitions)
		if err == nil {
			return true
		}
		if c.o.ClientGo != ClientGo037 || !errors.Is(err, errConflict) {
			return false
		}
	}
}

// Release stops leading: the run's context is cancelled, which ends the
// renew loop (and the renewal in flight); with ReleaseOnCancel the Lease is
// released as client-go does. ErrNotHeld: the renew loop had already given
// up (OnStoppedLeading came first, or comes once the release the renew loop
// started has ended).
func (c *Client) Release(l lockapi.Lease) error {
	h := c.held[l.Key]
	if h == nil || h.lease.Owner != l.Owner {
		return fmt.Errorf("%w: no leadership of %s/%s", lockapi.ErrNotHeld, Namespace, l.Key)
	}
	if h.count--; h.count > 0 {
		return nil
	}
	delete(c.held, l.Key)
	for h.releasing {
		// Cancelling Run's context does not end release, whose context is
		// its own: Run returns when release does.
		c.p.Sleep(c.o.RetryPeriod / 4)
	}
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

// Leading tells whether the client leads the Lease key: it acquired it and
// its renew loop has not returned (the belief of OnStartedLeading's
// context). The leader-election workload works while it is true
// (workloads.Leader).
func (c *Client) Leading(key string) bool {
	h := c.held[key]
	return h != nil && !h.lost
}

// Run is LeaderElector.Run for the Lease key on the client's own process:
// acquire until leading, or until the context ends at until (on the
// client's monotonic clock; false, nil); then onStarted (OnStartedLeading)
// and renew on this process until a renewal poll fails, then, with
// ReleaseOnCancel, release; it returns true when renew has returned
// (OnStoppedLeading). It is the same acquire, renew and release as
// Acquire's, run in client-go's order on one process.
func (c *Client) Run(key string, until time.Duration, onStarted func(lockapi.Lease)) bool {
	p := c.p
	e := c.elector(key)
	if ok, _ := c.acquire(p, e, until); !ok {
		return false
	}
	h := c.lead(p, e)
	if onStarted != nil {
		onStarted(h.lease)
	}
	c.renew(p, h)
	delete(c.held, key)
	return true
}
