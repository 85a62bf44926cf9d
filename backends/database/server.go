package database

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// livenessCheck is how often the server looks for dead connections.
const livenessCheck = 500 * time.Millisecond

type txn struct {
	locks  []string
	writes map[string]int64
	order  []string // rows in the order first written
	// recorded is the index in the record of writes (RecordWrites) of the
	// write of each row the transaction would commit.
	recorded map[string]int
}

type conn struct {
	id       string
	last     time.Duration // server monotonic time of the last request
	txn      *txn
	advisory []string
	closed   bool
}

type cell struct{ value, version int64 }

type lockRow struct {
	owner  string
	expiry time.Duration
}

type waiter struct {
	c     *conn
	msg   sim.Message
	timer *sim.Timer
}

type rowLock struct {
	holder  *conn
	owner   string // the acquisition the holder's SELECT FOR UPDATE named (the record of grants)
	waiters []*waiter
}

// Event is something the server did by itself that a reader should see:
// "row-taken-over" (an expired unique row was taken by another owner) or
// "transaction-aborted" (a connection was silent too long).
type Event struct {
	Kind   system.EventKind
	Detail string
}

// Server is the database: data rows with versions, unique lock rows, row
// locks with wait queues, advisory locks, and connections whose transactions
// it aborts when they fall silent for conn-timeout. It keeps nothing across
// a crash except the committed rows: a crash ends every connection, and a
// request on a connection opened before the crash is answered "closed" (a
// real server has no such connection: the client's next request fails and
// it must reconnect).
type Server struct {
	opts     Options
	node     *sim.Node
	conns    map[string]*conn
	data     map[string]*cell
	locks    map[string]*lockRow
	rows     map[string]*rowLock
	advisory map[string]*conn
	advOwner map[string]string // the acquisition each advisory lock was taken for (the record of grants)
	grants   uint64
	record   *lockapi.GrantLog          // the ground truth, when recorded (RecordGrants)
	writes   *lockapi.WriteLog          // the ground truth of the data rows, when recorded (RecordWrites)
	stamps   map[stampKey]time.Duration // when (true time) each unique-row insert in flight was stamped (the record of grants)
	// OnEvent, when set, is told of every Event.
	OnEvent func(n *sim.Node, e Event)
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

// NewServer returns a database with the options' timeouts.
func NewServer(o Options) *Server {
	return &Server{opts: o, data: map[string]*cell{}, locks: map[string]*lockRow{}}
}

// Preset sets data rows' committed values before the run (a workload's
// initial values, for a resource kept in the database), in key order.
func (s *Server) Preset(initial map[string]int64) {
	for _, k := range slices.Sorted(maps.Keys(initial)) {
		s.data["data/"+k] = &cell{value: initial[k]}
	}
}

// Start resets the volatile state and starts the liveness check. The
// connections ended by a crash stay closed.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	if s.conns == nil {
		s.conns = map[string]*conn{}
	}
	s.rows, s.advisory, s.advOwner = map[string]*rowLock{}, map[string]*conn{}, map[string]string{}
	n.SetTimer(livenessCheck, s.checkLiveness)
}

// Crash ends every connection: its transaction is lost (its writes were
// never committed) and so are its locks; committed rows survive. The ended
// connections are kept as closed, so that a client that sends on one after
// the restart learns "closed" and reconnects, instead of its request running
// on a connection the new incarnation never opened (outside the transaction
// and the lock the client believes it has). Connection ids are not reused.
func (s *Server) Crash(n *sim.Node) {
	for _, c := range s.conns { // determinism:ok every connection gets the same
		c.closed, c.txn, c.advisory = true, nil, nil
	}
	s.crashed()
	s.rows, s.advisory, s.advOwner = nil, nil, nil
}

// Value is a data row's committed value.
func (s *Server) Value(key string) int64 {
	if c := s.data[key]; c != nil {
		return c.value
	}
	return 0
}

func (s *Server) event(kind system.EventKind, detail string) {
	if s.OnEvent != nil {
		s.OnEvent(s.node, Event{Kind: kind, Detail: detail})
	}
}

func (s *Server) conn(id string) *conn {
	c := s.conns[id]
	if c == nil {
		c = &conn{id: id}
		s.conns[id] = c
	}
	c.last = s.node.Mono()
	return c
}

// Receive answers a request (a SELECT FOR UPDATE that must wait is answered
// when it is granted or times out).
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	req, ok := m.Body.(Req)
	if !ok {
		panic(fmt.Sprintf("database: unexpected message %T", m.Body))
	}
	c := s.conn(req.Conn)
	if c.closed {
		n.Reply(m, Resp{Err: "closed"})
		return
	}
	if req.Op == OpSelectForUpdate {
		s.selectForUpdate(c, req, m)
		return
	}
	n.Reply(m, s.do(c, req, m))
}

func (s *Server) do(c *conn, req Req, m sim.Message) Resp {
	switch req.Op {
	case OpPing:
		return Resp{OK: true}
	case OpInsertLock:
		return s.insertLock(req, m)
	case OpDeleteLock:
		if l := s.locks[req.Key]; l != nil && l.owner == req.Owner {
			delete(s.locks, req.Key)
			s.record.Released(scope, req.Key, req.Owner, s.now())
			return Resp{OK: true}
		}
		return Resp{Err: "not owner"}
	case OpBegin:
		if c.txn == nil {
			c.txn = &txn{writes: map[string]int64{}}
		}
		return Resp{OK: true}
	case OpRead:
		cl := s.data[req.Key]
		r := Resp{OK: true}
		if cl != nil {
			r.Value, r.Version = cl.value, cl.version
		}
		if c.txn != nil {
			if v, ok := c.txn.writes[req.Key]; ok {
				r.Value = v
			}
		}
		s.readServed(c, req, m, r.Value)
		return r
	case OpWrite:
		return s.write(c, req, m)
	case OpCommit:
		return s.commit(c)
	case OpRollback:
		s.endTxn(c, false)
		return Resp{OK: true}
	case OpAdvisoryTry:
		if h := s.advisory[req.Key]; h != nil && h != c {
			return Resp{Err: "busy", Owner: h.id}
		}
		s.advisory[req.Key] = c
		if !slices.Contains(c.advisory, req.Key) {
			c.advisory = append(c.advisory, req.Key)
		}
		s.grantedAdvisory(req.Key, req.Owner, m)
		s.grants++
		return Resp{OK: true, Token: s.grants}
	case OpAdvisoryUnlock:
		if s.advisory[req.Key] != c {
			return Resp{Err: "not owner"}
		}
		delete(s.advisory, req.Key)
		s.record.Released(scope, req.Key, s.advOwner[req.Key], s.now())
		delete(s.advOwner, req.Key)
		c.advisory = slices.DeleteFunc(c.advisory, func(k string) bool { return k == req.Key })
		return Resp{OK: true}
	}
	panic(fmt.Sprintf("database: unknown request %q", req.Op))
}

// insertLock inserts the lock row, or takes over a row whose expiry is
// before the acquirer's clock (UPDATE ... WHERE expiry < :now).
func (s *Server) insertLock(req Req, m sim.Message) Resp {
	l := s.locks[req.Key]
	if l != nil && l.expiry >= req.Now {
		delete(s.stamps, stampKey{req.Owner, req.Now})
		return Resp{Err: "busy", Owner: l.owner}
	}
	if l != nil {
		s.event("row-taken-over", fmt.Sprintf("%s took over lock row %q of %s: its expiry %v is before %s's clock %v",
			req.Owner, req.Key, l.owner, wallTime(l.expiry), req.Owner, wallTime(req.Now)))
	}
	s.locks[req.Key] = &lockRow{owner: req.Owner, expiry: req.Expiry}
	s.grantedRow(req, m)
	s.grants++
	return Resp{OK: true, Token: s.grants}
}

func wallTime(d time.Duration) string { return (d - sim.DefaultWallEpoch).String() }

func (s *Server) write(c *conn, req Req, m sim.Message) Resp {
	cl := s.data[req.Key]
	if req.IfVersion >= 0 {
		v := int64(0)
		if cl != nil {
			v = cl.version
		}
		if v != req.IfVersion {
			return Resp{Err: "version", Version: v}
		}
	}
	for _, rv := range req.ReadSet {
		v := int64(0)
		if cl := s.data[rv.Key]; cl != nil {
			v = cl.version
		}
		if v != rv.Version {
			return Resp{Err: "version of " + rv.Key, Version: v}
		}
	}
	if c.txn != nil {
		if _, ok := c.txn.writes[req.Key]; !ok {
			c.txn.order = append(c.txn.order, req.Key)
		}
		c.txn.writes[req.Key] = req.Value
		s.writeApplied(c, req, m)
		return Resp{OK: true}
	}
	s.set(req.Key, req.Value)
	s.writeApplied(c, req, m)
	return Resp{OK: true}
}

func (s *Server) set(key string, v int64) {
	cl := s.data[key]
	if cl == nil {
		cl = &cell{}
		s.data[key] = cl
	}
	cl.value = v
	cl.version++
}

func (s *Server) commit(c *conn) Resp {
	if c.txn == nil {
		return Resp{Err: "aborted"}
	}
	for _, k := range c.txn.order {
		s.set(k, c.txn.writes[k])
		s.committed(c, k)
	}
	s.endTxn(c, false)
	return Resp{OK: true}
}

// endTxn ends c's transaction, releasing its row locks to their waiters;
// aborted: the server aborted it (the record of grants calls that a
// revocation).
func (s *Server) endTxn(c *conn, aborted bool) {
	if c.txn == nil {
		return
	}
	for _, row := range c.txn.locks {
		s.release(row, c, aborted)
	}
	c.txn = nil
}

func (s *Server) selectForUpdate(c *conn, req Req, m sim.Message) {
	if c.txn == nil {
		c.txn = &txn{writes: map[string]int64{}}
	}
	rl := s.rows[req.Key]
	if rl == nil {
		rl = &rowLock{}
		s.rows[req.Key] = rl
	}
	if rl.holder == nil || rl.holder == c {
		s.grantRow(rl, req.Key, c, m)
		return
	}
	wait := min(req.Wait, s.opts.LockWaitTimeout)
	if wait <= 0 {
		s.node.Reply(m, Resp{Err: "busy", Owner: rl.holder.id})
		return
	}
	w := &waiter{c: c, msg: m}
	w.timer = s.node.SetTimer(wait, func() {
		if i := slices.Index(rl.waiters, w); i >= 0 {
			rl.waiters = slices.Delete(rl.waiters, i, i+1)
			s.node.Reply(m, Resp{Err: "timeout", Owner: rl.holder.id})
		}
	})
	rl.waiters = append(rl.waiters, w)
}

func (s *Server) grantRow(rl *rowLock, row string, c *conn, m sim.Message) {
	s.grantedForUpdate(rl, row, c, m)
	if rl.holder != c {
		rl.holder = c
		c.txn.locks = append(c.txn.locks, row)
	}
	s.grants++
	s.node.Reply(m, Resp{OK: true, Token: s.grants})
}

// release frees row from c and grants it to the first live waiter.
func (s *Server) release(row string, c *conn, aborted bool) {
	rl := s.rows[row]
	if rl == nil || rl.holder != c {
		return
	}
	s.endedForUpdate(rl, row, aborted)
	rl.holder = nil
	for len(rl.waiters) > 0 {
		w := rl.waiters[0]
		rl.waiters = rl.waiters[1:]
		w.timer.Stop()
		if w.c.closed || w.c.txn == nil {
			continue
		}
		s.grantRow(rl, row, w.c, w.msg)
		return
	}
}

// checkLiveness ends every connection silent for conn-timeout: its
// transaction aborts (its writes are lost, its row locks released) and its
// advisory locks go.
func (s *Server) checkLiveness() {
	s.node.SetTimer(livenessCheck, s.checkLiveness)
	now := s.node.Mono()
	for _, id := range sorted.Keys(s.conns) {
		c := s.conns[id]
		if c.closed || now-c.last < s.opts.ConnTimeout {
			continue
		}
		c.closed = true
		if c.txn != nil && (len(c.txn.locks) > 0 || len(c.txn.writes) > 0) {
			s.event("transaction-aborted", fmt.Sprintf("connection %s silent for %v: its transaction aborted (row locks %v released, %d write(s) discarded)",
				id, now-c.last, c.txn.locks, len(c.txn.writes)))
		}
		s.endTxn(c, true)
		for _, k := range c.advisory {
			if s.advisory[k] == c {
				delete(s.advisory, k)
				s.record.Revoked(scope, k, s.advOwner[k], s.node.Name(), s.now())
				delete(s.advOwner, k)
			}
		}
		if len(c.advisory) > 0 {
			s.event("transaction-aborted", fmt.Sprintf("connection %s silent for %v: its session ended, advisory locks %v released",
				id, now-c.last, c.advisory))
		}
		c.advisory = nil // the tombstone stays: the client learns "closed" on its next request
	}
}
