package chubby

import (
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

type pendingKey struct {
	session int64
	seq     uint64
}

// Server is one Chubby replica: the consensus (a raftnode.Replica, as
// backends/raftkv and backends/zookeeper run it), the replicated state of
// sessions and lock files, and, while it is master, the session leases and
// lock-delays it keeps on its own clock.
type Server struct {
	cell *Cell
	id   uint64
	r    *raftnode.Replica // its log survives a crash

	node    *sim.Node
	state   *state
	leases  raftnode.SessionLeases   // master: the sessions' leases, from their last KeepAlive
	delayed map[string]time.Duration // master: lock -> end of its lock-delay (monotonic)
	pending raftnode.Pending[pendingKey]
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

func newServer(c *Cell, id uint64) *Server {
	s := &Server{cell: c, id: id}
	cfg := raftnode.SessionConfig("chubby", id, c.opts.Replicas, c.opts.Tick, c.opts.ElectionTimeout)
	cfg.Apply, cfg.Role, cfg.Send, cfg.OnTick = s.apply, s.changeRole, s.send, s.tick
	cfg.Purge = func() { s.pending.Purge(s.node.Mono()) }
	s.r = raftnode.NewReplica(cfg)
	s.leases = raftnode.SessionLeases{
		Timeout: func(int64) time.Duration { return c.opts.Lease },
		Propose: func(id int64) error { return s.r.Propose(encodeTxn(txn{Op: "expire", Session: id})) },
		Granted: s.promise,
	}
	return s
}

// replica is the server's raft replica.
func (s *Server) replica() *raftnode.Replica { return s.r }

// Start (re)builds the replica from its log.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	s.state = newState()
	s.leases.Reset()
	s.delayed, s.pending = map[string]time.Duration{}, raftnode.Pending[pendingKey]{}
	s.r.Start(n)
}

// Crash loses everything but the log.
func (s *Server) Crash(*sim.Node) {
	s.cell.delaysOver(s)
	s.r.Crash()
	s.state, s.pending = nil, nil
	s.leases.Reset()
}

// tick lets the master end the sessions whose lease ran out.
func (s *Server) tick() {
	if s.master() {
		s.leases.Expire(s.node.Mono(), s.state.sessionIDs())
	}
}

// master reports whether this replica is the master of a working quorum.
func (s *Server) master() bool { return s.r.QuorumActive() }

// contacted notes that the master heard from session now: its lease runs
// for another Lease on the master's clock (and, in the record of grants,
// from now in true time).
func (s *Server) contacted(session int64) {
	s.leases.Heard(session, s.node.Mono())
	s.promise(session)
}

// promise records, in the record of grants, that session's lease runs from
// now for another Lease in true time: the master just started it again.
func (s *Server) promise(session int64) {
	if t := s.cell.truth; t.recording() {
		now := s.node.World().Now()
		t.promised(session, s.state.heldBy(session), now, now+s.cell.opts.Lease)
	}
}

// Receive handles raft messages and client requests.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.r.Step(body.M)
	case Request:
		s.request(m, body)
	default:
		panic(fmt.Sprintf("chubby: %s: unexpected message %T", n.Name(), m.Body))
	}
}

func (s *Server) request(m sim.Message, r Request) {
	if !s.master() {
		s.node.Reply(m, Response{Code: CodeNotMaster, Master: s.r.Lead()})
		return
	}
	if r.Op == OpOpen {
		s.propose(m, r, txn{Op: "open", Session: r.Session})
		return
	}
	if r.Op == OpCheck {
		s.node.Reply(m, Response{Code: s.check(r.Sequencer)})
		return
	}
	if !s.state.sessions[r.Session] || s.leases.Expiring(r.Session) {
		s.node.Reply(m, Response{Code: CodeExpired})
		return
	}
	s.contacted(r.Session)
	switch r.Op {
	case OpKeepAlive:
		s.node.Reply(m, Response{Code: CodeOK})
	case OpAcquire:
		if until, ok := s.delayed[r.Lock]; ok && s.node.Mono() < until {
			s.node.Reply(m, Response{Code: CodeBusy, Delay: int64(until - s.node.Mono())})
			return
		}
		l := s.state.locks[r.Lock]
		s.propose(m, r, txn{Op: "acquire", Session: r.Session, Lock: r.Lock, Cleared: l != nil && l.holder == 0 && l.lost})
	case OpRelease:
		s.propose(m, r, txn{Op: "release", Session: r.Session, Lock: r.Lock})
	default:
		panic(fmt.Sprintf("chubby: %s: unknown op %q", s.node.Name(), r.Op))
	}
}

// check is CheckSequencer: is seq the current grant of its lock?
func (s *Server) check(seq Sequencer) Code {
	l := s.state.locks[seq.Lock]
	if l == nil || l.holder == 0 || l.generation != seq.Generation {
		return CodeStale
	}
	return CodeOK
}

func (s *Server) propose(m sim.Message, r Request, x txn) {
	x.Origin, x.Seq = s.id, r.Seq
	if err := s.pending.Propose(s.r, pendingKey{r.Session, r.Seq}, m, encodeTxn(x)); err != nil {
		s.node.Reply(m, Response{Code: CodeNotMaster, Master: s.r.Lead()})
		return
	}
	s.r.Drain()
}

// send puts a raft message on the network to its peer.
func (s *Server) send(to uint64, m *pb.Message) {
	s.node.Send(s.cell.nodes[to-1].ID(), RaftMessage{M: m})
}

// changeRole starts a new master's sessions and lock-delays, and ends a
// deposed one's lock-delays.
func (s *Server) changeRole(was raft.StateType) {
	leading := s.r.Leading()
	if leading && was != raft.StateLeader {
		// A new master grants every session a fresh lease (the paper's
		// failover: clients in their grace period reconnect in time), and
		// a whole lock-delay to every lock the log shows freed by an
		// expiry and not granted since: the old master's lock-delay was
		// on its own clock, so this one assumes the longest it could
		// still run, as it does for the sessions' leases (issue 28).
		now := s.node.Mono()
		s.delayed = map[string]time.Duration{}
		s.leases.Restart(now, s.state.sessionIDs())
		s.cell.delaysOver(s)
		lost := s.state.lostLocks()
		for _, name := range lost {
			s.delay(name, now+s.cell.opts.LockDelay, fmt.Sprintf("elected in term %d, it knows %s freed by a session's expiry and not granted since", s.r.Term(), name))
		}
		s.cell.masterElected(s, lost)
	}
	if was == raft.StateLeader && !leading {
		s.cell.delaysOver(s) // it no longer grants: its lock-delays hold nothing back
	}
}

// delay starts the master's lock-delay of lock, until its clock reads until,
// and tells the cell when it starts and when it runs out.
func (s *Server) delay(lock string, until time.Duration, why string) {
	s.delayed[lock] = until
	if s.cell.opts.LockDelay <= 0 {
		return
	}
	s.cell.delayStarted(s, lock, why)
	s.node.SetTimer(until-s.node.Mono(), func() {
		// Still this lock-delay: a new term starts a new one, later.
		if d, ok := s.delayed[lock]; ok && d == until && s.r.Leading() {
			s.cell.delayOver(s, lock)
		}
	})
}

func (s *Server) apply(e *pb.Entry) {
	if e.Type != pb.EntryNormal || len(e.Data) == 0 {
		return
	}
	x := s.cell.decode(e.Data)
	granted := false
	if x.Op == "acquire" && s.cell.truth.recording() {
		l := s.state.locks[x.Lock]
		granted = s.state.sessions[x.Session] && (l == nil || l.holder == 0)
	}
	o := s.state.apply(x)
	if s.cell.truth.first(e.Index) {
		s.cell.truth.entry(s.node.Name(), x, o, granted, s.node.World().Now())
	}
	if x.Op == "expire" {
		s.leases.Ended(x.Session)
		if s.r.Leading() && o.code == CodeOK {
			s.cell.sessionExpired(s, x.Session, o.lost)
			for _, name := range o.lost {
				s.delay(name, s.node.Mono()+s.cell.opts.LockDelay, s.cell.expiredWhy(x.Session))
			}
		}
	}
	if x.Op == "open" && s.r.Leading() {
		s.contacted(x.Session)
	}
	if x.Origin != s.id {
		return
	}
	p, ok := s.pending.Take(pendingKey{x.Session, x.Seq})
	if !ok {
		return
	}
	s.node.Reply(p.Msg, Response{Code: o.code, Sequencer: o.seq})
}

// encodeTxn renders a log entry.
func encodeTxn(t txn) []byte { return raftnode.EncodeJSON("chubby", t) }

// decodeTxn reads a log entry encodeTxn rendered.
func decodeTxn(b []byte) txn { return raftnode.DecodeJSON[txn]("chubby", b) }

// decode reads a log entry as decodeTxn does, once per entry for the whole
// cell: every replica applies the same entries, and reading their JSON was a
// third of a Chubby run's time. A txn holds no slices or maps, so the
// replicas may share the value. The cache is emptied when it grows past
// decodedEntries; what it returns never depends on it.
func (c *Cell) decode(b []byte) txn {
	if x, ok := c.decoded[string(b)]; ok {
		return x
	}
	x := decodeTxn(b)
	if len(c.decoded) >= decodedEntries {
		clear(c.decoded)
	}
	c.decoded[string(b)] = x
	return x
}

// decodedEntries bounds the cell's cache of read log entries.
const decodedEntries = 4096
