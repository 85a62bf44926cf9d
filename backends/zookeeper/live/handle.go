package live

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/lockapi"
)

// Client is one client node's lock: the simulated system's recipe
// (zookeeper.Client: Curator's InterProcessMutex with the same options) on
// a go-zookeeper handle. The recipe is locklab's, not go-zookeeper's
// zk.Lock: that one has no wait budget (Lock blocks with no timeout or
// context), hides its node (no path, no czxid for a token) and has no
// protected-mode adopt check.
type Client struct {
	*zookeeper.Client
	h *handle
}

// handle is the live Transport: one go-zookeeper connection (one session,
// kept alive by the library's pings, re-established by the library after
// an expiry), the client protocol's requests run on its primitives.
//
// Requests are bounded by the read timeout (2/3 of the session timeout,
// go-zookeeper's own); one that gets no reply in time may have taken effect.
// Contact is counted from the send of a request that was answered. The
// recipe's watchdog checks in with an Exists of / (go-zookeeper's own pings
// are not exposed).
//
// Curator's LOST, which go-zookeeper does not have, is the handle's: once
// the connection has been lost (SUSPENDED) for the session timeout by the
// client's clock, the next request gives the session up without a word to
// the servers (Curator's injectSessionExpiration) and runs on a new one,
// whether or not the ensemble still keeps the old one (CURATOR-604).
type handle struct {
	o     zookeeper.Options
	tm    zookeeper.Timeouts
	name  string
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
	watches     int             // watches set so far
	watch       <-chan zk.Event // the last one
}

var _ zookeeper.Transport = (*handle)(nil)

// errGivenUp refuses the dials of a connection whose session the client gave
// up, so that it cannot come back (and close the session on a server).
var errGivenUp = errors.New("zookeeper: the session of this connection was given up (LOST)")

// NewClient connects env's node to the ensemble through d (a session of the
// session-timeout option). The client knows every server: it connects to
// the first-th (zk1 is 0) and, when a connection is lost, resumes its
// session on the next one, as the simulated client does. fork gives the
// client's background routines (watchdog, guaranteed delete) their Env.
func (e *Ensemble) NewClient(env lockapi.Env, fork func() lockapi.Env, d *netgate.Dialer, reg *Registry, first int) (*Client, error) {
	if first < 0 || first >= len(e.servers) {
		return nil, fmt.Errorf("zookeeper client %s: no server %d of %d", env.Name(), first+1, len(e.servers))
	}
	h := &handle{o: e.opts, tm: e.opts.Timeouts(), name: env.Name(), fork: fork, reg: reg, addrs: e.Addrs(), dial: d,
		done: make(chan struct{})}
	if err := h.connect(first); err != nil {
		return nil, err
	}
	return &Client{Client: zookeeper.NewClient(env, h, e.opts), h: h}, nil
}

// Close ends the session (its ephemeral nodes go at once) and the client's
// routines.
func (c *Client) Close() { c.h.close() }

// Server names the address the client is connected to.
func (c *Client) Server() string { return c.h.zk().Server() }

// connect opens a new connection (and session), trying the servers from
// the first-th on. Called with h.mu held, or before the handle is shared.
func (h *handle) connect(first int) error {
	var givenUp atomic.Bool
	// A connection attempt is bounded as the Java client's (and the
	// simulated client's) is, by the connect timeout, not by go-zookeeper's
	// one second: over a cut, a round of the servers takes about a session
	// timeout, and a request made meanwhile waits as long.
	dial := func(network, addr string, _ time.Duration) (net.Conn, error) {
		if givenUp.Load() {
			return nil, errGivenUp
		}
		return h.dial.Dial(network, addr, h.tm.Connect)
	}
	hs := newHosts(h.addrs, first)
	conn, events, err := zk.Connect(h.addrs, h.o.SessionTimeout, zk.WithDialer(dial), zk.WithHostProvider(hs),
		zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("zookeeper client %s: %w", h.name, err)
	}
	if h.conn != nil {
		h.epoch++
	}
	h.conn, h.hosts, h.suspended = conn, hs, false
	epoch := h.epoch
	w := h.fork()
	go func() {
		// The library drops events when nobody reads them. A lost
		// connection is SUSPENDED from the first moment the client sees
		// it, until a connection with the session or the session's end.
		for ev := range events {
			if ev.Type != zk.EventSession {
				continue
			}
			now := w.Mono()
			h.mu.Lock()
			if h.epoch == epoch {
				switch ev.State {
				case zk.StateDisconnected:
					if !h.suspended {
						h.suspended, h.suspendedAt = true, now
						go h.loseAfter(h.fork(), epoch, now)
					}
				case zk.StateHasSession, zk.StateExpired:
					h.suspended = false
				}
			}
			h.mu.Unlock()
		}
	}()
	h.givenUp = &givenUp
	return nil
}

// loseAfter is Curator's ConnectionStateManager: it calls the session LOST
// the session timeout after SUSPENDED began (at since), unless a connection
// with the session came back meanwhile.
func (h *handle) loseAfter(w lockapi.Env, epoch int, since time.Duration) {
	w.Sleep(since + h.o.SessionTimeout - w.Mono())
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.epoch == epoch && h.suspended && h.suspendedAt == since {
		_ = h.lose(w.Mono())
	}
}

// Connect applies Curator's LOST rule before a request: suspended for the
// session timeout, the client gives its session up and connects anew
// (go-zookeeper itself resumes a lost connection's session).
func (h *handle) Connect(env lockapi.Env) error {
	now := env.Mono()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lose(now)
}

// lose gives the session up if it has been suspended for the session
// timeout at now, and connects anew from the server after the one tried
// last, as the simulated client does. Called with h.mu held.
func (h *handle) lose(now time.Duration) error {
	if !h.suspended || now-h.suspendedAt < h.o.SessionTimeout {
		return nil
	}
	if h.closed() {
		return zookeeper.ErrClosed
	}
	old := h.conn
	h.givenUp.Store(true)
	go old.Close() // in its connect loop: nothing reaches a server
	next := slices.Index(h.addrs, h.hosts.after())
	if err := h.connect(next); err != nil {
		return fmt.Errorf("%w: a new session after LOST: %w", zookeeper.ErrConnLoss, err)
	}
	return nil
}

// zk is the handle's current connection.
func (h *handle) zk() *zk.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conn
}

func (h *handle) closed() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

func (h *handle) close() {
	h.once.Do(func() {
		h.mu.Lock()
		close(h.done)
		h.mu.Unlock()
		h.zk().Close()
	})
}

// Ready: go-zookeeper keeps (and resumes) its session itself; a closed
// handle checks in no more.
func (h *handle) Ready() bool { return !h.closed() }

// Session is the current connection's session id (0: none yet).
func (h *handle) Session() int64 { return h.zk().SessionID() }

// LastHeard is when the last answered request was sent.
func (h *handle) LastHeard() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastHeard
}

// Vouches only for the current session: go-zookeeper replaces an expired
// session on its own, and a check-in on the new one says nothing of the
// old one's nodes.
func (h *handle) Vouches(session int64) bool { return session == h.Session() }

// Mark counts the watches set so far.
func (h *handle) Mark() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.watches
}

// Await waits for the last watch, if one was set since mark, to fire (the
// library also closes it when its connection ends), for d, or for the
// handle to close (true: the requests of the look that follows end the
// acquire).
func (h *handle) Await(_ lockapi.Env, mark int, d time.Duration) bool {
	h.mu.Lock()
	fired := h.watch
	if h.watches == mark {
		fired = nil
	}
	h.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-fired:
		return true
	case <-h.done:
		return true
	case <-timer.C:
		return false
	}
}

// Adopt tells the expiry observer whose node path is.
func (h *handle) Adopt(path string, session int64) { h.reg.created(path, h.name, session) }

// Go runs fn in a goroutine with an Env of its own (it ends when the run
// stops).
func (h *handle) Go(_ lockapi.Env, _ string, fn func(lockapi.Env)) {
	if h.closed() {
		return
	}
	w := h.fork()
	go fn(w)
}

// Call runs r on go-zookeeper's primitives: ping is an Exists of /, a
// create of an ephemeral node is followed by an Exists for its stat (the
// library's create answers none), a watch is kept for Await.
func (h *handle) Call(env lockapi.Env, r zookeeper.Request) (zookeeper.Response, error) {
	ok := zookeeper.Response{Code: zookeeper.CodeOK}
	switch r.Op {
	case zookeeper.OpPing:
		_, err := do(h, env, func(c *zk.Conn) (bool, error) { ok, _, err := c.Exists("/"); return ok, err })
		return answer(ok, err)
	case zookeeper.OpSync:
		_, err := do(h, env, func(c *zk.Conn) (string, error) { return c.Sync(r.Path) })
		return answer(ok, err)
	case zookeeper.OpDelete:
		h.reg.released(r.Path)
		_, err := do(h, env, func(c *zk.Conn) (struct{}, error) { return struct{}{}, c.Delete(r.Path, -1) })
		return answer(ok, err)
	case zookeeper.OpGetChildren:
		var ch []string
		var ev <-chan zk.Event
		var err error
		if r.Watch {
			type lw struct {
				ch []string
				ev <-chan zk.Event
			}
			var got lw
			got, err = do(h, env, func(c *zk.Conn) (lw, error) { ch, _, ev, err := c.ChildrenW(r.Path); return lw{ch, ev}, err })
			ch, ev = got.ch, got.ev
		} else {
			ch, err = do(h, env, func(c *zk.Conn) ([]string, error) { ch, _, err := c.Children(r.Path); return ch, err })
		}
		h.watched(ev)
		ok.Children = ch
		return answer(ok, err)
	case zookeeper.OpExists:
		type es struct {
			ok bool
			st *zk.Stat
			ev <-chan zk.Event
		}
		got, err := do(h, env, func(c *zk.Conn) (es, error) {
			if r.Watch {
				ok, st, ev, err := c.ExistsW(r.Path)
				return es{ok, st, ev}, err
			}
			ok, st, err := c.Exists(r.Path)
			return es{ok, st, nil}, err
		})
		h.watched(got.ev)
		if err == nil && !got.ok {
			return zookeeper.Response{Code: zookeeper.CodeNoNode}, nil
		}
		ok.Stat = stat(got.st)
		return answer(ok, err)
	case zookeeper.OpCreate:
		return h.create(env, r)
	}
	return zookeeper.Response{}, fmt.Errorf("zookeeper client %s: %s is not a request go-zookeeper runs", h.name, r.Op)
}

// create runs a create; a lock node (ephemeral) is told to the expiry
// observer, and its stat read after it. A create answered but whose stat is
// unknown is an OK Response with its path and the stat's error.
func (h *handle) create(env lockapi.Env, r zookeeper.Request) (zookeeper.Response, error) {
	var flags int32
	if r.Ephemeral {
		flags |= zk.FlagEphemeral
	}
	if r.Sequential {
		flags |= zk.FlagSequence
	}
	session := h.Session()
	p, err := do(h, env, func(c *zk.Conn) (string, error) { return c.Create(r.Path, nil, flags, zk.WorldACL(zk.PermAll)) })
	if err != nil || !r.Ephemeral {
		return answer(zookeeper.Response{Code: zookeeper.CodeOK, Path: p}, err)
	}
	h.reg.created(p, h.name, session)
	st, err := do(h, env, func(c *zk.Conn) (*zk.Stat, error) { _, st, err := c.Exists(p); return st, err })
	if err == nil && (st == nil || st.Czxid == 0) {
		err = fmt.Errorf("%s: no stat", p)
	}
	return zookeeper.Response{Code: zookeeper.CodeOK, Path: p, Stat: stat(st)}, err
}

func (h *handle) watched(ev <-chan zk.Event) {
	if ev == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watches++
	h.watch = ev
}

// answer is the Response of a request that ended with err: a definite
// answer of the server (no node, node exists) is a Code.
func answer(ok zookeeper.Response, err error) (zookeeper.Response, error) {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return zookeeper.Response{Code: zookeeper.CodeNoNode}, nil
	case errors.Is(err, zk.ErrNodeExists):
		return zookeeper.Response{Code: zookeeper.CodeNodeExists}, nil
	case err != nil:
		return zookeeper.Response{}, err
	}
	return ok, nil
}

func stat(st *zk.Stat) zookeeper.Stat {
	if st == nil {
		return zookeeper.Stat{}
	}
	return zookeeper.Stat{Czxid: uint64(st.Czxid), Mzxid: uint64(st.Mzxid), Version: st.Version, Cversion: st.Cversion,
		EphemeralOwner: st.EphemeralOwner}
}

// do runs one request on the current connection within the read timeout.
// An answer from the server (success or a definite error such as no node)
// counts as contact; a request without one may have taken effect
// (zookeeper.ErrNoReply).
func do[T any](h *handle, env lockapi.Env, f func(*zk.Conn) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	var zero T
	sent := env.Mono()
	conn := h.zk()
	ch := make(chan result, 1)
	go func() {
		v, err := f(conn)
		ch <- result{v, err}
	}()
	timer := time.NewTimer(h.tm.Read)
	defer timer.Stop()
	select {
	case r := <-ch:
		switch {
		case errors.Is(r.err, zk.ErrClosing):
			if h.closed() {
				return zero, zookeeper.ErrClosed
			}
			// The connection of a session given up (LOST).
			return zero, fmt.Errorf("%w: %w", zookeeper.ErrNoReply, r.err)
		case errors.Is(r.err, zk.ErrConnectionClosed), errors.Is(r.err, zk.ErrNoServer):
			return zero, fmt.Errorf("%w: %w", zookeeper.ErrNoReply, r.err)
		case errors.Is(r.err, zk.ErrSessionExpired):
			return zero, fmt.Errorf("%w: %w", zookeeper.ErrExpired, r.err)
		}
		h.mu.Lock()
		h.lastHeard = max(h.lastHeard, sent)
		h.mu.Unlock()
		return r.v, r.err
	case <-timer.C:
		return zero, fmt.Errorf("%w (%v)", zookeeper.ErrNoReply, h.tm.Read)
	case <-h.done:
		return zero, zookeeper.ErrClosed
	}
}
