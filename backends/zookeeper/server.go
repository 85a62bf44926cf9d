package zookeeper

import (
	"fmt"
	"path"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

type pendingKey struct {
	session int64
	xid     uint64
}

type watcher struct {
	client sim.NodeID
}

// Server is one ZooKeeper server: the atomic broadcast (a raftnode.Replica,
// etcd raft standing in for ZAB), the data tree it applies committed
// transactions to, the sessions it tracks when it leads, and the watches of
// its clients.
type Server struct {
	ens *Ensemble
	id  uint64
	r   *raftnode.Replica // its transaction log survives a crash (ZooKeeper fsyncs before acking)

	node    *sim.Node
	tree    *tree
	leases  raftnode.SessionLeases // leader: the sessions' timeouts, from their last contact
	pending raftnode.Pending[pendingKey]
	dataW   map[string][]watcher
	childW  map[string][]watcher
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

func newServer(e *Ensemble, id uint64) *Server {
	s := &Server{ens: e, id: id}
	cfg := raftnode.SessionConfig("zookeeper", id, e.opts.Servers, e.opts.Tick, e.opts.ElectionTimeout)
	cfg.Apply, cfg.Role, cfg.Send, cfg.OnTick = s.apply, s.changeRole, s.send, s.tick
	cfg.Purge = func() { s.pending.Purge(s.node.Mono()) }
	s.r = raftnode.NewReplica(cfg)
	s.leases = raftnode.SessionLeases{
		Timeout: func(id int64) time.Duration { return s.tree.sessions[id] },
		Propose: func(id int64) error { return s.r.Propose(encodeTxn(txn{Op: "close", Session: id, Expired: true})) },
	}
	return s
}

// replica is the server's raft replica.
func (s *Server) replica() *raftnode.Replica { return s.r }

// Start (re)builds the server from its log: the tree is replayed from the
// committed transactions.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	s.tree = newTree()
	s.leases.Reset()
	s.pending = raftnode.Pending[pendingKey]{}
	s.dataW, s.childW = map[string][]watcher{}, map[string][]watcher{}
	s.r.Start(n)
}

// Crash loses everything but the log.
func (s *Server) Crash(*sim.Node) {
	s.r.Crash()
	s.tree, s.pending = nil, nil
	s.leases.Reset()
}

// tick lets a serving leader close the sessions that timed out.
func (s *Server) tick() {
	if s.r.Leading() && s.serving() {
		s.leases.Expire(s.node.Mono(), s.tree.sessionIDs())
	}
}

// serving reports whether the server is part of a working quorum: a leader
// that heard from a majority within the election timeout, or a follower that
// heard from its leader. Otherwise it closes its clients' connections.
func (s *Server) serving() bool {
	if s.r.Leading() {
		return s.r.QuorumActive()
	}
	return s.r.Role() == raft.StateFollower && s.r.Lead() != 0 && s.node.Mono()-s.r.LeaderAt() < s.ens.opts.ElectionTimeout
}

// Receive handles raft messages, touches and client requests.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.r.Step(body.M)
	case Touch:
		if s.r.Leading() {
			s.contacted(body.Session)
		}
	case Request:
		s.request(m, body)
	case APIRequest:
		s.apiRequest(m, body)
	default:
		panic(fmt.Sprintf("zookeeper: %s: unexpected message %T", n.Name(), m.Body))
	}
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
	case OpGetChildren, OpExists:
		switch n := s.read(m, r.Op, r.Path, r.Watch); {
		case n == nil:
			s.reply(m, Response{Code: CodeNoNode})
		case r.Op == OpGetChildren:
			s.reply(m, Response{Code: CodeOK, Children: slices.Clone(n.children), Stat: n.stat})
		default:
			s.reply(m, Response{Code: CodeOK, Stat: n.stat})
		}
	default:
		panic(fmt.Sprintf("zookeeper: %s: unknown op %q", s.node.Name(), r.Op))
	}
}

// read is the node a read (op: exists, getData or getChildren) of m's
// sender asks for, nil when there is none, and sets the watch the read asks
// for: a child watch on the node, a data watch on the node, or (exists) a
// data watch whether or not the node exists, which its creation fires.
func (s *Server) read(m sim.Message, op Op, path string, watch bool) *znode {
	n, ok := s.tree.nodes[path]
	switch {
	case !watch || (!ok && op != OpExists):
	case op == OpGetChildren:
		s.childW[path] = addWatcher(s.childW[path], m.From)
	default:
		s.dataW[path] = addWatcher(s.dataW[path], m.From)
	}
	if !ok {
		return nil
	}
	return n
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
	s.leases.Heard(session, s.node.Mono())
	if !s.leases.Expiring(session) && s.serving() && s.ens.Leader() == s.node {
		s.ens.contacted(s, session)
	}
}

// touch records a client's contact with the leader (relayed by a follower).
func (s *Server) touch(session int64) {
	if s.r.Leading() {
		s.contacted(session)
		return
	}
	if lead := s.r.Lead(); lead != 0 {
		s.node.Send(s.ens.nodes[lead-1].ID(), Touch{Session: session})
	}
}

func (s *Server) propose(m sim.Message, r Request, x txn) {
	if !s.submit(m, r.Session, r.Xid, x) {
		s.reply(m, Response{Code: CodeNotReady})
	}
}

// submit proposes x, the transaction of the request (session, xid) m
// carries, to be answered when it applies; false when the server could not
// propose it (it is not the leader of a working quorum).
func (s *Server) submit(m sim.Message, session int64, xid uint64, x txn) bool {
	x.Origin, x.Xid = s.id, xid
	if err := s.pending.Propose(s.r, pendingKey{session, xid}, m, encodeTxn(x)); err != nil {
		return false
	}
	s.r.Drain()
	return true
}

// send puts a raft message on the network to its peer.
func (s *Server) send(to uint64, m *pb.Message) {
	s.node.Send(s.ens.nodes[to-1].ID(), RaftMessage{M: m})
}

// changeRole re-arms every session's timeout on a new leader, as ZooKeeper
// does.
func (s *Server) changeRole(was raft.StateType) {
	if s.r.Leading() && was != raft.StateLeader {
		s.leases.Restart(s.node.Mono(), s.tree.sessionIDs())
		s.ens.leaderElected(s, s.r.Term())
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
		s.leases.Ended(x.Session)
		if x.Expired && c.code == CodeOK && s.r.Leading() {
			s.ens.sessionExpired(s, x.Session, c.deleted)
		}
	}
	if x.Op == "session" && s.r.Leading() {
		s.contacted(x.Session)
	}
	s.fire(c)
	if x.Origin != s.id {
		return
	}
	p, ok := s.pending.Take(pendingKey{x.Session, x.Xid})
	if !ok {
		return
	}
	if x.API {
		s.answerAPI(p.Msg, x, c)
		return
	}
	s.reply(p.Msg, Response{Code: c.code, Path: c.path, Stat: c.stat})
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
		send(s.childW, p, "deleted") // only the generic API watches the children of a node that goes
		send(s.childW, path.Dir(p), "children")
	}
	for _, p := range c.changed {
		send(s.dataW, p, "changed")
	}
}

// Ensemble is the ensemble the server belongs to.
func (s *Server) Ensemble() *Ensemble { return s.ens }

// encodeTxn renders a log entry.
func encodeTxn(t txn) []byte { return raftnode.EncodeJSON("zookeeper", t) }

// decodeTxn reads a log entry encodeTxn rendered.
func decodeTxn(b []byte) txn { return raftnode.DecodeJSON[txn]("zookeeper", b) }
