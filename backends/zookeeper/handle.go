package zookeeper

import (
	"slices"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// handle is the simulated ZooKeeper handle, the Transport of a client
// process: it sends the client protocol's messages (Request, Response) from
// the client's processes to the server it is connected to. It keeps one
// session: no reply within the read timeout is a disconnection (SUSPENDED),
// after which it resumes the session on the next server; it gives the
// session up (LOST) when its clock says the session timeout has passed
// since SUSPENDED, or when a server says the session expired.
type handle struct {
	p       *sim.Proc
	tm      Timeouts
	o       Options
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
}

var _ Transport = (*handle)(nil)

func newHandle(p *sim.Proc, e *Ensemble) *handle {
	return &handle{p: p, o: e.opts, tm: e.opts.Timeouts(), servers: sim.IDs(e.nodes), conn: p.Rand().IntN(len(e.nodes)),
		nextSession: int64(p.Node().ID()+1) << 32}
}

// proc is the simulated process of a routine env: the client's process or
// one the handle's Go spawned.
func proc(env lockapi.Env) *sim.Proc { return env.(*sim.Proc) }

func (h *handle) ownsSession(id int64) bool { return slices.Contains(h.sessions, id) }

// Ready: a session, and no connection attempt under way.
func (h *handle) Ready() bool { return h.session != 0 && !h.busy }

// Session is the current session id (0: none).
func (h *handle) Session() int64 { return h.session }

// LastHeard is when the last reply came.
func (h *handle) LastHeard() time.Duration { return h.lastHeard }

// Vouches: any reply of the handle moves the belief, whatever session gave
// the hold (the handle replaces its session only by its own connect).
func (h *handle) Vouches(int64) bool { return true }

// Mark is the connection's identity.
func (h *handle) Mark() int { return h.epoch }

// Await receives a watch event, looking again every ping interval whether
// the connection that carried the watches ended.
func (h *handle) Await(env lockapi.Env, mark int, d time.Duration) bool {
	_, ok := proc(env).Recv(min(d, h.tm.Ping))
	return ok || h.epoch != mark || h.session == 0
}

// Adopt: the ensemble knows its clients' sessions itself.
func (h *handle) Adopt(string, int64) {}

// Go spawns a process of the client's node.
func (h *handle) Go(env lockapi.Env, name string, fn func(lockapi.Env)) {
	proc(env).Spawn(name, func(w *sim.Proc) { fn(w) })
}

// Call sends r to the connected server.
func (h *handle) Call(env lockapi.Env, r Request) (Response, error) {
	p := proc(env)
	resp, got := roundTrip[Request, Response](h, p, r, func() { h.disconnect(p) }, h.expire)
	switch got {
	case unanswered:
		return Response{}, ErrNoReply
	case notServing:
		return resp, ErrConnLoss
	case sessionGone:
		return resp, ErrExpired
	}
	return resp, nil
}

// exchange is what came of a request sent on the handle's connection.
type exchange int

const (
	// answered: a reply on the connection still open, from a server serving
	// the session (its Code says how the request went).
	answered exchange = iota
	// unanswered: no reply within the read timeout (the connection is now
	// closed), or a reply on a connection closed since. The request may
	// have been applied.
	unanswered
	// notServing: the server is not serving; the connection is now closed.
	notServing
	// sessionGone: the server says the session expired; it is dropped.
	sessionGone
)

// sessionRequest is a request of the client protocol (Request, APIRequest)
// as sent: on a session, with an xid.
type sessionRequest[Q any] interface {
	onSession(session int64, xid uint64) Q
}

// codedReply is a server's reply to a sessionRequest (Response, APIResponse).
type codedReply interface {
	replyCode() Code
}

// roundTrip is the connection protocol both clients of a handle speak, the
// recipe's transport (Call) and the go-zookeeper connection (Conn): it sends
// r on the current connection, with the session and the next xid, and waits
// at most the read timeout. A missed reply closes the connection, with
// disconnect, unless another request closed it already; a server that is
// not serving closes it too; a server saying the session expired ends it,
// with expire; any other reply is heard (lastHeard). Each client maps the
// exchange to its own errors.
func roundTrip[Q sessionRequest[Q], A codedReply](h *handle, p *sim.Proc, r Q, disconnect, expire func()) (A, exchange) {
	var none A
	h.xid++
	session := h.session
	r = r.onSession(session, h.xid)
	conn := h.epoch
	reply, err := p.Call(h.servers[h.conn], r, h.tm.Read)
	if err != nil {
		if conn == h.epoch {
			disconnect()
		}
		return none, unanswered
	}
	if conn != h.epoch || !h.connected {
		// The reply came on a connection the handle has abandoned since (its
		// other process's request went unanswered for the read timeout, or
		// the server left the quorum): the handle closed that socket and
		// failed every request pending on it with a connection loss, so
		// what arrives on it now answers nothing; the request may have been
		// applied all the same.
		return none, unanswered
	}
	resp := reply.(A)
	switch resp.replyCode() {
	case CodeNotReady:
		disconnect()
		return resp, notServing
	case CodeExpired:
		if session == h.session {
			expire()
		}
		return resp, sessionGone
	}
	h.lastHeard = p.Mono()
	return resp, answered
}

func (h *handle) disconnect(p *sim.Proc) {
	if !h.connected {
		return
	}
	h.connected = false
	h.conn = (h.conn + 1) % len(h.servers)
	if !h.suspended {
		h.suspended, h.suspendedAt = true, p.Mono()
	}
}

// expire drops the session: the server said it is gone.
func (h *handle) expire() {
	h.session, h.connected, h.suspended = 0, false, false
}

// checkLost applies Curator's LOST rule: suspended for the session timeout.
func (h *handle) checkLost(p *sim.Proc) {
	if h.suspended && p.Mono()-h.suspendedAt >= h.o.SessionTimeout {
		h.expire()
	}
}

// Connect resumes the session on the next server, or makes a new session
// once the old one is gone.
func (h *handle) Connect(env lockapi.Env) error {
	p := proc(env)
	for h.busy {
		p.Sleep(10 * time.Millisecond)
	}
	h.checkLost(p)
	if h.session != 0 && h.connected {
		return nil
	}
	h.busy = true
	defer func() { h.busy = false }()
	switch h.dial(p) {
	case CodeOK:
		h.suspended = false
		return nil
	case CodeExpired:
		h.expire()
		return ErrExpired
	}
	h.checkLost(p)
	return ErrConnLoss
}

// dial connects the session (a new one when there is none) to the first
// server, from the current one round all of them, that takes it: CodeOK
// (connected) or CodeExpired (the session is gone) from the server that
// says so, "" when none did. A new session's id is the handle's next.
func (h *handle) dial(p *sim.Proc) Code {
	fresh := h.session == 0
	if fresh {
		h.nextSession++
		h.session = h.nextSession
		h.sessions = append(h.sessions, h.session)
	}
	for range h.servers {
		until := p.Node().TrueTimeAtMono(p.Mono() + h.tm.Connect)
		reply, err := p.Call(h.servers[h.conn], Request{Op: OpConnect, Session: h.session, New: fresh,
			Timeout: int64(h.o.SessionTimeout), Until: until}, h.tm.Connect)
		if err == nil {
			switch code := reply.(Response).Code; code {
			case CodeOK:
				h.connected, h.lastHeard = true, p.Mono()
				h.epoch++
				return code
			case CodeExpired:
				return code
			}
		}
		h.conn = (h.conn + 1) % len(h.servers)
	}
	return ""
}
