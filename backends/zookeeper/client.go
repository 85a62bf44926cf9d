package zookeeper

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/lockapi"
)

// Client-side outcomes of a request, as a Transport reports them.
var (
	// ErrConnLoss is a connection loss (CONNECTIONLOSS): no reply within
	// the read timeout, or the server left the quorum and closed the
	// connection.
	ErrConnLoss = errors.New("connection loss")
	// ErrNoReply is a connection loss without a reply: the request may have
	// taken effect.
	ErrNoReply = fmt.Errorf("%w: no reply within the read timeout", ErrConnLoss)
	// ErrExpired is the server saying the session is gone (SESSIONEXPIRED).
	ErrExpired = errors.New("session expired")
	// ErrClosed is a request of a client whose handle was closed (a live
	// run ended); the simulated handle is never closed.
	ErrClosed = errors.New("zookeeper client closed")
)

// Transport is a ZooKeeper handle as the lock recipe (Client) uses it: one
// session with the ensemble, kept alive, resumed on another server and
// replaced by the handle's own rules, and the requests of the client
// protocol (Request, Response) on it. The simulated handle sends them as
// messages from a *sim.Proc; the live one runs them on go-zookeeper.
//
// Every method but Go and Await is called with the recipe's routine env
// (the client's process or one Go started) and must not block longer than
// a request's read timeout.
type Transport interface {
	// Connect makes sure the handle has a session: it resumes a lost
	// connection's session on the next server, or, once the session is
	// gone (Curator's LOST), gives it up and makes a new one. An error says
	// no server of a working quorum answered (ErrConnLoss) or the session
	// is gone (ErrExpired).
	Connect(env lockapi.Env) error
	// Call sends r on the session to the server the handle is connected to
	// and waits at most the read timeout. The error is ErrNoReply (wrapped)
	// when the request may have taken effect, ErrConnLoss when it certainly
	// did not, ErrExpired with the session's end, ErrClosed; a reply that
	// is not OK (no node, node exists) is a Response with its Code.
	Call(env lockapi.Env, r Request) (Response, error)
	// Ready is true when the handle has a session and no connection attempt
	// is under way: only then does the watchdog check in.
	Ready() bool
	// Session is the handle's current session id (0: none).
	Session() int64
	// LastHeard is when (on the client's monotonic clock) the handle last
	// heard from a server on its current session.
	LastHeard() time.Duration
	// Vouches says whether a check-in answered on the handle's current
	// session extends the belief of a hold its node of session gave.
	Vouches(session int64) bool
	// Mark is the identity of the handle's connection now, taken before
	// the requests that set a round's watches.
	Mark() int
	// Await waits, at most d, for a watch set since mark to fire, or for
	// the connection that carried it to end; false when d passed first.
	Await(env lockapi.Env, mark int, d time.Duration) bool
	// Adopt tells the handle that the lock node at path, owned by session,
	// is the client's: protected mode adopted it after a create that had
	// no reply.
	Adopt(path string, session int64)
	// Go starts a routine of the client in the background (the watchdog, a
	// guaranteed delete), from the routine env: a process of the client's
	// node in the simulator, a goroutine live.
	Go(env lockapi.Env, name string, fn func(lockapi.Env))
}

// hold is a lock the client believes it holds.
type hold struct {
	lease   lockapi.Lease
	path    string
	session int64 // the ephemeral owner of path
	count   int
}

// Client is Curator's InterProcessMutex on a ZooKeeper handle (Transport),
// the recipe of the simulated client and of the live one alike.
//
// The handle keeps one session: a watchdog checks in every ping interval;
// no reply within the read timeout is a disconnection (Curator: SUSPENDED),
// after which the handle resumes the session on the next server and learns
// there whether it expired; Curator calls the session LOST once its own
// clock says the session timeout has passed since SUSPENDED, or on expiry.
// A holder believes it holds until SUSPENDED (on-suspend=stop) or LOST
// (continue): the lease's deadline, moved by each answered check-in
// (recorded as a renewal).
//
// Its fields are read and written under mu, which is never held across a
// request or a sleep (in the simulator one routine runs at a time, and a
// lock held across a blocking call would stop the kernel).
type Client struct {
	env lockapi.Env
	t   Transport
	o   Options
	tm  Timeouts // derived from o once

	mu       sync.Mutex
	watching bool // the watchdog runs
	held     map[string]*hold
	onRenew  func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// NewClient returns the lock recipe of the client whose routine is env, on
// the handle t, with the recipe's options o.
func NewClient(env lockapi.Env, t Transport, o Options) *Client {
	return &Client{env: env, t: t, o: o, tm: o.Timeouts(), held: map[string]*hold{}}
}

// OnRenew registers the observer of the belief's renewals (its calls run
// one at a time: live, each hold's watchdog is a goroutine).
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	c.onRenew = lockapi.SerialRenewals(fn)
}

// LockDir is the parent of a lock's nodes.
func LockDir(key string) string { return "/lock/" + key }

// window is how long after the last reply the holder still believes it holds.
func (c *Client) window() time.Duration {
	if c.o.OnSuspend == SuspendStop {
		return c.tm.Read
	}
	return c.tm.Read + c.o.SessionTimeout
}

// connect makes sure the handle has a session, and starts the watchdog
// with the first one.
func (c *Client) connect(env lockapi.Env) error {
	if err := c.t.Connect(env); err != nil {
		return err
	}
	c.mu.Lock()
	start := !c.watching
	c.watching = true
	c.mu.Unlock()
	if start {
		c.t.Go(env, env.Name()+"/zk-io", c.watchdog)
	}
	return nil
}

// call sends r on the handle's session (connecting first if needed).
func (c *Client) call(env lockapi.Env, r Request) (Response, error) {
	if err := c.connect(env); err != nil {
		return Response{}, err
	}
	return c.t.Call(env, r)
}

// watchdog is the handle's I/O routine: a check-in every ping interval
// keeps the session alive and the holder's belief current.
func (c *Client) watchdog(w lockapi.Env) {
	for {
		w.Sleep(c.tm.Ping)
		if !c.t.Ready() {
			continue
		}
		holds := c.holds()
		for _, l := range holds {
			c.observe(l, false, nil)
		}
		_, err := c.call(w, Request{Op: OpPing})
		if errors.Is(err, ErrClosed) {
			return
		}
		if err != nil {
			// Certain: the belief is the client's own, and without a reply
			// it was not extended.
			err = fmt.Errorf("ping: %w: %w", err, lockapi.ErrNotHeld)
		}
		for _, l := range holds {
			c.mu.Lock()
			h := c.held[l.Key]
			if h == nil {
				c.mu.Unlock()
				continue
			}
			if err == nil && c.t.Vouches(h.session) {
				h.lease.Deadline = c.t.LastHeard() + c.window()
			}
			l := h.lease
			c.mu.Unlock()
			c.observe(l, true, err)
		}
	}
}

func (c *Client) observe(l lockapi.Lease, done bool, err error) {
	if c.onRenew != nil {
		c.onRenew(l, done, err)
	}
}

// holds are the beliefs of the locks held, in the order of their keys.
func (c *Client) holds() []lockapi.Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := sorted.Keys(c.held)
	out := make([]lockapi.Lease, len(keys))
	for i, k := range keys {
		out[i] = c.held[k].lease
	}
	return out
}

// Acquire runs Curator's InterProcessMutex.acquire(wait): reentrant on the
// client; otherwise create /lock/<key>/_c_<guid>-lock- EPHEMERAL_SEQUENTIAL,
// list the children, hold if ours is the lowest, else watch the next-lower
// node (or, with herd, the children) and look again when it fires.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	env := c.env
	c.mu.Lock()
	if h := c.held[key]; h != nil {
		h.count++
		c.mu.Unlock()
		return h.lease, nil
	}
	c.mu.Unlock()
	deadline := env.Mono() + wait
	for c.connect(env) != nil {
		if env.Mono() >= deadline {
			return lockapi.Lease{}, fmt.Errorf("%w: no session: no server of a working quorum answered", lockapi.ErrNotAcquired)
		}
		env.Sleep(min(100*time.Millisecond, deadline-env.Mono()))
	}
	dir := LockDir(key)
	guid := fmt.Sprintf("%016x", env.Rand().Uint64())
	ours, stat, orphan, err := c.createLockNode(dir, guid, deadline)
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
	mark := c.t.Mark()
	for {
		if c.o.Sync {
			if _, err := c.call(env, Request{Op: OpSync, Path: dir}); err != nil {
				return giveUp(fmt.Errorf("sync: %w", err))
			}
		}
		resp, err := c.call(env, Request{Op: OpGetChildren, Path: dir, Watch: c.o.Herd})
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
			r, err := c.call(env, Request{Op: OpExists, Path: dir + "/" + children[i-1], Watch: true})
			if err != nil {
				return giveUp(fmt.Errorf("exists: %w", err))
			}
			if r.Code == CodeNoNode {
				continue
			}
		}
		for {
			left := deadline - env.Mono()
			if left <= 0 {
				return giveUp(lockapi.ErrNotAcquired)
			}
			if c.t.Await(env, mark, left) {
				break // a watch fired, or the watches were lost with a connection: look again
			}
		}
		mark = c.t.Mark()
	}
}

// createLockNode creates our sequential node within Curator's retry loop;
// with protection, a retry first looks for a node carrying our guid. orphan
// reports that an attempt before the one that created the node went
// unanswered and was not adopted: its node may exist too.
func (c *Client) createLockNode(dir, guid string, deadline time.Duration) (_ string, _ Stat, orphan bool, _ error) {
	env := c.env
	prefix := dir + "/_c_" + guid + "-lock-"
	var last error
	uncertain := false
	for attempt := 0; attempt <= c.o.Retries; attempt++ {
		if attempt > 0 {
			env.Sleep(100 * time.Millisecond << (attempt - 1)) // Curator's exponential back-off
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
		create := Request{Op: OpCreate, Path: prefix, Ephemeral: true, Sequential: true}
		r, err := c.call(env, create)
		if err == nil && r.Code == CodeNoNode {
			// Curator's creatingParentContainersIfNeeded: the create comes
			// first and the parents only when it found none, so that a
			// fault timed on the acquire meets the create (the simulated
			// tree makes parents itself: only a real server says this).
			if err := c.makeParents(dir, deadline); err != nil {
				return "", Stat{}, false, fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
			}
			r, err = c.call(env, create)
		}
		if r.Code == CodeOK && err != nil {
			// Created, but its stat is unknown (live: go-zookeeper's create
			// answers no stat, and the exists after it failed): no token.
			_, err := c.giveUp(r.Path, fmt.Errorf("stat of %s: %w", r.Path, err))
			return "", Stat{}, false, orphaned(err, uncertain)
		}
		if err == nil && r.Code == CodeOK {
			return r.Path, r.Stat, uncertain, nil
		}
		if errors.Is(err, ErrClosed) {
			return "", Stat{}, false, fmt.Errorf("create %s: %w (%w)", prefix, err, lockapi.ErrNotAcquired)
		}
		if err == nil {
			err = fmt.Errorf("create: %s", r.Code)
		}
		uncertain = uncertain || errors.Is(err, ErrNoReply)
		last = err
	}
	if !uncertain {
		return "", Stat{}, false, fmt.Errorf("create %s: %w (%w)", prefix, last, lockapi.ErrNotAcquired)
	}
	return "", Stat{}, false, fmt.Errorf("create %s: %w (%w)", prefix, last, lockapi.ErrUnknown)
}

// makeParents creates the lock's parents (persistent), retrying connection
// losses until deadline.
func (c *Client) makeParents(dir string, deadline time.Duration) error {
	env := c.env
	for _, p := range []string{"/lock", dir} {
		for {
			r, err := c.call(env, Request{Op: OpCreate, Path: p})
			if err == nil && (r.Code == CodeOK || r.Code == CodeNodeExists) {
				break
			}
			if err == nil {
				err = fmt.Errorf("create: %s", r.Code)
			}
			if errors.Is(err, ErrClosed) || env.Mono() >= deadline {
				return fmt.Errorf("create %s: %w", p, err)
			}
			env.Sleep(min(100*time.Millisecond, c.tm.Read))
		}
	}
	return nil
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
	r, err := c.call(c.env, Request{Op: OpGetChildren, Path: dir})
	if err != nil {
		return "", Stat{}, false, err
	}
	for _, name := range r.Children {
		if !strings.Contains(name, "_c_"+guid+"-") {
			continue
		}
		e, err := c.call(c.env, Request{Op: OpExists, Path: dir + "/" + name})
		if err != nil {
			return "", Stat{}, false, err
		}
		if e.Code != CodeOK || (c.o.AdoptCheck && e.Stat.EphemeralOwner != c.t.Session()) {
			continue
		}
		c.t.Adopt(dir+"/"+name, e.Stat.EphemeralOwner)
		return dir + "/" + name, e.Stat, true, nil
	}
	return "", Stat{}, false, nil
}

func (c *Client) granted(key, ours string, st Stat) lockapi.Lease {
	token := st.Czxid
	if c.o.Token == TokenSequence {
		token = sequence(ours)
	}
	l := lockapi.Lease{Key: key, Owner: ours, Token: token, HasToken: true, Deadline: c.t.LastHeard() + c.window(),
		Detail: fmt.Sprintf("node %s, czxid %#x, session %#x", ours, st.Czxid, c.t.Session())}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held[key] = &hold{lease: l, path: ours, session: st.EphemeralOwner, count: 1}
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
	if _, err := c.call(c.env, Request{Op: OpDelete, Path: ours}); err != nil && !errors.Is(err, ErrExpired) {
		c.t.Go(c.env, c.env.Name()+"/zk-delete", func(w lockapi.Env) { c.guaranteedDelete(w, ours) })
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
	r, err := c.call(c.env, Request{Op: OpDelete, Path: h.path})
	switch {
	case errors.Is(err, ErrExpired):
		return fmt.Errorf("%w: session expired, %s deleted with it", lockapi.ErrNotHeld, h.path)
	case err == nil && r.Code == CodeNoNode:
		return fmt.Errorf("%w: %s is gone", lockapi.ErrNotHeld, h.path)
	case err == nil:
		return nil
	}
	if c.o.ReleaseRetry {
		// Curator's guaranteed delete: keep trying in the background until
		// the node or its session is gone.
		c.t.Go(c.env, c.env.Name()+"/zk-delete", func(w lockapi.Env) { c.guaranteedDelete(w, h.path) })
	}
	return fmt.Errorf("delete %s: %w (%w)", h.path, err, lockapi.ErrUnknown)
}

// guaranteedDelete keeps deleting path until it or its session is gone (or
// the handle is closed).
func (c *Client) guaranteedDelete(w lockapi.Env, path string) {
	session := c.t.Session()
	for c.t.Session() == session {
		w.Sleep(c.tm.Ping / 4)
		_, err := c.call(w, Request{Op: OpDelete, Path: path})
		if err == nil || errors.Is(err, ErrExpired) || errors.Is(err, ErrClosed) {
			return
		}
	}
}
