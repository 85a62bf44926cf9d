package chubby

import (
	"errors"
	"fmt"
	"github.com/locklab/locklab/backends/raftnode"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/sim"
)

// neverElectionTick keeps etcd raft from campaigning by itself: the seeded
// election timer of the replica campaigns instead.
const neverElectionTick = 1 << 30

const pendingTTL = 30 * time.Second

type pendingKey struct {
	session int64
	seq     uint64
}

type pending struct {
	msg sim.Message
	at  time.Duration
}

// Server is one Chubby replica: the consensus (etcd raft, as backends/raftkv
// and backends/zookeeper run it), the replicated state of sessions and lock
// files, and, while it is master, the session leases and lock-delays it keeps
// on its own clock.
type Server struct {
	cell *Cell
	id   uint64
	st   *raft.MemoryStorage // survives a crash

	node      *sim.Node
	rn        *raft.RawNode
	state     *state
	lead      uint64
	role      raft.StateType
	term      uint64
	lastHeard time.Duration
	timeout   time.Duration
	peerHeard map[uint64]time.Duration
	contact   map[int64]time.Duration // master: session -> last KeepAlive (monotonic)
	expiring  map[int64]bool
	delayed   map[string]time.Duration // master: lock -> end of its lock-delay (monotonic)
	pending   map[pendingKey]pending
	ticks     int
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

// Start (re)builds the replica from its log.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	if s.st == nil {
		s.st = raft.NewMemoryStorage()
		voters := make([]uint64, len(s.cell.servers))
		for i := range voters {
			voters[i] = uint64(i + 1)
		}
		snap := pb.Snapshot{Metadata: pb.SnapshotMetadata{ConfState: pb.ConfState{Voters: voters}, Index: 1, Term: 1}}
		if err := s.st.ApplySnapshot(snap); err != nil {
			panic(fmt.Sprintf("chubby: %s: bootstrap: %v", n.Name(), err))
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{ID: s.id, ElectionTick: neverElectionTick, HeartbeatTick: 1,
		Storage: s.st, Applied: 1, PreVote: true, MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, Logger: quietLogger{}})
	if err != nil {
		panic(fmt.Sprintf("chubby: %s: new raw node: %v", n.Name(), err))
	}
	s.rn, s.state = rn, newState()
	hs, _, _ := s.st.InitialState()
	s.lead, s.role, s.term = 0, raft.StateFollower, hs.Term
	s.peerHeard, s.contact, s.expiring = map[uint64]time.Duration{}, map[int64]time.Duration{}, map[int64]bool{}
	s.delayed, s.pending = map[string]time.Duration{}, map[pendingKey]pending{}
	s.heard()
	n.SetTimer(s.cell.opts.Tick, s.tick)
	n.SetTimer(s.timeout, s.checkElection)
}

// Crash loses everything but the log.
func (s *Server) Crash(*sim.Node) {
	s.cell.delaysOver(s)
	s.rn, s.state, s.pending, s.contact = nil, nil, nil, nil
	s.lead, s.role = 0, raft.StateFollower
}

func (s *Server) heard() {
	e := s.cell.opts.ElectionTimeout
	s.lastHeard = s.node.Mono()
	s.timeout = e + time.Duration(s.node.Rand().Int64N(int64(e)))
}

func (s *Server) tick() {
	s.rn.Tick()
	s.ticks++
	if s.ticks%100 == 0 {
		now := s.node.Mono()
		for k, p := range s.pending { // determinism:ok deleting stale entries
			if now-p.at > pendingTTL {
				delete(s.pending, k)
			}
		}
	}
	if s.master() {
		s.expireSessions()
	}
	s.ready()
	s.node.SetTimer(s.cell.opts.Tick, s.tick)
}

func (s *Server) checkElection() {
	if s.role == raft.StateLeader {
		s.heard()
	} else if s.node.Mono()-s.lastHeard >= s.timeout {
		s.heard()
		if err := s.rn.Campaign(); err != nil {
			panic(fmt.Sprintf("chubby: %s: campaign: %v", s.node.Name(), err))
		}
		s.ready()
	}
	s.node.SetTimer(s.lastHeard+s.timeout-s.node.Mono(), s.checkElection)
}

// master reports whether this replica is the master of a working quorum.
func (s *Server) master() bool {
	if s.role != raft.StateLeader {
		return false
	}
	now, n := s.node.Mono(), 1
	for _, at := range s.peerHeard { // determinism:ok counting
		if now-at < s.cell.opts.ElectionTimeout {
			n++
		}
	}
	return 2*n > len(s.cell.servers)
}

// expireSessions ends, through the log, every session whose lease ran out
// on the master's clock.
func (s *Server) expireSessions() {
	now := s.node.Mono()
	for _, id := range s.state.sessionIDs() {
		at, ok := s.contact[id]
		if !ok {
			s.contacted(id)
			continue
		}
		if now-at > s.cell.opts.Lease && !s.expiring[id] {
			if s.rn.Propose(encodeTxn(txn{Op: "expire", Session: id})) == nil {
				s.expiring[id] = true
			}
		}
	}
}

// contacted notes that the master heard from session now: its lease runs
// for another Lease on the master's clock (and, in the record of grants,
// from now in true time).
func (s *Server) contacted(session int64) {
	s.contact[session] = s.node.Mono()
	if t := s.cell.truth; t.recording() {
		now := s.node.World().Now()
		t.promised(session, s.state.heldBy(session), now, now+s.cell.opts.Lease)
	}
}

// Receive handles raft messages and client requests.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.step(raftnode.Inbound(*body.M))
	case Request:
		s.request(m, body)
	default:
		panic(fmt.Sprintf("chubby: %s: unexpected message %T", n.Name(), m.Body))
	}
}

func (s *Server) step(m pb.Message) {
	switch m.Type {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		if m.Term >= s.term {
			s.heard()
		}
	case pb.MsgAppResp, pb.MsgHeartbeatResp:
		s.peerHeard[m.From] = s.node.Mono()
	}
	if err := s.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) && !errors.Is(err, raft.ErrProposalDropped) {
		panic(fmt.Sprintf("chubby: %s: step %v: %v", s.node.Name(), m.Type, err))
	}
	s.ready()
}

func (s *Server) request(m sim.Message, r Request) {
	if !s.master() {
		s.node.Reply(m, Response{Code: CodeNotMaster, Master: s.lead})
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
	if !s.state.sessions[r.Session] || s.expiring[r.Session] {
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
	k := pendingKey{r.Session, r.Seq}
	s.pending[k] = pending{msg: m, at: s.node.Mono()}
	if err := s.rn.Propose(encodeTxn(x)); err != nil {
		delete(s.pending, k)
		s.node.Reply(m, Response{Code: CodeNotMaster, Master: s.lead})
		return
	}
	s.ready()
}

func (s *Server) ready() {
	raftnode.Drain(s.rn, raftnode.Steps{Persist: s.persist, Send: s.send, Apply: s.apply, Role: s.changeRole})
}

// persist writes a Ready's hard state and entries to the log that survives a
// crash.
func (s *Server) persist(rd raft.Ready) {
	if !raft.IsEmptyHardState(rd.HardState) {
		s.term = rd.HardState.Term
		if err := s.st.SetHardState(rd.HardState); err != nil {
			panic(fmt.Sprintf("chubby: %s: hard state: %v", s.node.Name(), err))
		}
	}
	if err := s.st.Append(rd.Entries); err != nil {
		panic(fmt.Sprintf("chubby: %s: append: %v", s.node.Name(), err))
	}
}

// send sends a raft message to its peer; a vote granted to us counts as
// hearing from the cluster.
func (s *Server) send(m *pb.Message) {
	if m.Type == pb.MsgVoteResp && !m.Reject {
		s.heard()
	}
	s.node.Send(s.cell.nodes[m.To-1].ID(), RaftMessage{M: raftnode.Outbound(m)})
}

func (s *Server) changeRole(ss *raft.SoftState) {
	was := s.role
	s.lead, s.role = ss.Lead, ss.RaftState
	if s.role == raft.StateLeader && was != raft.StateLeader {
		// A new master grants every session a fresh lease (the paper's
		// failover: clients in their grace period reconnect in time), and
		// a whole lock-delay to every lock the log shows freed by an
		// expiry and not granted since: the old master's lock-delay was
		// on its own clock, so this one assumes the longest it could
		// still run, as it does for the sessions' leases (issue 28).
		now := s.node.Mono()
		s.contact, s.expiring, s.delayed = map[int64]time.Duration{}, map[int64]bool{}, map[string]time.Duration{}
		for _, id := range s.state.sessionIDs() {
			s.contacted(id)
		}
		s.cell.delaysOver(s)
		lost := s.state.lostLocks()
		for _, name := range lost {
			s.delay(name, now+s.cell.opts.LockDelay, fmt.Sprintf("elected in term %d, it knows %s freed by a session's expiry and not granted since", s.term, name))
		}
		s.peerHeard = map[uint64]time.Duration{}
		for i := range s.cell.servers {
			if uint64(i+1) != s.id {
				s.peerHeard[uint64(i+1)] = now
			}
		}
		s.cell.masterElected(s, lost)
	}
	if was == raft.StateLeader && s.role != raft.StateLeader {
		s.cell.delaysOver(s) // it no longer grants: its lock-delays hold nothing back
	}
	if s.lead != 0 && s.lead != s.id {
		s.heard()
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
		if d, ok := s.delayed[lock]; ok && d == until && s.role == raft.StateLeader {
			s.cell.delayOver(s, lock)
		}
	})
}

func (s *Server) apply(e *pb.Entry) {
	if e.Type != pb.EntryNormal || len(e.Data) == 0 {
		return
	}
	x := decodeTxn(e.Data)
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
		delete(s.expiring, x.Session)
		delete(s.contact, x.Session)
		if s.role == raft.StateLeader && o.code == CodeOK {
			s.cell.sessionExpired(s, x.Session, o.lost)
			for _, name := range o.lost {
				s.delay(name, s.node.Mono()+s.cell.opts.LockDelay, s.cell.expiredWhy(x.Session))
			}
		}
	}
	if x.Op == "open" && s.role == raft.StateLeader {
		s.contacted(x.Session)
	}
	if x.Origin != s.id {
		return
	}
	k := pendingKey{x.Session, x.Seq}
	p, ok := s.pending[k]
	if !ok {
		return
	}
	delete(s.pending, k)
	s.node.Reply(p.msg, Response{Code: o.code, Sequencer: o.seq})
}
