package zookeeper

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Client-side outcomes of a request.
var (
	// errConnLoss: no reply within the read timeout, or the server left the
	// quorum (CONNECTIONLOSS); the request may have taken effect.
	errConnLoss = errors.New("connection loss")
	// errNoReply: a connection loss without a reply: the request may have
	// taken effect.
	errNoReply = fmt.Errorf("%w: no reply within the read timeout", errConnLoss)
	// errExpired: the server says the session is gone (SESSIONEXPIRED).
	errExpired = errors.New("session expired")
)

// hold is a lock the client believes it holds.
type hold struct {
	lease lockapi.Lease
	path  string
	count int
}

// Client is one client process's ZooKeeper handle and, on top of it,
// Curator's InterProcessMutex. The handle keeps one session: an I/O process
// pings every ping interval; no reply within the read timeout is a
// disconnection (Curator: SUSPENDED), after which the handle reconnects to
// the next server with the same session and learns there whether it expired;
// Curator calls the session LOST once its own clock says the session timeout
// has passed since SUSPENDED, or on expiry. A holder believes it holds until
// SUSPENDED (on-suspend=stop) or LOST (continue): the lease's deadline, moved
// by each successful ping (recorded as a renewal).
type Client struct {
	p       *sim.Proc
	ens     *Ensemble
	o       Options
	tm      Timeouts // derived from o once
	servers []sim.NodeID

	session     int64 // 0: none
	sessions    []int64
	nextSession int64
	conn        int // index of the server connected to
	connected   bool
	suspended   bool
	suspendedAt time.Duration
	lastHeard   time.Duration
	epoch       int // successful (re)connections: the connection's identity
	busy        bool
	xid         uint64
	io          *sim.Proc
	held        map[string]*hold
	onRenew     func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

func newClient(p *sim.Proc, e *Ensemble) *Client {
	ids := make([]sim.NodeID, len(e.nodes))
	for i, n := range e.nodes {
		ids[i] = n.ID()
	}
	return &Client{p: p, ens: e, o: e.opts, tm: e.opts.Timeouts(), servers: ids, conn: p.Rand().IntN(len(ids)),
		nextSession: int64(p.Node().ID()+1) << 32, held: map[string]*hold{}}
}

// OnRenew registers the observer of the belief's renewals.
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { c.onRenew = fn }

func (c *Client) ownsSession(id int64) bool { return slices.Contains(c.sessions, id) }

// window is how long after the last reply the holder still believes it holds.
func (c *Client) window() time.Duration {
	if c.o.OnSuspend == SuspendStop {
		return c.tm.Read
	}
	return c.tm.Read + c.o.SessionTimeout
}

// call sends r to the connected server (connecting first if needed).
func (c *Client) call(p *sim.Proc, r Request) (Response, error) {
	if err := c.ensureSession(p); err != nil {
		return Response{}, err
	}
	c.xid++
	r.Session, r.Xid = c.session, c.xid
	conn := c.epoch
	reply, err := p.Call(c.servers[c.conn], r, c.tm.Read)
	if err != nil {
		if conn == c.epoch {
			c.disconnect(p)
		}
		return Response{}, errNoReply
	}
	if conn != c.epoch || !c.connected {
		// The reply came on a connection the handle has abandoned since (its
		// other process's request went unanswered for the read timeout, or
		// the server left the quorum): the handle closed that socket and
		// failed every request pending on it with a connection loss, so
		// what arrives on it now answers nothing; the request may have been
		// applied all the same.
		return Response{}, errNoReply
	}
	resp := reply.(Response)
	switch resp.Code {
	case CodeNotReady:
		c.disconnect(p)
		return resp, errConnLoss
	case CodeExpired:
		if r.Session == c.session {
			c.expire()
		}
		return resp, errExpired
	}
	c.lastHeard = p.Mono()
	return resp, nil
}

func (c *Client) disconnect(p *sim.Proc) {
	if !c.connected {
		return
	}
	c.connected = false
	c.conn = (c.conn + 1) % len(c.servers)
	if !c.suspended {
		c.suspended, c.suspendedAt = true, p.Mono()
	}
}

// expire drops the session: the server said it is gone.
func (c *Client) expire() {
	c.session, c.connected, c.suspended = 0, false, false
}

// checkLost applies Curator's LOST rule: suspended for the session timeout.
func (c *Client) checkLost(p *sim.Proc) {
	if c.suspended && p.Mono()-c.suspendedAt >= c.o.SessionTimeout {
		c.expire()
	}
}

// ensureSession connects: resumes the session on the next server, or makes
// a new session once the old one is gone.
func (c *Client) ensureSession(p *sim.Proc) error {
	for c.busy {
		p.Sleep(10 * time.Millisecond)
	}
	c.checkLost(p)
	if c.session != 0 && c.connected {
		return nil
	}
	c.busy = true
	defer func() { c.busy = false }()
	fresh := c.session == 0
	if fresh {
		c.nextSession++
		c.session = c.nextSession
		c.sessions = append(c.sessions, c.session)
	}
	for range c.servers {
		until := p.Node().TrueTimeAtMono(p.Mono() + c.tm.Connect)
		reply, err := p.Call(c.servers[c.conn], Request{Op: OpConnect, Session: c.session, New: fresh,
			Timeout: int64(c.o.SessionTimeout), Until: until}, c.tm.Connect)
		if err == nil {
			switch reply.(Response).Code {
			case CodeOK:
				c.connected, c.suspended, c.lastHeard = true, false, p.Mono()
				c.epoch++
				if c.io == nil {
					c.io = p.Spawn(p.Name()+"/zk-io", c.pinger)
				}
				return nil
			case CodeExpired:
				c.expire()
				return errExpired
			}
		}
		c.conn = (c.conn + 1) % len(c.servers)
	}
	c.checkLost(p)
	return errConnLoss
}

// pinger is the handle's I/O process: a ping every ping interval keeps the
// session alive and the holder's belief current.
func (c *Client) pinger(w *sim.Proc) {
	for {
		w.Sleep(c.tm.Ping)
		if c.session == 0 || c.busy {
			continue
		}
		keys := c.heldKeys()
		for _, k := range keys {
			c.observe(c.held[k].lease, false, nil)
		}
		_, err := c.call(w, Request{Op: OpPing})
		if err != nil {
			// Certain: the belief is the client's own, and without a reply
			// it was not extended.
			err = fmt.Errorf("ping: %w: %w", err, lockapi.ErrNotHeld)
		}
		for _, k := range keys {
			h := c.held[k]
			if h == nil {
				continue
			}
			if err == nil {
				h.lease.Deadline = c.lastHeard + c.window()
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
	keys := make([]string, 0, len(c.held))
	for k := range c.held { // determinism:ok sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Acquire runs Curator's InterProcessMutex.acquire(wait): reentrant on the
// client; otherwise create /lock/<key>/_c_<guid>-lock- EPHEMERAL_SEQUENTIAL,
// list the children, hold if ours is the lowest, else watch the next-lower
// node (or, with herd, the children) and look again when it fires.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	p := c.p
	if h := c.held[key]; h != nil {
		h.count++
		return h.lease, nil
	}
	deadline := p.Mono() + wait
	for c.ensureSession(p) != nil {
		if p.Mono() >= deadline {
			return lockapi.Lease{}, fmt.Errorf("%w: no session: no server of a working quorum answered", lockapi.ErrNotAcquired)
		}
		p.Sleep(min(100*time.Millisecond, deadline-p.Mono()))
	}
	dir := "/lock/" + key
	guid := fmt.Sprintf("%016x", p.Rand().Uint64())
	ours, stat, orphan, err := c.createLockNode(dir, guid)
	if err != nil {
		return lockapi.Lease{}, err
	}
	// giveUp, and the outcome of an acquire that fails after an earlier
	// create of it went unanswered: that node may exist, be the lowest and
	// hold the lock for our session (an orphan), so the failure is unknown.
	giveUp := func(cause error) (lockapi.Lease, error) {
		l, err := c.giveUp(ours, cause)
		return l, orphaned(err, orphan)
	}
	epoch := c.epoch
	for {
		if c.o.Sync {
			if _, err := c.call(p, Request{Op: OpSync, Path: dir}); err != nil {
				return giveUp(fmt.Errorf("sync: %w", err))
			}
		}
		resp, err := c.call(p, Request{Op: OpGetChildren, Path: dir, Watch: c.o.Herd})
		if err != nil {
			return giveUp(fmt.Errorf("getChildren: %w", err))
		}
		children := slices.Clone(resp.Children)
		sortBySequence(children)
		i := slices.Index(children, path.Base(ours))
		if i < 0 {
			return lockapi.Lease{}, orphaned(fmt.Errorf("%w: our node %s is gone (session expired)", lockapi.ErrNotAcquired, ours), orphan)
		}
		if i == 0 {
			return c.granted(key, ours, stat), nil
		}
		if !c.o.Herd {
			r, err := c.call(p, Request{Op: OpExists, Path: dir + "/" + children[i-1], Watch: true})
			if err != nil {
				return giveUp(fmt.Errorf("exists: %w", err))
			}
			if r.Code == CodeNoNode {
				continue
			}
		}
		for {
			left := deadline - p.Mono()
			if left <= 0 {
				return giveUp(lockapi.ErrNotAcquired)
			}
			if _, ok := p.Recv(min(left, c.tm.Ping)); ok || c.epoch != epoch || c.session == 0 {
				break // a watch fired, or the watches were lost with a connection: look again
			}
		}
		epoch = c.epoch
	}
}

// createLockNode creates our sequential node within Curator's retry loop;
// with protection, a retry first looks for a node carrying our guid. orphan
// reports that an attempt before the one that created the node went
// unanswered and was not adopted: its node may exist too.
func (c *Client) createLockNode(dir, guid string) (_ string, _ Stat, orphan bool, _ error) {
	p := c.p
	prefix := dir + "/_c_" + guid + "-lock-"
	var last error
	uncertain := false
	for attempt := 0; attempt <= c.o.Retries; attempt++ {
		if attempt > 0 {
			p.Sleep(100 * time.Millisecond << (attempt - 1)) // Curator's exponential back-off
		}
		if attempt > 0 && c.o.Protection {
			found, st, ok, err := c.findProtected(dir, guid)
			if ok {
				return found, st, false, nil
			}
			if err != nil {
				// Curator's retry loop runs the search again before any
				// new create: a create now could leave a second node.
				last = err
				uncertain = true
				continue
			}
		}
		r, err := c.call(p, Request{Op: OpCreate, Path: prefix, Ephemeral: true, Sequential: true})
		if err == nil && r.Code == CodeOK {
			return r.Path, r.Stat, uncertain, nil
		}
		if err == nil {
			err = fmt.Errorf("create: %s", r.Code)
		}
		uncertain = uncertain || errors.Is(err, errNoReply)
		last = err
	}
	if !uncertain {
		return "", Stat{}, false, fmt.Errorf("create %s: %w (%w)", prefix, last, lockapi.ErrNotAcquired)
	}
	return "", Stat{}, false, fmt.Errorf("create %s: %w (%w)", prefix, last, lockapi.ErrUnknown)
}

// orphaned is the outcome of an acquire that failed with err after creating
// its node: unknown when an earlier create of it may have left a node that
// holds the lock for our session (orphan), err otherwise.
func orphaned(err error, orphan bool) error {
	if !orphan || err == nil {
		return err
	}
	return fmt.Errorf("%w; an earlier create had no reply: its node may exist and hold the lock (%w)", err, lockapi.ErrUnknown)
}

// findProtected lists the lock's children for one carrying our guid. With
// adopt-check a node another (expired) session of ours created is not ours
// any more: its deletion may just not have reached this server (CURATOR-604).
func (c *Client) findProtected(dir, guid string) (string, Stat, bool, error) {
	r, err := c.call(c.p, Request{Op: OpGetChildren, Path: dir})
	if err != nil {
		return "", Stat{}, false, err
	}
	for _, name := range r.Children {
		if !strings.Contains(name, "_c_"+guid+"-") {
			continue
		}
		e, err := c.call(c.p, Request{Op: OpExists, Path: dir + "/" + name})
		if err != nil {
			return "", Stat{}, false, err
		}
		if e.Code != CodeOK || (c.o.AdoptCheck && e.Stat.EphemeralOwner != c.session) {
			continue
		}
		return dir + "/" + name, e.Stat, true, nil
	}
	return "", Stat{}, false, nil
}

func (c *Client) granted(key, ours string, st Stat) lockapi.Lease {
	token := st.Czxid
	if c.o.Token == TokenSequence {
		token = sequence(ours)
	}
	l := lockapi.Lease{Key: key, Owner: ours, Token: token, HasToken: true,
		Deadline: c.lastHeard + c.window(), Detail: fmt.Sprintf("node %s, czxid %#x, session %#x", ours, st.Czxid, c.session)}
	c.held[key] = &hold{lease: l, path: ours, count: 1}
	return l
}

// giveUp deletes our node after a failed wait (Curator's deleteOurPath, a
// guaranteed delete: retried in the background until it is done).
//
// While the delete is not done our node may be the lowest and hold the lock
// for our session: the outcome is unknown until then, as a release's.
func (c *Client) giveUp(ours string, cause error) (lockapi.Lease, error) {
	if !errors.Is(cause, lockapi.ErrNotAcquired) {
		cause = fmt.Errorf("%w: %w", lockapi.ErrNotAcquired, cause)
	}
	if _, err := c.call(c.p, Request{Op: OpDelete, Path: ours}); err != nil && !errors.Is(err, errExpired) {
		c.p.Spawn(c.p.Name()+"/zk-delete", func(w *sim.Proc) { c.guaranteedDelete(w, ours) })
		return lockapi.Lease{}, fmt.Errorf("%w; deleting %s: %w: it may hold the lock until the delete is done (%w)", cause, ours, err, lockapi.ErrUnknown)
	}
	return lockapi.Lease{}, cause
}

// Release gives the lock back: counts down a reentrant hold, then deletes
// our node. A connection loss during the delete leaves the outcome unknown;
// with release-retry (Curator's guaranteed delete) the client keeps deleting
// in the background, without it the node stays while the client forgets it
// (CURATOR-678): the lock is blocked while the session lives.
func (c *Client) Release(l lockapi.Lease) error {
	h := c.held[l.Key]
	if h == nil || h.lease.Owner != l.Owner {
		return fmt.Errorf("%w: no hold of %s", lockapi.ErrNotHeld, l.Owner)
	}
	if h.count--; h.count > 0 {
		return nil
	}
	delete(c.held, l.Key)
	r, err := c.call(c.p, Request{Op: OpDelete, Path: h.path})
	switch {
	case errors.Is(err, errExpired):
		return fmt.Errorf("%w: session expired, %s deleted with it", lockapi.ErrNotHeld, h.path)
	case err == nil && r.Code == CodeNoNode:
		return fmt.Errorf("%w: %s is gone", lockapi.ErrNotHeld, h.path)
	case err == nil:
		return nil
	}
	if c.o.ReleaseRetry {
		// Curator's guaranteed delete: keep trying in the background until
		// the node or its session is gone.
		c.p.Spawn(c.p.Name()+"/zk-delete", func(w *sim.Proc) { c.guaranteedDelete(w, h.path) })
	}
	return fmt.Errorf("delete %s: %w (%w)", h.path, err, lockapi.ErrUnknown)
}

func (c *Client) guaranteedDelete(w *sim.Proc, path string) {
	session := c.session
	for c.session == session {
		w.Sleep(c.tm.Ping / 4)
		_, err := c.call(w, Request{Op: OpDelete, Path: path})
		if err == nil || errors.Is(err, errExpired) {
			return
		}
	}
}
