package zookeeper

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/lockapi"
)

// Client-side outcomes of a request, as in the simulated client.
var (
	// errConnLoss: no reply within the read timeout, or the connection
	// closed before the reply; the request may have taken effect.
	errConnLoss = errors.New("connection loss")
	// errStopped: the client was closed (the run ended).
	errStopped = errors.New("zookeeper client closed")
)

// hold is a lock the client believes it holds.
type hold struct {
	lease   lockapi.Lease
	path    string
	session int64
	count   int
}

// Client is one client node's go-zookeeper connection (one session, kept
// alive by the library's pings, re-established by the library after an
// expiry) and, on top of its primitives, the simulated client's recipe:
// Curator's InterProcessMutex with the same options (protection with
// adopt-check, herd, on-suspend, token, sync, release-retry, retries). The
// recipe is locklab's, not go-zookeeper's zk.Lock: that one has no wait
// budget (Lock blocks with no timeout or context), hides its node (no path,
// no czxid for a token) and has no protected-mode adopt check.
//
// Requests are bounded by the read timeout (2/3 of the session timeout,
// go-zookeeper's own); one that gets no reply in time may have taken effect.
// The belief: a holder believes it holds until the read timeout after its
// last contact with a server (on-suspend=stop) or a session timeout later
// (continue), as in the simulated client; contact is counted from the send
// of a request that was answered, and a watchdog goroutine of the client's
// own checks in every ping interval (an Exists of /), recorded as a renewal.
//
// Curator's LOST, which go-zookeeper does not have, is the client's: once
// the connection has been lost (SUSPENDED) for the session timeout by the
// client's clock, the next request gives the session up without a word to
// the servers (Curator's injectSessionExpiration) and runs on a new one,
// whether or not the ensemble still keeps the old one (CURATOR-604).
type Client struct {
	o     zookeeper.Options
	env   lockapi.Env
	fork  func() lockapi.Env
	reg   *Registry
	addrs []string
	dial  *netgate.Dialer
	done  chan struct{}
	once  sync.Once

	mu          sync.Mutex
	conn        *zk.Conn
	hosts       *hosts
	givenUp     *atomic.Bool // set when the current connection's session is given up
	epoch       int          // sessions given up so far: the current connection's identity
	suspended   bool
	suspendedAt time.Duration
	lastHeard   time.Duration
	held        map[string]*hold
	onRenew     func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// errGivenUp refuses the dials of a connection whose session the client gave
// up, so that it cannot come back (and close the session on a server).
var errGivenUp = errors.New("zookeeper: the session of this connection was given up (LOST)")

// NewClient connects env's node to the ensemble through d (a session of the
// session-timeout option) and starts its watchdog. The client knows every
// server: it connects to the first-th (zk1 is 0) and, when a connection is
// lost, resumes its session on the next one, as the simulated client does.
func (e *Ensemble) NewClient(env lockapi.Env, fork func() lockapi.Env, d *netgate.Dialer, reg *Registry, first int) (*Client, error) {
	if first < 0 || first >= len(e.servers) {
		return nil, fmt.Errorf("zookeeper client %s: no server %d of %d", env.Name(), first+1, len(e.servers))
	}
	c := &Client{o: e.opts, env: env, fork: fork, reg: reg, addrs: e.Addrs(), dial: d, done: make(chan struct{}), held: map[string]*hold{}}
	if err := c.connect(first); err != nil {
		return nil, err
	}
	w := fork()
	go c.watchdog(w)
	return c, nil
}

// connect opens a new connection (and session), trying the servers from
// the first-th on. Called with c.mu held, or before the client is shared.
func (c *Client) connect(first int) error {
	var givenUp atomic.Bool
	// A connection attempt is bounded as the Java client's (and the
	// simulated client's) is, by session-timeout/servers, not by
	// go-zookeeper's one second: over a cut, a round of the servers takes
	// about a session timeout, and a request made meanwhile waits as long.
	connectTimeout := c.o.SessionTimeout / time.Duration(max(c.o.Servers, 1))
	dial := func(network, addr string, _ time.Duration) (net.Conn, error) {
		if givenUp.Load() {
			return nil, errGivenUp
		}
		return c.dial.Dial(network, addr, connectTimeout)
	}
	h := newHosts(c.addrs, first)
	conn, events, err := zk.Connect(c.addrs, c.o.SessionTimeout, zk.WithDialer(dial), zk.WithHostProvider(h),
		zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("zookeeper client %s: %w", c.env.Name(), err)
	}
	if c.conn != nil {
		c.epoch++
	}
	c.conn, c.hosts, c.suspended = conn, h, false
	epoch := c.epoch
	w := c.fork()
	go func() {
		// The library drops events when nobody reads them. A lost
		// connection is SUSPENDED from the first moment the client sees
		// it, until a connection with the session or the session's end.
		for ev := range events {
			if ev.Type != zk.EventSession {
				continue
			}
			now := w.Mono()
			c.mu.Lock()
			if c.epoch == epoch {
				switch ev.State {
				case zk.StateDisconnected:
					if !c.suspended {
						c.suspended, c.suspendedAt = true, now
						go c.loseAfter(c.fork(), epoch, now)
					}
				case zk.StateHasSession, zk.StateExpired:
					c.suspended = false
				}
			}
			c.mu.Unlock()
		}
	}()
	c.givenUp = &givenUp
	return nil
}

// loseAfter is Curator's ConnectionStateManager: it calls the session LOST
// the session timeout after SUSPENDED began (at since), unless a connection
// with the session came back meanwhile.
func (c *Client) loseAfter(w lockapi.Env, epoch int, since time.Duration) {
	w.Sleep(since + c.o.SessionTimeout - w.Mono())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch == epoch && c.suspended && c.suspendedAt == since {
		_ = c.lose(w.Mono())
	}
}

// checkLost applies Curator's LOST rule before a request too: suspended for
// the session timeout, the client gives its session up and connects anew.
func (c *Client) checkLost() error {
	now := c.env.Mono()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lose(now)
}

// lose gives the session up if it has been suspended for the session
// timeout at now, and connects anew from the server after the one tried
// last, as the simulated client does. Called with c.mu held.
func (c *Client) lose(now time.Duration) error {
	if !c.suspended || now-c.suspendedAt < c.o.SessionTimeout {
		return nil
	}
	select {
	case <-c.done:
		return errStopped
	default:
	}
	old := c.conn
	c.givenUp.Store(true)
	go old.Close() // in its connect loop: nothing reaches a server
	next := slices.Index(c.addrs, c.hosts.after())
	if err := c.connect(next); err != nil {
		return fmt.Errorf("%w: a new session after LOST: %w", errConnLoss, err)
	}
	return nil
}

// zk is the client's current connection.
func (c *Client) zk() *zk.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// Close ends the session (its ephemeral nodes go at once) and the watchdog.
func (c *Client) Close() {
	c.once.Do(func() {
		c.mu.Lock()
		close(c.done)
		c.mu.Unlock()
		c.zk().Close()
	})
}

// Server names the address the client is connected to.
func (c *Client) Server() string { return c.zk().Server() }

// Session is the client's current session id (0: none yet).
func (c *Client) Session() int64 { return c.zk().SessionID() }

// OnRenew registers the observer of the belief's renewals.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	var mu sync.Mutex
	c.onRenew = func(l lockapi.Lease, done bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		fn(l, done, err)
	}
}

func (c *Client) readTimeout() time.Duration { return c.o.SessionTimeout * 2 / 3 }

func (c *Client) ping() time.Duration {
	if c.o.PingInterval > 0 {
		return c.o.PingInterval
	}
	return c.o.SessionTimeout / 3
}

// window is how long after the last contact the holder believes it holds.
func (c *Client) window() time.Duration {
	if c.o.OnSuspend == zookeeper.SuspendStop {
		return c.readTimeout()
	}
	return c.readTimeout() + c.o.SessionTimeout
}

// call runs one request within the read timeout. An answer from the server
// (success or a definite error such as no node) counts as contact.
func call[T any](c *Client, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	var zero T
	if err := c.checkLost(); err != nil {
		return zero, err
	}
	sent := c.env.Mono()
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	timer := time.NewTimer(c.readTimeout())
	defer timer.Stop()
	select {
	case r := <-ch:
		switch {
		case errors.Is(r.err, zk.ErrClosing):
			select {
			case <-c.done:
				return zero, errStopped
			default: // the connection of a session given up (LOST)
				return zero, fmt.Errorf("%w: %w", errConnLoss, r.err)
			}
		case errors.Is(r.err, zk.ErrConnectionClosed), errors.Is(r.err, zk.ErrNoServer):
			return zero, fmt.Errorf("%w: %w", errConnLoss, r.err)
		case errors.Is(r.err, zk.ErrSessionExpired):
			return zero, r.err
		}
		c.mu.Lock()
		c.lastHeard = max(c.lastHeard, sent)
		c.mu.Unlock()
		return r.v, r.err
	case <-timer.C:
		return zero, fmt.Errorf("%w: no reply within the read timeout %v", errConnLoss, c.readTimeout())
	case <-c.done:
		return zero, errStopped
	}
}

// watchdog checks in with the server every ping interval and moves the
// belief of every hold of the current session.
func (c *Client) watchdog(w lockapi.Env) {
	for {
		w.Sleep(c.ping())
		select {
		case <-c.done:
			return
		default:
		}
		holds := c.holds()
		for _, h := range holds {
			c.observe(h.lease, false, nil)
		}
		_, err := call(c, func() (bool, error) { ok, _, err := c.zk().Exists("/"); return ok, err })
		if err != nil {
			// Certain: the belief is the client's own, and without a reply
			// it was not extended.
			err = fmt.Errorf("ping: %w: %w", err, lockapi.ErrNotHeld)
		}
		session := c.zk().SessionID()
		for _, h := range holds {
			c.mu.Lock()
			if err == nil && h.session == session && c.held[h.lease.Key] == h {
				h.lease.Deadline = c.lastHeard + c.window()
			}
			l := h.lease
			c.mu.Unlock()
			c.observe(l, true, err)
		}
	}
}

func (c *Client) holds() []*hold {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.held))
	for k := range c.held {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*hold, len(keys))
	for i, k := range keys {
		out[i] = c.held[k]
	}
	return out
}

func (c *Client) observe(l lockapi.Lease, done bool, err error) {
	if c.onRenew != nil {
		c.onRenew(l, done, err)
	}
}

// LockDir is the parent of a lock's nodes.
func LockDir(key string) string { return "/lock/" + key }

// Acquire runs Curator's InterProcessMutex.acquire(wait) on go-zookeeper:
// reentrant on the client; otherwise create /lock/<key>/_c_<guid>-lock-
// EPHEMERAL_SEQUENTIAL, list the children, hold if ours is the lowest, else
// watch the next-lower node (or, with herd, the children) and look again.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	c.mu.Lock()
	if h := c.held[key]; h != nil {
		h.count++
		c.mu.Unlock()
		return h.lease, nil
	}
	c.mu.Unlock()
	deadline := c.env.Mono() + wait
	dir := LockDir(key)
	guid := fmt.Sprintf("%016x", c.env.Rand().Uint64())
	ours, stat, err := c.createLockNode(dir, guid, deadline)
	if err != nil {
		return lockapi.Lease{}, fmt.Errorf("zookeeper: acquire %s: %w", key, err)
	}
	for {
		if c.o.Sync {
			if _, err := call(c, func() (string, error) { return c.zk().Sync(dir) }); err != nil {
				return c.giveUp(ours, fmt.Errorf("sync: %w", err))
			}
		}
		var children []string
		var fired <-chan zk.Event
		if c.o.Herd {
			type lw struct {
				ch []string
				ev <-chan zk.Event
			}
			r, err := call(c, func() (lw, error) { ch, _, ev, err := c.zk().ChildrenW(dir); return lw{ch, ev}, err })
			if err != nil {
				return c.giveUp(ours, fmt.Errorf("getChildren: %w", err))
			}
			children, fired = r.ch, r.ev
		} else {
			ch, err := call(c, func() ([]string, error) { ch, _, err := c.zk().Children(dir); return ch, err })
			if err != nil {
				return c.giveUp(ours, fmt.Errorf("getChildren: %w", err))
			}
			children = ch
		}
		sortBySequence(children)
		i := slices.Index(children, path.Base(ours))
		if i < 0 {
			return lockapi.Lease{}, fmt.Errorf("zookeeper: acquire %s: our node %s is gone (session expired): %w", key, ours, lockapi.ErrNotAcquired)
		}
		if i == 0 {
			return c.granted(key, ours, stat), nil
		}
		if !c.o.Herd {
			type ew struct {
				ok bool
				ev <-chan zk.Event
			}
			prev := dir + "/" + children[i-1]
			r, err := call(c, func() (ew, error) { ok, _, ev, err := c.zk().ExistsW(prev); return ew{ok, ev}, err })
			if err != nil {
				return c.giveUp(ours, fmt.Errorf("exists: %w", err))
			}
			if !r.ok {
				continue
			}
			fired = r.ev
		}
		left := deadline - c.env.Mono()
		if left <= 0 {
			return c.giveUp(ours, lockapi.ErrNotAcquired)
		}
		timer := time.NewTimer(left)
		select {
		case <-fired: // the watch fired, or the connection that carried it closed: look again
		case <-timer.C:
		case <-c.done:
		}
		timer.Stop()
	}
}

// ensureDir creates the lock's parents (persistent), retrying connection
// losses until deadline; a create of our node that found no parent asks
// for it.
func (c *Client) ensureDir(dir string, deadline time.Duration) error {
	for _, p := range []string{"/lock", dir} {
		for {
			_, err := call(c, func() (string, error) { return c.zk().Create(p, nil, 0, zk.WorldACL(zk.PermAll)) })
			if err == nil || errors.Is(err, zk.ErrNodeExists) {
				break
			}
			if errors.Is(err, errStopped) || c.env.Mono() >= deadline {
				return fmt.Errorf("create %s: %w", p, err)
			}
			c.env.Sleep(min(100*time.Millisecond, c.readTimeout()))
		}
	}
	return nil
}

// createLockNode creates our sequential node within Curator's retry loop;
// with protection, a retry first looks for a node carrying our guid. As
// Curator's creatingParentContainersIfNeeded, the create comes first and the
// parents are made only when it fails for want of them (NONODE): the first
// request of an acquire is the create, as in the simulated recipe, so a
// fault timed on the acquire meets the create and not a create of a parent.
func (c *Client) createLockNode(dir, guid string, deadline time.Duration) (string, *zk.Stat, error) {
	prefix := dir + "/_c_" + guid + "-lock-"
	var last error
	uncertain := false
	for attempt := 0; attempt <= c.o.Retries; attempt++ {
		if attempt > 0 {
			c.env.Sleep(100 * time.Millisecond << (attempt - 1)) // Curator's exponential back-off
		}
		if attempt > 0 && c.o.Protection {
			found, st, ok, err := c.findProtected(dir, guid)
			if ok {
				return found, st, nil
			}
			if err != nil {
				last, uncertain = err, true
				continue
			}
		}
		session := c.zk().SessionID()
		create := func() (string, error) {
			return c.zk().Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		}
		p, err := call(c, create)
		if errors.Is(err, zk.ErrNoNode) {
			if err := c.ensureDir(dir, deadline); err != nil {
				return "", nil, fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
			}
			session = c.zk().SessionID()
			p, err = call(c, create)
		}
		if err == nil {
			c.reg.created(p, c.env.Name(), session)
			st, err := call(c, func() (*zk.Stat, error) { _, st, err := c.zk().Exists(p); return st, err })
			if err == nil && st != nil && st.Czxid != 0 {
				return p, st, nil
			}
			// Created, but its stat is unknown: the token cannot be given.
			c.giveUp(p, fmt.Errorf("stat of %s: %w", p, err))
			return "", nil, fmt.Errorf("create %s: stat: %w (%w)", p, err, lockapi.ErrNotAcquired)
		}
		if errors.Is(err, errStopped) {
			return "", nil, fmt.Errorf("create %s: %w (%w)", prefix, err, lockapi.ErrNotAcquired)
		}
		uncertain = uncertain || errors.Is(err, errConnLoss)
		last = err
	}
	if !uncertain {
		return "", nil, fmt.Errorf("create %s: %w (%w)", prefix, last, lockapi.ErrNotAcquired)
	}
	return "", nil, fmt.Errorf("create %s: %w (%w)", prefix, last, lockapi.ErrUnknown)
}

// findProtected lists the lock's children for one carrying our guid. With
// adopt-check a node another (expired) session of ours created is not ours.
func (c *Client) findProtected(dir, guid string) (string, *zk.Stat, bool, error) {
	children, err := call(c, func() ([]string, error) { ch, _, err := c.zk().Children(dir); return ch, err })
	if err != nil {
		return "", nil, false, err
	}
	for _, name := range children {
		if !strings.Contains(name, "_c_"+guid+"-") {
			continue
		}
		p := dir + "/" + name
		type es struct {
			ok bool
			st *zk.Stat
		}
		r, err := call(c, func() (es, error) { ok, st, err := c.zk().Exists(p); return es{ok, st}, err })
		if err != nil {
			return "", nil, false, err
		}
		if !r.ok || (c.o.AdoptCheck && r.st.EphemeralOwner != c.zk().SessionID()) {
			continue
		}
		c.reg.created(p, c.env.Name(), r.st.EphemeralOwner)
		return p, r.st, true, nil
	}
	return "", nil, false, nil
}

func (c *Client) granted(key, ours string, st *zk.Stat) lockapi.Lease {
	token := uint64(st.Czxid)
	if c.o.Token == zookeeper.TokenSequence {
		token = uint64(sequence(ours))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := lockapi.Lease{Key: key, Owner: ours, Token: token, HasToken: true, Deadline: c.lastHeard + c.window(),
		Detail: fmt.Sprintf("node %s, czxid %#x, session %#x", ours, st.Czxid, st.EphemeralOwner)}
	c.held[key] = &hold{lease: l, path: ours, session: st.EphemeralOwner, count: 1}
	return l
}

// giveUp deletes our node after a failed wait (Curator's deleteOurPath, a
// guaranteed delete: retried in the background until it is done).
func (c *Client) giveUp(ours string, cause error) (lockapi.Lease, error) {
	c.reg.released(ours)
	if _, err := call(c, func() (struct{}, error) { return struct{}{}, c.zk().Delete(ours, -1) }); err != nil &&
		!errors.Is(err, zk.ErrSessionExpired) && !errors.Is(err, zk.ErrNoNode) {
		go c.guaranteedDelete(c.fork(), ours)
	}
	if errors.Is(cause, lockapi.ErrNotAcquired) {
		return lockapi.Lease{}, cause
	}
	return lockapi.Lease{}, fmt.Errorf("%w: %w", lockapi.ErrNotAcquired, cause)
}

// Release counts down a reentrant hold, then deletes our node. A connection
// loss during the delete leaves the outcome unknown; with release-retry
// (Curator's guaranteed delete) the client keeps deleting in the background,
// without it the node stays while the session lives (CURATOR-678).
func (c *Client) Release(l lockapi.Lease) error {
	c.mu.Lock()
	h := c.held[l.Key]
	if h == nil || h.lease.Owner != l.Owner {
		c.mu.Unlock()
		return fmt.Errorf("%w: no hold of %s", lockapi.ErrNotHeld, l.Owner)
	}
	if h.count--; h.count > 0 {
		c.mu.Unlock()
		return nil
	}
	delete(c.held, l.Key)
	c.mu.Unlock()
	c.reg.released(h.path)
	_, err := call(c, func() (struct{}, error) { return struct{}{}, c.zk().Delete(h.path, -1) })
	switch {
	case errors.Is(err, zk.ErrSessionExpired):
		return fmt.Errorf("%w: session expired, %s deleted with it", lockapi.ErrNotHeld, h.path)
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%w: %s is gone", lockapi.ErrNotHeld, h.path)
	case err == nil:
		return nil
	}
	if c.o.ReleaseRetry {
		go c.guaranteedDelete(c.fork(), h.path)
	}
	return fmt.Errorf("delete %s: %w (%w)", h.path, err, lockapi.ErrUnknown)
}

// guaranteedDelete keeps deleting path until it or its session is gone. Its
// Env ends it when the run stops.
func (c *Client) guaranteedDelete(w lockapi.Env, p string) {
	session := c.zk().SessionID()
	for c.zk().SessionID() == session {
		w.Sleep(c.ping() / 4)
		_, err := call(c, func() (struct{}, error) { return struct{}{}, c.zk().Delete(p, -1) })
		if err == nil || errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrNoNode) || errors.Is(err, errStopped) {
			return
		}
	}
}

// sequence is a sequential node's number (its last 10 digits).
func sequence(name string) int64 {
	if len(name) < 10 {
		return -1
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// sortBySequence orders lock nodes by their sequence numbers (the guid
// prefix differs from node to node, so names do not sort).
func sortBySequence(names []string) {
	slices.SortFunc(names, func(a, b string) int { return int(sequence(a) - sequence(b)) })
}
