package raftkv

import (
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

// neverElectionTick is raft's own election timeout in ticks: so large that
// raft never campaigns by itself (the seeded campaign timer does).
const neverElectionTick = 1 << 30

// pendingTTL is how long a leader keeps the reply address of a proposal that
// has not been applied (after that, the client has long given up).
const pendingTTL = 30 * time.Second

type pendingKey struct {
	session string
	seq     uint64
}

type pendingReq struct {
	msg  sim.Message
	at   time.Duration // node monotonic time of the proposal
	term uint64        // the term this node led when it proposed
}

// Server is one raft node of the lock service: a sim.Handler around an etcd
// raft RawNode, its durable Disk, and the lock state machine it applies
// committed commands to.
type Server struct {
	cluster *Cluster
	id      uint64
	disk    *Disk

	// volatile state, rebuilt by Start
	node      *sim.Node
	st        diskStorage
	rn        *raft.RawNode
	fsm       *lockfsm.Machine
	lead      uint64
	state     raft.StateType
	term      uint64
	pending   map[pendingKey]pendingReq
	lastHeard time.Duration // monotonic
	heardAt   time.Duration // true time of lastHeard
	timeout   time.Duration // this round's randomized election timeout
	campaigns int           // campaigns since the node last heard from a leader
	firstCamp time.Duration // true time of the first of them
	ticks     int

	// the timer callbacks, built once (a method value allocates each time
	// it is made, and the tick timer is re-armed every tick)
	tickFn, fsyncFn, checkFn func()
	// this incarnation's timers, re-armed rather than set anew (nil until
	// first set)
	tickT, fsyncT, checkT *sim.Timer
	// the command being proposed and its encoding, until the Ready that
	// persists its entry gives it an index (see decoder.proposed)
	proposing     lockfsm.Command
	proposingData []byte
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

// ID is the node's raft id (1-based).
func (s *Server) ID() uint64 { return s.id }

// Disk is the node's durable store.
func (s *Server) Disk() *Disk { return s.disk }

// State is what the node believes: its role, the leader it follows and its term.
func (s *Server) State() (state raft.StateType, lead, term uint64) { return s.state, s.lead, s.term }

// Machine is the node's lock state machine (nil while the node is down).
func (s *Server) Machine() *lockfsm.Machine { return s.fsm }

// Start rebuilds the node from its disk: a new RawNode over the persisted
// hard state and log, an empty state machine that the committed entries
// replay into, the tick timer and the campaign timer.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	if s.tickFn == nil {
		s.tickFn, s.fsyncFn, s.checkFn = s.tick, s.fsync, s.checkElection
	}
	s.guard(s.start)
}

func (s *Server) start() {
	o := s.cluster.opts
	n := s.node
	s.st = s.disk.storage()
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        s.id,
		ElectionTick:              neverElectionTick,
		HeartbeatTick:             o.HeartbeatTicks,
		Storage:                   s.st,
		Applied:                   s.disk.SnapshotIndex(),
		MaxSizePerMsg:             1 << 20,
		MaxInflightMsgs:           256,
		CheckQuorum:               false,
		PreVote:                   o.PreVote,
		DisableProposalForwarding: true,
		Logger:                    quietLogger{},
	})
	if err != nil {
		panic(fmt.Sprintf("raftkv: %s: new raw node: %v", n.Name(), err))
	}
	s.rn = rn
	s.fsm = lockfsm.New(lockfsm.Config{Unlock: o.Unlock})
	s.lead, s.state, s.term = 0, raft.StateFollower, s.disk.cache.hard.Term
	s.pending = map[pendingKey]pendingReq{}
	s.ticks, s.campaigns = 0, 0
	s.heard()
	s.tickT, s.fsyncT, s.checkT = nil, nil, nil
	s.rearm(&s.tickT, o.Tick, s.tickFn)
	if o.Fsync == FsyncInterval {
		s.rearm(&s.fsyncT, o.FsyncInterval, s.fsyncFn)
	}
	first := n.Incarnation() == 0 && NodeName(s.id) == o.InitialLeader
	if first {
		n.SetTimer(0, func() { s.guard(s.campaign) })
	} else {
		s.rearm(&s.checkT, s.timeout, s.checkFn)
	}
}

// rearm sets the timer *t of this incarnation to run fn after d: a new timer
// the first time, the same one re-armed after (it is never pending then:
// each of the node's timers is re-armed only by itself firing, or first set
// by Start).
func (s *Server) rearm(t **sim.Timer, d time.Duration, fn func()) {
	if *t == nil {
		*t = s.node.SetTimer(d, fn)
		return
	}
	(*t).Reset(d)
}

// Crash loses the volatile state and whatever the disk had not synced.
func (s *Server) Crash(n *sim.Node) {
	s.disk.crash()
	s.rn, s.st, s.fsm, s.pending = nil, diskStorage{}, nil, nil
	s.lead, s.state = 0, raft.StateFollower
	s.proposing, s.proposingData = lockfsm.Command{}, nil // a proposal the crash interrupted
}

// heard resets the campaign timer: the node heard from its leader or granted
// a vote. Each reset draws a new randomized timeout from the node's stream.
func (s *Server) heard() {
	e := s.cluster.opts.ElectionTimeout
	s.lastHeard, s.heardAt = s.node.Mono(), s.node.World().Now()
	s.timeout = e + time.Duration(s.node.Rand().Int64N(int64(e)))
	s.campaigns = 0
}

// guard runs fn, one of the node's entry points. etcd raft panics when it
// finds its state impossible (a follower whose disk lost acknowledged entries
// without fsync); a real process would die, so the node crashes, stays down,
// and the audit records the breach, instead of the whole run crashing. Other
// panics are bugs and propagate.
func (s *Server) guard(fn func()) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		msg, ok := r.(raftPanic)
		if !ok {
			panic(r)
		}
		s.cluster.audit.violate("%s: raft panicked at %v and the node went down: %s", s.node.Name(), s.node.World().Now(), string(msg))
		s.node.Crash()
	}()
	fn()
}

func (s *Server) tick() { s.guard(s.tickNow) }

func (s *Server) tickNow() {
	s.rn.Tick()
	s.ticks++
	if s.ticks%100 == 0 {
		s.purgePending()
	}
	s.ready()
	s.rearm(&s.tickT, s.cluster.opts.Tick, s.tickFn)
}

func (s *Server) fsync() {
	s.disk.Sync()
	s.rearm(&s.fsyncT, s.cluster.opts.FsyncInterval, s.fsyncFn)
}

// checkElection runs when the campaign timer may have expired: it campaigns
// if the node has not heard from a leader for its timeout, and re-arms.
func (s *Server) checkElection() { s.guard(s.checkElectionNow) }

func (s *Server) checkElectionNow() {
	if s.state == raft.StateLeader {
		s.heard()
	} else if s.node.Mono()-s.lastHeard >= s.timeout {
		s.campaign()
		return
	}
	s.rearm(&s.checkT, s.lastHeard+s.timeout-s.node.Mono(), s.checkFn)
}

func (s *Server) campaign() {
	if s.campaigns == 0 {
		s.firstCamp = s.node.World().Now()
	}
	campaigns, first, heardAt := s.campaigns+1, s.firstCamp, s.heardAt
	s.heard()
	s.campaigns, s.firstCamp, s.heardAt = campaigns, first, heardAt
	if err := s.rn.Campaign(); err != nil {
		panic(fmt.Sprintf("raftkv: %s: campaign: %v", s.node.Name(), err))
	}
	s.ready()
	s.rearm(&s.checkT, s.timeout, s.checkFn)
}

// Receive handles raft messages from peers and requests from clients.
func (s *Server) Receive(n *sim.Node, m sim.Message) { s.guard(func() { s.receive(n, m) }) }

func (s *Server) receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.step(raftnode.Inbound(*body.M))
	case Request:
		s.propose(m, body.Cmd)
	default:
		panic(fmt.Sprintf("raftkv: %s: unexpected message %T", n.Name(), m.Body))
	}
}

func fromLeader(m *pb.Message) bool {
	switch m.Type {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		return true
	}
	return false
}

func (s *Server) step(m pb.Message) {
	if fromLeader(&m) && m.Term >= s.term {
		s.heard()
	}
	if err := s.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		panic(fmt.Sprintf("raftkv: %s: step %v: %v", s.node.Name(), m.Type, err))
	}
	s.ready()
}

// propose stamps a client's command and proposes it, if this node leads.
func (s *Server) propose(m sim.Message, cmd lockfsm.Command) {
	if s.state != raft.StateLeader || cmd.Session == "" {
		s.node.Reply(m, Response{NotLeader: true, Leader: s.lead})
		return
	}
	if s.cluster.opts.Stamp == StampLeader {
		cmd.Stamp = int64(s.node.Wall())
		s.cluster.truth.stamped(cmd, s.node.World().Nodes()[m.From].Name(), s.node.World().Now())
	}
	k := pendingKey{cmd.Session, cmd.Seq}
	s.pending[k] = pendingReq{msg: m, at: s.node.Mono(), term: s.term}
	data := lockfsm.Encode(cmd)
	if err := s.rn.Propose(data); err != nil {
		delete(s.pending, k)
		s.node.Reply(m, Response{NotLeader: true, Leader: s.lead})
		return
	}
	s.proposing, s.proposingData = cmd, data
	s.ready()
	s.proposing, s.proposingData = lockfsm.Command{}, nil
}

func (s *Server) purgePending() {
	now := s.node.Mono()
	for k, p := range s.pending { // determinism:ok deleting stale entries; order cannot matter
		if now-p.at > pendingTTL {
			delete(s.pending, k)
		}
	}
}

// ready processes Ready batches in the documented order: persist, send,
// apply, advance.
func (s *Server) ready() {
	for s.rn.HasReady() {
		rd := s.rn.Ready()
		if !raft.IsEmptyHardState(rd.HardState) {
			s.term = rd.HardState.Term
		}
		if rd.Snapshot.Metadata.Index != 0 { // raft.IsEmptySnap, without copying the snapshot
			panic(fmt.Sprintf("raftkv: %s: unexpected snapshot (the log is never compacted)", s.node.Name()))
		}
		s.persist(&rd)
		for i := range rd.Messages {
			s.send(&rd.Messages[i])
		}
		for i := range rd.CommittedEntries {
			s.apply(&rd.CommittedEntries[i])
		}
		if rd.SoftState != nil {
			s.changeRole(rd.SoftState)
		}
		s.rn.Advance(rd)
	}
}

// persist writes the Ready's hard state and entries to the disk, which is
// also the raft storage the RawNode reads.
func (s *Server) persist(rd *raft.Ready) {
	if raft.IsEmptyHardState(rd.HardState) && len(rd.Entries) == 0 {
		return
	}
	s.disk.write(rd.HardState, rd.Entries)
	if d := s.proposingData; d != nil {
		for i := range rd.Entries {
			if e := &rd.Entries[i]; len(e.Data) == len(d) && &e.Data[0] == &d[0] {
				s.cluster.decoder.proposed(e.Index, d, s.proposing)
				s.proposingData = nil
				break
			}
		}
	}
}

func (s *Server) send(m *pb.Message) {
	if m.Type == pb.MsgVoteResp && !m.Reject {
		s.heard() // granted a vote: give the candidate time to win
	}
	to := s.cluster.nodes[m.To-1]
	s.node.Send(to.ID(), RaftMessage{M: raftnode.Outbound(m)})
}

func (s *Server) changeRole(ss *raft.SoftState) {
	was := s.state
	s.lead, s.state = ss.Lead, ss.RaftState
	if s.state == raft.StateLeader && was != raft.StateLeader {
		now := s.node.World().Now()
		campaign := time.Duration(0)
		if s.campaigns > 0 {
			campaign = now - s.firstCamp
		}
		s.cluster.audit.becameLeader(s.id, s.term, now, campaign, now-s.heardAt)
	}
	if s.lead != 0 && s.lead != s.id {
		s.heard()
	}
}

func (s *Server) apply(e *pb.Entry) {
	if e.Type != pb.EntryNormal || len(e.Data) == 0 {
		return // the empty entry a new leader appends; no configuration changes happen
	}
	now := s.node.World().Now()
	s.cluster.audit.appliedAt(s.id, e.Index, e.Term, e.Data, now)
	cmd, err := s.cluster.decoder.decode(e)
	if err != nil {
		panic(fmt.Sprintf("raftkv: %s: entry %d: %v", s.node.Name(), e.Index, err))
	}
	var prev lockfsm.Owner
	var held bool
	record := s.cluster.truth.first(e.Index, e.Term)
	if record {
		prev, held = s.fsm.Lookup(cmd.Key)
	}
	res, err := s.fsm.Apply(cmd)
	if record && err == nil {
		s.cluster.truth.entry(s.node.Name(), cmd, res, prev, held, now)
	}
	k := pendingKey{cmd.Session, cmd.Seq}
	p, ok := s.pending[k]
	if !ok || p.term != e.Term {
		return // not proposed here, or a retry proposed by another leader: that one answers
	}
	delete(s.pending, k)
	resp := Response{Result: res, Node: s.id, Term: e.Term, Index: e.Index}
	if err != nil {
		resp.Invalid = err.Error()
	}
	s.cluster.audit.acked(Ack{Node: s.id, Term: e.Term, Index: e.Index, Session: cmd.Session, Seq: cmd.Seq, At: now})
	s.node.Reply(p.msg, resp)
}

// Cluster is the group the node belongs to.
func (s *Server) Cluster() *Cluster { return s.cluster }
