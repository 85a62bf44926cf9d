package zookeeper

import (
	"errors"
	"fmt"
	"github.com/locklab/locklab/backends/raftnode"
	"path"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/sim"
)

// neverElectionTick keeps etcd raft from campaigning by itself (its
// randomized timeout reads a global random source): the seeded election
// timer of the server campaigns instead.
const neverElectionTick = 1 << 30

// pendingTTL is how long a server keeps the reply address of a request it
// proposed (the client has long given up after that).
const pendingTTL = 30 * time.Second

type pendingKey struct {
	session int64
	xid     uint64
}

type pending struct {
	msg sim.Message
	at  time.Duration
}

type watcher struct {
	client sim.NodeID
}

// Server is one ZooKeeper server: the atomic broadcast (etcd raft, standing
// in for ZAB), the data tree it applies committed transactions to, the
// sessions it tracks when it leads, and the watches of its clients.
type Server struct {
	ens *Ensemble
	id  uint64
	st  *raft.MemoryStorage // the transaction log: survives a crash (ZooKeeper fsyncs before acking)

	node      *sim.Node
	rn        *raft.RawNode
	tree      *tree
	lead      uint64
	state     raft.StateType
	term      uint64
	lastHeard time.Duration // election timer: reset by the leader's messages and granted votes
	fromLead  time.Duration // the leader's last message
	timeout   time.Duration
	peerHeard map[uint64]time.Duration
	contact   map[int64]time.Duration // leader: session -> last contact (monotonic)
	expiring  map[int64]bool
	pending   map[pendingKey]pending
	dataW     map[string][]watcher
	childW    map[string][]watcher
	ticks     int
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

// Start (re)builds the server from its log: the tree is replayed from the
// committed transactions.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	if s.st == nil {
		s.st = raft.NewMemoryStorage()
		voters := make([]uint64, len(s.ens.servers))
		for i := range voters {
			voters[i] = uint64(i + 1)
		}
		snap := pb.Snapshot{Metadata: pb.SnapshotMetadata{ConfState: pb.ConfState{Voters: voters}, Index: 1, Term: 1}}
		if err := s.st.ApplySnapshot(snap); err != nil {
			panic(fmt.Sprintf("zookeeper: %s: bootstrap: %v", n.Name(), err))
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{ID: s.id, ElectionTick: neverElectionTick, HeartbeatTick: 1,
		Storage: s.st, Applied: 1, PreVote: true, MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, Logger: quietLogger{}})
	if err != nil {
		panic(fmt.Sprintf("zookeeper: %s: new raw node: %v", n.Name(), err))
	}
	s.rn, s.tree = rn, newTree()
	hs, _, _ := s.st.InitialState()
	s.lead, s.state, s.term = 0, raft.StateFollower, hs.Term
	s.peerHeard, s.contact, s.expiring = map[uint64]time.Duration{}, map[int64]time.Duration{}, map[int64]bool{}
	s.pending = map[pendingKey]pending{}
	s.dataW, s.childW = map[string][]watcher{}, map[string][]watcher{}
	s.heard()
	n.SetTimer(s.ens.opts.Tick, s.tick)
	n.SetTimer(s.timeout, s.checkElection)
}

// Crash loses everything but the log.
func (s *Server) Crash(*sim.Node) {
	s.rn, s.tree, s.pending, s.contact = nil, nil, nil, nil
	s.lead, s.state = 0, raft.StateFollower
}

func (s *Server) heard() {
	e := s.ens.opts.ElectionTimeout
	s.lastHeard = s.node.Mono()
	s.timeout = e + time.Duration(s.node.Rand().Int64N(int64(e)))
}

func (s *Server) tick() {
	s.rn.Tick()
	s.ticks++
	if s.ticks%100 == 0 {
		s.purgePending()
	}
	if s.state == raft.StateLeader && s.serving() {
		s.expireSessions()
	}
	s.ready()
	s.node.SetTimer(s.ens.opts.Tick, s.tick)
}

func (s *Server) checkElection() {
	if s.state == raft.StateLeader {
		s.heard()
	} else if s.node.Mono()-s.lastHeard >= s.timeout {
		s.heard()
		if err := s.rn.Campaign(); err != nil {
			panic(fmt.Sprintf("zookeeper: %s: campaign: %v", s.node.Name(), err))
		}
		s.ready()
	}
	s.node.SetTimer(s.lastHeard+s.timeout-s.node.Mono(), s.checkElection)
}

// serving reports whether the server is part of a working quorum: a leader
// that heard from a majority within the election timeout, or a follower that
// heard from its leader. Otherwise it closes its clients' connections.
func (s *Server) serving() bool {
	now, e := s.node.Mono(), s.ens.opts.ElectionTimeout
	if s.state == raft.StateLeader {
		n := 1
		for _, at := range s.peerHeard { // determinism:ok counting
			if now-at < e {
				n++
			}
		}
		return 2*n > len(s.ens.servers)
	}
	return s.state == raft.StateFollower && s.lead != 0 && now-s.fromLead < e
}

// expireSessions closes, through the log, every session the leader has not
// heard from for its timeout (on the leader's own clock).
func (s *Server) expireSessions() {
	now := s.node.Mono()
	for _, id := range s.tree.sessionIDs() {
		at, ok := s.contact[id]
		if !ok {
			s.contact[id] = now
			continue
		}
		if now-at > s.tree.sessions[id] && !s.expiring[id] {
			if s.rn.Propose(encodeTxn(txn{Op: "close", Session: id, Expired: true})) == nil {
				s.expiring[id] = true
			}
		}
	}
}

// Receive handles raft messages, touches and client requests.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.step(raftnode.Inbound(*body.M))
	case Touch:
		if s.state == raft.StateLeader {
			s.contacted(body.Session)
		}
	case Request:
		s.request(m, body)
	default:
		panic(fmt.Sprintf("zookeeper: %s: unexpected message %T", n.Name(), m.Body))
	}
}

func (s *Server) step(m pb.Message) {
	switch m.Type {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		if m.Term >= s.term {
			s.heard()
			s.fromLead = s.node.Mono()
		}
	case pb.MsgAppResp, pb.MsgHeartbeatResp:
		s.peerHeard[m.From] = s.node.Mono()
	}
	if err := s.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) && !errors.Is(err, raft.ErrProposalDropped) {
		panic(fmt.Sprintf("zookeeper: %s: step %v: %v", s.node.Name(), m.Type, err))
	}
	s.ready()
}

func (s *Server) reply(m sim.Message, r Response) {
	r.Zxid = s.tree.zxid
	s.node.Reply(m, r)
}

func (s *Server) request(m sim.Message, r Request) {
	if r.Op == OpConnect && r.Until > 0 && s.node.World().Now() > r.Until {
		return // the client closed this attempt's socket: its connect never came
	}
	if !s.serving() {
		s.reply(m, Response{Code: CodeNotReady})
		return
	}
	_, live := s.tree.sessions[r.Session]
	switch {
	case r.Op == OpConnect && r.New:
		s.propose(m, r, txn{Op: "session", Session: r.Session, Timeout: r.Timeout})
		return
	case !live:
		s.reply(m, Response{Code: CodeExpired})
		return
	}
	s.touch(r.Session)
	switch r.Op {
	case OpConnect, OpPing:
		s.reply(m, Response{Code: CodeOK})
	case OpCreate:
		s.propose(m, r, txn{Op: "create", Session: r.Session, Path: r.Path, Ephemeral: r.Ephemeral, Sequential: r.Sequential})
	case OpDelete:
		s.propose(m, r, txn{Op: "delete", Session: r.Session, Path: r.Path})
	case OpSync:
		s.propose(m, r, txn{Op: "sync", Session: r.Session})
	case OpGetChildren:
		n, ok := s.tree.nodes[r.Path]
		if !ok {
			s.reply(m, Response{Code: CodeNoNode})
			return
		}
		if r.Watch {
			s.childW[r.Path] = addWatcher(s.childW[r.Path], m.From)
		}
		s.reply(m, Response{Code: CodeOK, Children: slices.Clone(n.children), Stat: n.stat})
	case OpExists:
		if r.Watch {
			s.dataW[r.Path] = addWatcher(s.dataW[r.Path], m.From)
		}
		n, ok := s.tree.nodes[r.Path]
		if !ok {
			s.reply(m, Response{Code: CodeNoNode})
			return
		}
		s.reply(m, Response{Code: CodeOK, Stat: n.stat})
	default:
		panic(fmt.Sprintf("zookeeper: %s: unknown op %q", s.node.Name(), r.Op))
	}
}

func addWatcher(ws []watcher, c sim.NodeID) []watcher {
	if slices.Contains(ws, watcher{c}) {
		return ws
	}
	return append(ws, watcher{c})
}

// contacted notes, on the leader, a client's contact with session: its
// timeout starts again.
func (s *Server) contacted(session int64) {
	s.contact[session] = s.node.Mono()
	if !s.expiring[session] && s.serving() && s.ens.Leader() == s.node {
		s.ens.contacted(s, session)
	}
}

// touch records a client's contact with the leader (relayed by a follower).
func (s *Server) touch(session int64) {
	if s.state == raft.StateLeader {
		s.contacted(session)
		return
	}
	if s.lead != 0 {
		s.node.Send(s.ens.nodes[s.lead-1].ID(), Touch{Session: session})
	}
}

func (s *Server) propose(m sim.Message, r Request, x txn) {
	x.Origin, x.Xid = s.id, r.Xid
	k := pendingKey{r.Session, r.Xid}
	s.pending[k] = pending{msg: m, at: s.node.Mono()}
	if err := s.rn.Propose(encodeTxn(x)); err != nil {
		delete(s.pending, k)
		s.reply(m, Response{Code: CodeNotReady})
		return
	}
	s.ready()
}

func (s *Server) purgePending() {
	now := s.node.Mono()
	for k, p := range s.pending { // determinism:ok deleting stale entries; order cannot matter
		if now-p.at > pendingTTL {
			delete(s.pending, k)
		}
	}
}

// ready handles raft's Ready batches: persist, send, apply, advance.
func (s *Server) ready() {
	raftnode.Drain(s.rn, raftnode.Steps{Persist: s.persist, Send: s.send, Apply: s.apply, Role: s.changeRole})
}

// persist writes a Ready's hard state and entries to the log that survives a
// crash.
func (s *Server) persist(rd *raft.Ready) {
	if !raft.IsEmptyHardState(rd.HardState) {
		s.term = rd.HardState.Term
		if err := s.st.SetHardState(rd.HardState); err != nil {
			panic(fmt.Sprintf("zookeeper: %s: hard state: %v", s.node.Name(), err))
		}
	}
	if err := s.st.Append(rd.Entries); err != nil {
		panic(fmt.Sprintf("zookeeper: %s: append: %v", s.node.Name(), err))
	}
}

// send sends a raft message to its peer; a vote granted to us counts as
// hearing from the cluster.
func (s *Server) send(m *pb.Message) {
	if m.Type == pb.MsgVoteResp && !m.Reject {
		s.heard()
	}
	s.node.Send(s.ens.nodes[m.To-1].ID(), RaftMessage{M: raftnode.Outbound(m)})
}

func (s *Server) changeRole(ss *raft.SoftState) {
	was := s.state
	s.lead, s.state = ss.Lead, ss.RaftState
	if s.state == raft.StateLeader && was != raft.StateLeader {
		// A new leader re-arms every session's timeout, as ZooKeeper does.
		now := s.node.Mono()
		s.contact, s.expiring = map[int64]time.Duration{}, map[int64]bool{}
		for _, id := range s.tree.sessionIDs() {
			s.contact[id] = now
		}
		s.peerHeard = map[uint64]time.Duration{}
		for i := range s.ens.servers {
			if uint64(i+1) != s.id {
				s.peerHeard[uint64(i+1)] = now
			}
		}
		s.ens.leaderElected(s, s.term)
	}
	if s.lead != 0 && s.lead != s.id {
		s.heard()
	}
}

func (s *Server) apply(e *pb.Entry) {
	if e.Type != pb.EntryNormal || len(e.Data) == 0 {
		return
	}
	zxid := e.Term<<32 | e.Index
	x := decodeTxn(e.Data)
	c := s.tree.apply(x, zxid)
	s.ens.applied(s, x, c, zxid)
	if x.Op == "close" {
		delete(s.expiring, x.Session)
		delete(s.contact, x.Session)
		if x.Expired && c.code == CodeOK && s.state == raft.StateLeader {
			s.ens.sessionExpired(s, x.Session, c.deleted)
		}
	}
	if x.Op == "session" && s.state == raft.StateLeader {
		s.contacted(x.Session)
	}
	s.fire(c)
	if x.Origin != s.id {
		return
	}
	k := pendingKey{x.Session, x.Xid}
	p, ok := s.pending[k]
	if !ok {
		return
	}
	delete(s.pending, k)
	s.reply(p.msg, Response{Code: c.code, Path: c.path, Stat: c.stat})
}

// fire sends the one-shot watches a change triggers, in the order of the change.
func (s *Server) fire(c change) {
	send := func(ws map[string][]watcher, p, typ string) {
		for _, w := range ws[p] {
			s.node.Send(w.client, WatchEvent{Type: typ, Path: p, Zxid: s.tree.zxid})
		}
		delete(ws, p)
	}
	for _, p := range c.created {
		send(s.dataW, p, "created")
		send(s.childW, path.Dir(p), "children")
	}
	for _, p := range c.deleted {
		send(s.dataW, p, "deleted")
		send(s.childW, path.Dir(p), "children")
	}
}

// Ensemble is the ensemble the server belongs to.
func (s *Server) Ensemble() *Ensemble { return s.ens }
