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
	h.xid++
	r.Session, r.Xid = h.session, h.xid
	conn := h.epoch
	reply, err := p.Call(h.servers[h.conn], r, h.tm.Read)
	if err != nil {
		if conn == h.epoch {
			h.disconnect(p)
		}
		return Response{}, ErrNoReply
	}
	if conn != h.epoch || !h.connected {
		// The reply came on a connection the handle has abandoned since (its
		// other process's request went unanswered for the read timeout, or
		// the server left the quorum): the handle closed that socket and
		// failed every request pending on it with a connection loss, so
		// what arrives on it now answers nothing; the request may have been
		// applied all the same.
		return Response{}, ErrNoReply
	}
	resp := reply.(Response)
	switch resp.Code {
	case CodeNotReady:
		h.disconnect(p)
		return resp, ErrConnLoss
	case CodeExpired:
		if r.Session == h.session {
			h.expire()
		}
		return resp, ErrExpired
	}
	h.lastHeard = p.Mono()
	return resp, nil
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
