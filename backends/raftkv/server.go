package raftkv

import (
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

type pendingKey struct {
	session string
	seq     uint64
}

// Server is one raft node of the lock service: a sim.Handler around a
// raftnode.Replica over its durable Disk, and the lock state machine it
// applies committed commands to.
type Server struct {
	cluster *Cluster
	id      uint64
	disk    *Disk
	r       *raftnode.Replica

	// volatile state, rebuilt by Start
	node    *sim.Node
	fsm     *lockfsm.Machine
	pending raftnode.Pending[pendingKey]

	// the fsync timer's callback, built once, and this incarnation's timer
	fsyncFn func()
	fsyncT  *sim.Timer
	// the command being proposed and its encoding, until the Ready that
	// persists its entry gives it an index (see decoder.proposed)
	proposing     lockfsm.Command
	proposingData []byte
}

var (
	_ sim.Handler = (*Server)(nil)
	_ sim.Crasher = (*Server)(nil)
)

func newServer(c *Cluster, id uint64, d *Disk) *Server {
	s := &Server{cluster: c, id: id, disk: d}
	o := c.opts
	s.fsyncFn = s.fsync
	rc := raftnode.RaftConfig(id) // CheckQuorum off
	rc.HeartbeatTick, rc.PreVote, rc.DisableProposalForwarding = o.HeartbeatTicks, o.PreVote, true
	s.r = raftnode.NewReplica(raftnode.Config{
		Service:         "raftkv",
		Raft:            rc,
		Group:           o.Nodes,
		Tick:            o.Tick,
		ElectionTimeout: o.ElectionTimeout,
		InitialLeader:   NodeName(id) == o.InitialLeader,
		Log:             nodeLog{s},
		Apply:           s.apply,
		Role:            s.changeRole,
		Send:            s.send,
		Timers:          s.timers,
		Purge:           func() { s.pending.Purge(s.node.Mono()) },
		Guard:           s.guard,
	})
	return s
}

// replica is the node's raft replica.
func (s *Server) replica() *raftnode.Replica { return s.r }

// ID is the node's raft id (1-based).
func (s *Server) ID() uint64 { return s.id }

// Disk is the node's durable store.
func (s *Server) Disk() *Disk { return s.disk }

// State is what the node believes: its role, the leader it follows and its term.
func (s *Server) State() (state raft.StateType, lead, term uint64) { return s.r.State() }

// Machine is the node's lock state machine (nil while the node is down).
func (s *Server) Machine() *lockfsm.Machine { return s.fsm }

// Start rebuilds the node from its disk: an empty state machine that the
// committed entries replay into, a new replica over the persisted hard
// state and log, the tick timer, the fsync timer and the campaign timer.
func (s *Server) Start(n *sim.Node) {
	s.node = n
	s.fsm = lockfsm.New(lockfsm.Config{Unlock: s.cluster.opts.Unlock})
	s.pending = raftnode.Pending[pendingKey]{}
	s.r.Start(n)
}

// timers sets this incarnation's fsync timer, with fsync interval.
func (s *Server) timers() {
	s.fsyncT = nil
	if o := s.cluster.opts; o.Fsync == FsyncInterval {
		s.fsyncT = s.node.SetTimer(o.FsyncInterval, s.fsyncFn)
	}
}

// Crash loses the volatile state and whatever the disk had not synced.
func (s *Server) Crash(n *sim.Node) {
	s.r.Crash()
	s.fsm, s.pending = nil, nil
	s.proposing, s.proposingData = lockfsm.Command{}, nil // a proposal the crash interrupted
}

// nodeLog is the node's raftnode.Log: its Disk, which also learns the index
// of the entry being proposed when the Ready that persists it is written.
type nodeLog struct{ s *Server }

// Open returns the disk's view as raft storage.
func (l nodeLog) Open() (raft.Storage, uint64) { return l.s.disk.storage(), l.s.disk.SnapshotIndex() }

// Write writes the Ready's hard state and entries to the disk.
func (l nodeLog) Write(hard pb.HardState, entries []pb.Entry) {
	s := l.s
	s.disk.write(hard, entries)
	if d := s.proposingData; d != nil {
		for i := range entries {
			if e := &entries[i]; len(e.Data) == len(d) && &e.Data[0] == &d[0] {
				s.cluster.decoder.proposed(e.Index, d, s.proposing)
				s.proposingData = nil
				break
			}
		}
	}
}

// Crash throws away what the disk had not synced.
func (l nodeLog) Crash() { l.s.disk.crash() }

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
		msg, ok := r.(raftnode.Panic)
		if !ok {
			panic(r)
		}
		s.cluster.audit.violate("%s: raft panicked at %v and the node went down: %s", s.node.Name(), s.node.World().Now(), string(msg))
		s.node.Crash()
	}()
	fn()
}

func (s *Server) fsync() {
	s.disk.Sync()
	s.fsyncT.Reset(s.cluster.opts.FsyncInterval)
}

// Receive handles raft messages from peers and requests from clients.
func (s *Server) Receive(n *sim.Node, m sim.Message) { s.guard(func() { s.receive(n, m) }) }

func (s *Server) receive(n *sim.Node, m sim.Message) {
	switch body := m.Body.(type) {
	case RaftMessage:
		s.r.Step(body.M)
	case Request:
		s.propose(m, body.Cmd)
	default:
		panic(fmt.Sprintf("raftkv: %s: unexpected message %T", n.Name(), m.Body))
	}
}

// propose stamps a client's command and proposes it, if this node leads.
func (s *Server) propose(m sim.Message, cmd lockfsm.Command) {
	if !s.r.Leading() || cmd.Session == "" {
		s.node.Reply(m, Response{NotLeader: true, Leader: s.r.Lead()})
		return
	}
	if s.cluster.opts.Stamp == StampLeader {
		cmd.Stamp = int64(s.node.Wall())
		s.cluster.truth.stamped(cmd, s.node.World().Nodes()[m.From].Name(), s.node.World().Now())
	}
	data := lockfsm.Encode(cmd)
	if err := s.pending.Propose(s.r, pendingKey{cmd.Session, cmd.Seq}, m, data); err != nil {
		s.node.Reply(m, Response{NotLeader: true, Leader: s.r.Lead()})
		return
	}
	s.proposing, s.proposingData = cmd, data
	s.r.Drain()
	s.proposing, s.proposingData = lockfsm.Command{}, nil
}

// send puts a raft message on the network to its peer.
func (s *Server) send(to uint64, m *pb.Message) {
	s.node.Send(s.cluster.nodes[to-1].ID(), RaftMessage{M: m})
}

// changeRole tells the audit of an election the node won.
func (s *Server) changeRole(was raft.StateType) {
	if s.r.Leading() && was != raft.StateLeader {
		campaign, silent := s.r.Election()
		s.cluster.audit.becameLeader(s.id, s.r.Term(), s.node.World().Now(), campaign, silent)
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
	if !ok || p.Term != e.Term {
		return // not proposed here, or a retry proposed by another leader: that one answers
	}
	delete(s.pending, k)
	resp := Response{Result: res, Node: s.id, Term: e.Term, Index: e.Index}
	if err != nil {
		resp.Invalid = err.Error()
	}
	s.cluster.audit.acked(Ack{Node: s.id, Term: e.Term, Index: e.Index, Session: cmd.Session, Seq: cmd.Seq, At: now})
	s.node.Reply(p.Msg, resp)
}

// Cluster is the group the node belongs to.
func (s *Server) Cluster() *Cluster { return s.cluster }
