package raftnode

import (
	"errors"
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/sim"
)

// Log is the part of a replica that survives a crash: its hard state and
// entries, kept as the service's persistence policy keeps them (every write
// durable at once, or only what an fsync reached).
type Log interface {
	// Open returns the raft storage a (re)starting replica reads, and the
	// index of the last entry it may count as applied (the bootstrap
	// snapshot's).
	Open() (raft.Storage, uint64)
	// Write stores a Ready's hard state (unless empty) and entries; the
	// storage Open returned sees them at once. It is called only for a
	// Ready that has either.
	Write(hard pb.HardState, entries []pb.Entry)
	// Crash throws away what the policy does not keep.
	Crash()
}

// Config is what a service tells its replica: how to run raft, and the hooks
// through which the replica reaches the service's persistence, network and
// state machine. Every hook but Apply, Role and Send may be nil.
type Config struct {
	// Service names the service in the replica's panics ("chubby").
	Service string
	// Raft is raft's configuration; the replica fills in Storage and
	// Applied from Log at every start.
	Raft raft.Config
	// Group is the number of voters, whose raft ids are 1..Group.
	Group int
	// Tick is the period at which raft is ticked.
	Tick time.Duration
	// ElectionTimeout is the shortest time without hearing from a leader
	// after which the replica campaigns (each round draws a timeout in
	// [ElectionTimeout, 2*ElectionTimeout) from the node's seeded stream),
	// and the window in which a leader counts a peer as active.
	ElectionTimeout time.Duration
	// InitialLeader makes the replica campaign at once on its first start.
	InitialLeader bool
	// QuiesceFollowers ticks raft only while leading: followers and
	// candidates advance raft's election clock alone (TickQuiesced), which
	// ends a leader's vote lease under CheckQuorum but never campaigns.
	QuiesceFollowers bool
	// RoleFirst tells Role of a batch's role change before its committed
	// entries are applied (see Steps.RoleFirst).
	RoleFirst bool
	// TicksSurviveCrash keeps counting ticks from the first start rather than
	// from the latest: the phase of Purge, which the services that started
	// so keep.
	TicksSurviveCrash bool

	// Log is what survives a crash.
	Log Log
	// Apply applies one committed entry to the state machine.
	Apply func(e *pb.Entry)
	// Role is told of a change of leader or role, after the replica's own
	// (Lead, Role and the leader's view of its peers are already the new
	// ones); was is the role before.
	Role func(was raft.StateType)
	// Send puts m, to replica to, on the network.
	Send func(to uint64, m *pb.Message)
	// Timers sets the service's own timers at every start: after the tick
	// timer and before the election timer, the order in which timers due at
	// the same time fire.
	Timers func()
	// OnTick runs at every tick, after raft ticked and before the batch it
	// made is drained.
	OnTick func()
	// Purge runs every PurgeEvery ticks, before OnTick: the service forgets
	// the reply addresses of proposals its clients have long given up on.
	Purge func()
	// Guard runs each of the replica's timer callbacks (start, tick,
	// election); nil runs them as they are.
	Guard func(fn func())
}

// PurgeEvery is how many ticks apart a replica calls its Purge hook.
const PurgeEvery = 100

// Replica is one member of a raft group run inside the simulator: a plain
// struct the event loop steps. It owns the RawNode and what every service
// built on it does the same way: the restart from the Log, the tick, the
// seeded election timer (etcd raft's own randomized timeout reads a global
// random source, so raft's ElectionTick is set out of reach, or raft only
// quiesces followers, and this timer campaigns), the Ready batches (persist,
// send, apply, role change), and the leader's view of which peers answer.
type Replica struct {
	cfg   Config
	steps Steps
	node  *sim.Node
	rn    *raft.RawNode

	lead  uint64
	role  raft.StateType
	term  uint64
	ticks int

	lastHeard time.Duration // monotonic: the leader's message or a granted vote
	heardAt   time.Duration // true time of lastHeard
	timeout   time.Duration // this round's randomized election timeout
	campaigns int           // campaigns since the replica last heard from a leader
	firstCamp time.Duration // true time of the first of them
	leaderAt  time.Duration // monotonic: the leader's last message
	peerHeard []time.Duration

	// the timer callbacks, built once (a method value allocates each time
	// it is made, and the tick timer is re-armed every tick)
	tickFn, checkFn, campaignFn, tickNowFn, checkNowFn, campaignNowFn func()
	// this incarnation's timers, re-armed rather than set anew (nil until
	// first set)
	tickT, checkT *sim.Timer
}

// NewReplica returns a replica that is not started yet.
func NewReplica(cfg Config) *Replica {
	r := &Replica{cfg: cfg, peerHeard: make([]time.Duration, cfg.Group+1)}
	r.steps = Steps{Persist: r.persist, Send: r.send, Apply: cfg.Apply, Role: r.changeRole, RoleFirst: cfg.RoleFirst}
	r.tickNowFn, r.checkNowFn, r.campaignNowFn = r.tick, r.checkElection, r.campaign
	r.tickFn = func() { r.guard(r.tickNowFn) }
	r.checkFn = func() { r.guard(r.checkNowFn) }
	r.campaignFn = func() { r.guard(r.campaignNowFn) }
	return r
}

// Start (re)builds the replica on n from its Log: a new RawNode over the
// hard state and entries that survived, a follower of no leader, and its
// timers (tick, the service's own, then the election timer, or a campaign at
// once when it is the initial leader's first start). The service resets its
// state machine before: the committed entries replay into it.
func (r *Replica) Start(n *sim.Node) {
	r.node = n
	r.guard(r.start)
}

func (r *Replica) start() {
	n := r.node
	st, applied := r.cfg.Log.Open()
	rc := r.cfg.Raft
	rc.Storage, rc.Applied = st, applied
	rn, err := raft.NewRawNode(&rc)
	if err != nil {
		panic(fmt.Sprintf("%s: %s: new raw node: %v", r.cfg.Service, n.Name(), err))
	}
	hs, _, err := st.InitialState()
	if err != nil {
		panic(fmt.Sprintf("%s: %s: initial state: %v", r.cfg.Service, n.Name(), err))
	}
	r.rn = rn
	r.lead, r.role, r.term = 0, raft.StateFollower, hs.Term
	if !r.cfg.TicksSurviveCrash {
		r.ticks = 0
	}
	r.campaigns = 0
	r.heard()
	r.tickT, r.checkT = nil, nil
	r.rearm(&r.tickT, r.cfg.Tick, r.tickFn)
	if r.cfg.Timers != nil {
		r.cfg.Timers()
	}
	if r.cfg.InitialLeader && n.Incarnation() == 0 {
		n.SetTimer(0, r.campaignFn)
	} else {
		r.rearm(&r.checkT, r.timeout, r.checkFn)
	}
}

// Crash loses everything but what the Log keeps.
func (r *Replica) Crash() {
	r.cfg.Log.Crash()
	r.rn = nil
	r.lead, r.role = 0, raft.StateFollower
}

func (r *Replica) guard(fn func()) {
	if r.cfg.Guard != nil {
		r.cfg.Guard(fn)
		return
	}
	fn()
}

// rearm sets the timer *t of this incarnation to run fn after d: a new timer
// the first time, the same one re-armed after (sim.Timer.Reset orders it
// exactly as a new timer).
func (r *Replica) rearm(t **sim.Timer, d time.Duration, fn func()) {
	if *t == nil {
		*t = r.node.SetTimer(d, fn)
		return
	}
	(*t).Reset(d)
}

// heard resets the election timer: the replica heard from its leader or
// granted a vote. Each reset draws a new randomized timeout from the node's
// stream.
func (r *Replica) heard() {
	e := r.cfg.ElectionTimeout
	r.lastHeard, r.heardAt = r.node.Mono(), r.node.World().Now()
	r.timeout = e + time.Duration(r.node.Rand().Int64N(int64(e)))
	r.campaigns = 0
}

func (r *Replica) tick() {
	if r.cfg.QuiesceFollowers && r.role != raft.StateLeader {
		r.rn.TickQuiesced()
	} else {
		r.rn.Tick()
	}
	r.ticks++
	if r.ticks%PurgeEvery == 0 && r.cfg.Purge != nil {
		r.cfg.Purge()
	}
	if r.cfg.OnTick != nil {
		r.cfg.OnTick()
	}
	r.Drain()
	r.rearm(&r.tickT, r.cfg.Tick, r.tickFn)
}

// checkElection runs when the election timer may have expired: it campaigns
// if the replica has not heard from a leader for its timeout, and re-arms.
func (r *Replica) checkElection() {
	if r.role == raft.StateLeader {
		r.heard()
	} else if r.node.Mono()-r.lastHeard >= r.timeout {
		r.campaign()
		return
	}
	r.rearm(&r.checkT, r.lastHeard+r.timeout-r.node.Mono(), r.checkFn)
}

func (r *Replica) campaign() {
	if r.campaigns == 0 {
		r.firstCamp = r.node.World().Now()
	}
	campaigns, first, heardAt := r.campaigns+1, r.firstCamp, r.heardAt
	r.heard()
	r.campaigns, r.firstCamp, r.heardAt = campaigns, first, heardAt
	if err := r.rn.Campaign(); err != nil {
		panic(fmt.Sprintf("%s: %s: campaign: %v", r.cfg.Service, r.node.Name(), err))
	}
	r.Drain()
	r.rearm(&r.checkT, r.timeout, r.checkFn)
}

// Step hands a raft message from a peer to raft and drains what it made. A
// leader's message of the current term or later resets the election timer;
// a peer's answer counts it active for the leader.
func (r *Replica) Step(m *pb.Message) {
	in := Inbound(*m)
	switch in.Type {
	case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap:
		if in.Term >= r.term {
			r.heard()
			r.leaderAt = r.node.Mono()
		}
	case pb.MsgAppResp, pb.MsgHeartbeatResp:
		if in.From < uint64(len(r.peerHeard)) {
			r.peerHeard[in.From] = r.node.Mono()
		}
	}
	err := r.rn.Step(in)
	if err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) && !errors.Is(err, raft.ErrProposalDropped) {
		panic(fmt.Sprintf("%s: %s: step %v: %v", r.cfg.Service, r.node.Name(), in.Type, err))
	}
	r.Drain()
}

// Propose appends data to raft's log if this replica may (it leads, or
// forwards proposals to its leader); the batch it makes is left for Drain.
func (r *Replica) Propose(data []byte) error { return r.rn.Propose(data) }

// Drain handles every Ready batch raft has: persist, send, apply, role
// change, advance.
func (r *Replica) Drain() { Drain(r.rn, r.steps) }

func (r *Replica) persist(rd raft.Ready) {
	if !raft.IsEmptyHardState(rd.HardState) {
		r.term = rd.HardState.Term
	}
	if rd.Snapshot.Metadata.Index != 0 { // raft.IsEmptySnap, without copying the snapshot
		panic(fmt.Sprintf("%s: %s: unexpected snapshot (the log is never compacted)", r.cfg.Service, r.node.Name()))
	}
	if !raft.IsEmptyHardState(rd.HardState) || len(rd.Entries) > 0 {
		r.cfg.Log.Write(rd.HardState, rd.Entries)
	}
}

// send sends a raft message to its peer; a vote granted counts as hearing
// from the cluster (it gives the candidate time to win).
func (r *Replica) send(m *pb.Message) {
	if m.Type == pb.MsgVoteResp && !m.Reject {
		r.heard()
	}
	r.cfg.Send(m.To, Outbound(m))
}

func (r *Replica) changeRole(ss *raft.SoftState) {
	was := r.role
	r.lead, r.role = ss.Lead, ss.RaftState
	if r.role == raft.StateLeader && was != raft.StateLeader {
		now := r.node.Mono()
		for id := range r.peerHeard {
			r.peerHeard[id] = now // a new leader gives every peer a full window
		}
	}
	r.cfg.Role(was)
	if r.lead != 0 && r.lead != r.cfg.Raft.ID {
		r.heard()
	}
}

// ID is the replica's raft id.
func (r *Replica) ID() uint64 { return r.cfg.Raft.ID }

// Lead is the leader the replica follows (0: none known).
func (r *Replica) Lead() uint64 { return r.lead }

// Role is the replica's role (a follower while it is down).
func (r *Replica) Role() raft.StateType { return r.role }

// Leading reports whether the replica is the leader.
func (r *Replica) Leading() bool { return r.role == raft.StateLeader }

// Term is the latest term the replica has persisted.
func (r *Replica) Term() uint64 { return r.term }

// State is what the replica believes: its role, the leader it follows and
// its term.
func (r *Replica) State() (state raft.StateType, lead, term uint64) { return r.role, r.lead, r.term }

// LeaderAt is when (on the node's monotonic clock) the replica last had a
// message from a leader of its term or later.
func (r *Replica) LeaderAt() time.Duration { return r.leaderAt }

// QuorumActive reports whether the replica leads a working quorum: it heard
// from a majority of the group (itself included) within the election
// timeout.
func (r *Replica) QuorumActive() bool {
	if r.role != raft.StateLeader {
		return false
	}
	now, n := r.node.Mono(), 1
	for id := 1; id < len(r.peerHeard); id++ {
		if uint64(id) != r.cfg.Raft.ID && now-r.peerHeard[id] < r.cfg.ElectionTimeout {
			n++
		}
	}
	return 2*n > r.cfg.Group
}

// Election is how the replica's latest election went, for a leader to
// report when it is elected: how long it campaigned (0 if it never did since
// it last heard from a leader) and how long it had heard from none.
func (r *Replica) Election() (campaigning, silent time.Duration) {
	now := r.node.World().Now()
	if r.campaigns > 0 {
		campaigning = now - r.firstCamp
	}
	return campaigning, now - r.heardAt
}

// Leader returns the index in servers of the up one whose replica leads the
// highest term (the first of them on a tie), and false if none leads.
func Leader[S any](servers []S, replica func(S) *Replica) (int, bool) {
	best, bestTerm := -1, uint64(0)
	for i, s := range servers {
		r := replica(s)
		if r.node == nil || r.node.Down() || r.role != raft.StateLeader {
			continue
		}
		if best < 0 || r.term > bestTerm {
			best, bestTerm = i, r.term
		}
	}
	return best, best >= 0
}

// NeverElectionTick is an ElectionTick raft never reaches: raft does not
// campaign by itself (its randomized timeout reads a global random source),
// the replica's seeded election timer does.
const NeverElectionTick = 1 << 30

// RaftConfig is the raft configuration the services share, for replica id:
// raft never campaigns by itself (NeverElectionTick), a heartbeat every
// tick, up to 1 MiB per message and 256 in flight, and raft's logging
// discarded. A service changes what it does differently.
func RaftConfig(id uint64) raft.Config {
	return raft.Config{ID: id, ElectionTick: NeverElectionTick, HeartbeatTick: 1,
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, Logger: Logger{}}
}

// SessionConfig is the configuration of replica id of a group of n that
// serves client sessions (Chubby's cell, ZooKeeper's ensemble): pre-vote on,
// a log durable at every write (a MemoryLog), ticks counted from the first
// start. The service adds its hooks.
func SessionConfig(service string, id uint64, n int, tick, electionTimeout time.Duration) Config {
	rc := RaftConfig(id)
	rc.PreVote = true
	return Config{
		Service:           service,
		Raft:              rc,
		Group:             n,
		Tick:              tick,
		ElectionTimeout:   electionTimeout,
		TicksSurviveCrash: true,
		Log:               NewMemoryLog(n),
	}
}
