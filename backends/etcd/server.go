package etcd

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

// electionTicks is raft's election timeout in ticks: the election timeout on
// the tick, at least 2 (raft wants it above the heartbeat tick). A leader
// ticks raft: every electionTicks it checks that a quorum was active
// (CheckQuorum) and steps down if not. Followers and candidates only advance
// raft's election clock (TickQuiesced), which ends the leader's vote lease
// (CheckQuorum: no vote for another while the leader was heard within the
// election timeout) but never campaigns: raft's randomized timeout reads
// crypto/rand; the seeded campaign timer campaigns instead.
func electionTicks(o Options) int {
	return max(2, int((o.ElectionTimeout+o.Tick-1)/o.Tick))
}

// expiryCheck is how often the leader looks for expired leases (etcd: 500ms).
const expiryCheck = 500 * time.Millisecond

type watcher struct {
	node   sim.NodeID
	id     uint64
	key    string
	prefix bool
}

// Server is one etcd member: a sim.Handler around a raftnode.Replica over
// its durable log (the WAL), the MVCC Store it applies committed commands
// to, the lessor (expiry times, meaningful on the leader only) and the
// watchers registered with it.
type Server struct {
	cluster *Cluster
	id      uint64
	disk    *disk
	r       *raftnode.Replica

	// volatile state, rebuilt by Start
	node     *sim.Node
	store    *Store
	ready    bool // leader that has applied an entry of its own term
	pending  raftnode.Pending[uint64]
	expiry   map[int64]time.Duration // lease -> expiry on this member's monotonic clock (leader only)
	revoking map[int64]bool
	watchers []*watcher
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

func newServer(c *Cluster, id uint64, d *disk) *Server {
	s := &Server{cluster: c, id: id, disk: d}
	o := c.opts
	rc := raftnode.RaftConfig(id)
	rc.ElectionTick = electionTicks(o) // CheckQuorum's period; campaigns stay the replica's
	rc.PreVote, rc.CheckQuorum, rc.DisableProposalForwarding = true, true, true
	s.r = raftnode.NewReplica(raftnode.Config{
		Service:          "etcd",
		Raft:             rc,
		Group:            o.Members,
		Tick:             o.Tick,
		ElectionTimeout:  o.ElectionTimeout,
		InitialLeader:    MemberName(id) == o.InitialLeader,
		QuiesceFollowers: true,
		RoleFirst:        true,
		Log:              d,
		Apply:            s.apply,
		Role:             s.changeRole,
		Send:             s.send,
		Timers:           func() { s.node.SetTimer(expiryCheck, s.checkExpiry) },
		Purge:            func() { s.pending.Purge(s.node.Mono()) },
	})
	return s
}

// replica is the member's raft replica.
func (s *Server) replica() *raftnode.Replica { return s.r }

// ID is the member's raft id.
func (s *Server) ID() uint64 { return s.id }

// Store is the member's keyspace (nil while it is down).
func (s *Server) Store() *Store { return s.store }

// State is the member's role, the leader it follows and its term.
func (s *Server) State() (state raft.StateType, lead, term uint64) { return s.r.State() }

// Start rebuilds the member from its log: an empty store the committed
// entries replay into, a new replica, and its timers (the lessor's expiry
// check after raft's tick).
func (s *Server) Start(n *sim.Node) {
	s.node = n
	s.store = NewStore()
	s.store.preset(s.cluster.initial)
	s.ready = false
	s.pending, s.expiry, s.revoking, s.watchers = raftnode.Pending[uint64]{}, map[int64]time.Duration{}, map[int64]bool{}, nil
	s.r.Start(n)
}

// Crash loses everything but the log.
func (s *Server) Crash(n *sim.Node) {
	s.r.Crash()
	s.store, s.pending, s.expiry, s.watchers = nil, nil, nil, nil
	s.ready = false
}

// Receive handles raft messages, client requests, keep-alives and watches.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.r.Step(body.M)
	case Request:
		s.request(m, body)
	case KeepAlive:
		s.keepAlive(m, body)
	case WatchReq:
		s.watch(m, body)
	case KVRequest:
		s.kvRequest(m, body)
	case LeaseTTLRequest:
		s.leaseTTL(m, body)
	default:
		panic(fmt.Sprintf("etcd: %s: unexpected message %T", n.Name(), m.Body))
	}
}

func (s *Server) notLeader(m sim.Message) {
	s.node.Reply(m, Response{NotLeader: true, Leader: s.r.Lead(), Member: s.id})
}

// request answers a serializable read locally, and proposes anything else
// if this member leads.
func (s *Server) request(m sim.Message, req Request) {
	if req.Serializable {
		res := s.store.Apply(0, req.Cmd)
		s.cluster.writes.served(s, m, req.Cmd, res)
		s.node.Reply(m, Response{Result: res, Member: s.id})
		return
	}
	if !s.ready {
		s.notLeader(m)
		return
	}
	if req.Cmd.Type == CmdLeaseGrant {
		req.Cmd.Stamp = s.node.Wall() // the grant counts as the first keep-alive
	}
	s.propose(req.Cmd, &m)
}

// propose appends cmd to the log; reply, when set, is answered when the
// entry applies here.
func (s *Server) propose(cmd Command, reply *sim.Message) bool {
	id := s.cluster.remember(cmd)
	data := binary.BigEndian.AppendUint64(nil, id)
	if reply != nil {
		s.pending[id] = raftnode.Request{Msg: *reply, At: s.node.Mono(), Term: s.r.Term()}
		s.cluster.truth.asked(id, clientName(s.node, *reply))
		s.cluster.writes.proposed(id, cmd, s.node, *reply)
	}
	if err := s.r.Propose(data); err != nil {
		delete(s.pending, id)
		if reply != nil {
			s.notLeader(*reply)
		}
		return false
	}
	s.r.Drain()
	return true
}

// keepAlive renews a lease on the leader's lessor; with leader-change-extends
// off it also checkpoints the renewal in the log, stamped with the leader's
// wall clock.
func (s *Server) keepAlive(m sim.Message, ka KeepAlive) {
	if !s.ready {
		s.node.Reply(m, KeepAliveResp{NotLeader: true, Leader: s.r.Lead()})
		return
	}
	ttl, _, _, ok := s.store.LeaseInfo(ka.Lease)
	exp, timed := s.expiry[ka.Lease]
	if !ok || !timed || exp <= s.node.Mono() {
		s.node.Reply(m, KeepAliveResp{}) // gone, or expired and about to be revoked
		return
	}
	s.expiry[ka.Lease] = s.node.Mono() + ttl
	s.cluster.truth.promise(ka.Lease, ttl, s.node.World().Now())
	s.cluster.user.promise(ka.Lease, ttl, s.node.World().Now())
	if !s.cluster.opts.LeaderChangeExtends {
		s.propose(Command{Type: CmdCheckpoint, Lease: ka.Lease, Stamp: s.node.Wall()}, nil)
	}
	s.node.Reply(m, KeepAliveResp{TTL: ttl})
}

// checkExpiry proposes the revocation of every expired lease (leader only).
func (s *Server) checkExpiry() {
	s.node.SetTimer(expiryCheck, s.checkExpiry)
	if !s.ready {
		return
	}
	now := s.node.Mono()
	for _, id := range s.store.LeaseIDs() {
		if exp, ok := s.expiry[id]; ok && exp <= now && !s.revoking[id] {
			s.revoking[id] = true
			s.propose(Command{Type: CmdLeaseRevoke, Lease: id, Expired: true}, nil)
		}
	}
}

// watch registers a watcher (replacing one with the same node and id), sends
// it the events since its revision and acknowledges. Cancel: a WatchReq with
// an empty key.
func (s *Server) watch(m sim.Message, w WatchReq) {
	s.watchers = slices.DeleteFunc(s.watchers, func(x *watcher) bool { return x.node == m.From && x.id == w.ID })
	if w.Key == "" {
		return
	}
	s.watchers = append(s.watchers, &watcher{node: m.From, id: w.ID, key: w.Key, prefix: w.Prefix})
	s.node.Reply(m, WatchAck{Revision: s.store.Revision()})
	if evs := s.store.EventsSince(w.Key, w.Prefix, w.FromRev); len(evs) > 0 {
		s.node.Send(m.From, WatchEvents{ID: w.ID, Events: evs})
	}
}

func (s *Server) notify(evs []Event) {
	for _, w := range s.watchers {
		var mine []Event
		for _, e := range evs {
			if Matches(w.key, w.prefix, e.KV.Key) {
				mine = append(mine, e)
			}
		}
		if len(mine) > 0 {
			s.node.Send(w.node, WatchEvents{ID: w.id, Events: mine})
		}
	}
}

// send puts a raft message on the network to its peer.
func (s *Server) send(to uint64, m *pb.Message) {
	s.node.Send(s.cluster.nodes[to-1].ID(), RaftMessage{M: m})
}

// changeRole starts the lessor of a new leader, and stops a deposed one's.
func (s *Server) changeRole(was raft.StateType) {
	leading := s.r.Leading()
	if leading && was != raft.StateLeader {
		s.promote()
	}
	if !leading {
		s.ready = false
		clear(s.expiry)
		clear(s.revoking)
	}
}

// promote starts the lessor of a new leader. etcd's Promote restarts every
// lease: expiry = now + election timeout + TTL, however long its holder has
// been silent. With leader-change-extends off the keep-alives were
// checkpointed in the log, and each lease keeps the expiry its last
// keep-alive gave it (measured on this leader's wall clock).
func (s *Server) promote() {
	o := s.cluster.opts
	now, wall := s.node.Mono(), s.node.Wall()
	ids := s.store.LeaseIDs()
	var names []string
	for _, id := range ids {
		ttl, renewed, keys, _ := s.store.LeaseInfo(id)
		if o.LeaderChangeExtends {
			s.expiry[id] = now + o.ElectionTimeout + ttl
		} else {
			s.expiry[id] = now + max(0, renewed+ttl-wall)
		}
		names = append(names, fmt.Sprintf("%x%s", id, keyList(keys)))
	}
	if o.LeaderChangeExtends && len(ids) > 0 {
		s.cluster.event(s.node, "lease-extended", fmt.Sprintf("%s became leader in term %d and restarted %d lease(s) "+
			"to election timeout + TTL (%v + %v) from now: %s", s.node.Name(), s.r.Term(), len(ids), o.ElectionTimeout,
			o.EffectiveTTL(), strings.Join(names, ", ")))
	}
}

func keyList(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return " (" + strings.Join(keys, " ") + ")"
}

func (s *Server) apply(e *pb.Entry) {
	if e.Type != pb.EntryNormal || len(e.Data) == 0 {
		if e.Term == s.r.Term() && s.r.Leading() {
			s.ready = true // the empty entry of the new term: everything before it is applied
		}
		return
	}
	id := binary.BigEndian.Uint64(e.Data)
	if op, ok := s.cluster.kvOps[id]; ok {
		s.applyKV(e, id, op)
		return
	}
	cmd := s.cluster.command(id)
	res := s.store.Apply(e.Index, cmd)
	s.cluster.truth.applied(s, e.Index, id, cmd, res.Err, res.Events)
	s.cluster.user.applied(s, e.Index, id, cmd, res.Err, res.Events)
	first := s.cluster.writes.applied(s, e.Index, id, cmd, res)
	if e.Term == s.r.Term() && s.r.Leading() {
		s.ready = true
	}
	switch {
	case cmd.Type == CmdLeaseGrant && s.r.Leading():
		s.expiry[res.Lease] = s.node.Mono() + cmd.TTL
		s.cluster.truth.promise(res.Lease, cmd.TTL, s.node.World().Now())
		s.cluster.user.promise(res.Lease, cmd.TTL, s.node.World().Now())
	case cmd.Type == CmdLeaseRevoke:
		delete(s.expiry, cmd.Lease)
		delete(s.revoking, cmd.Lease)
		if cmd.Expired && res.Err == "" && s.r.Leading() {
			s.cluster.event(s.node, "lease-expired", fmt.Sprintf("%s revoked lease %x, silent for its TTL %v on the "+
				"leader's clock, at revision %d%s", s.node.Name(), cmd.Lease, s.cluster.opts.EffectiveTTL(), res.Revision,
				deletedList(res.Revoked)))
		}
	}
	if len(res.Events) > 0 {
		s.notify(res.Events)
	}
	p, ok := s.pending.Take(id)
	if !ok {
		return
	}
	if p.Term == e.Term {
		if first { // a deposed leader catching up answers late: its client has given up
			s.cluster.writes.served(s, p.Msg, cmd, res)
		}
		s.node.Reply(p.Msg, Response{Result: res, Member: s.id})
	}
}

func deletedList(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return ", deleting " + strings.Join(keys, " ")
}
