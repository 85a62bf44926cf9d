package database

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// NewClient returns the client of process p, talking to the database node
// server.
func NewClient(p *sim.Proc, server sim.NodeID, o Options) *Client {
	return New(p, newProcTransport(p, server, o), o)
}

// procTransport is the simulated Transport: Req messages sent from the
// client's process on connections it names, and a keep-alive process that
// pings the current connection every conn-timeout/3.
type procTransport struct {
	p       *sim.Proc
	server  sim.NodeID
	opts    Options
	connN   int
	conn    string
	pinging bool
	fresh   func()
}

func newProcTransport(p *sim.Proc, server sim.NodeID, o Options) *procTransport {
	t := &procTransport{p: p, server: server, opts: o}
	t.Reconnect()
	return t
}

// OnNewConnection registers fn.
func (t *procTransport) OnNewConnection(fn func()) { t.fresh = fn }

// Conn names the current connection.
func (t *procTransport) Conn() string { return t.conn }

// Reconnect names a new connection (the server ends the old one when it
// sees it silent) and starts the keep-alive process once.
func (t *procTransport) Reconnect() {
	t.connN++
	t.conn = fmt.Sprintf("%s/%d", t.p.Name(), t.connN)
	if t.fresh != nil {
		t.fresh()
	}
	if !t.pinging {
		t.pinging = true
		t.p.Spawn(t.p.Name()+"/ping", t.ping)
	}
}

// ping keeps the current connection alive.
func (t *procTransport) ping(w *sim.Proc) {
	for {
		w.Sleep(t.opts.ConnTimeout / 3)
		_, _ = w.Call(t.server, Req{Conn: t.conn, Op: OpPing}, t.opts.RequestTimeout)
	}
}

// Call sends req on the current connection. A timeout is an unknown
// outcome; "closed" opens a new connection and is ErrClosed (certainly not
// run). A unique-row insert is told to the server's record of grants first,
// with the client's wall clock it carries.
func (t *procTransport) Call(req Req, timeout time.Duration) (Resp, error) {
	req.Conn = t.conn
	if req.Op == OpInsertLock {
		if srv, ok := t.p.World().Nodes()[t.server].Handler().(*Server); ok {
			srv.stamped(req.Owner, req.Now, t.p.World().Now()) // the record of grants, when recorded
		}
	}
	body, err := t.p.Call(t.server, req, timeout)
	if err != nil {
		return Resp{}, fmt.Errorf("%w: %w", lockapi.ErrUnknown, err)
	}
	r := body.(Resp)
	if r.Err == "closed" {
		t.Reconnect()
		return r, ErrClosed
	}
	return r, nil
}
