package redis

import (
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/sim"
)

// Asynchronous replication, as Redis does it: the primary executes a command,
// answers the client, and streams the change to its replicas; nothing waits for
// them unless the client asks with WAIT. Replicas report the offset they have
// applied; a replica that fell behind gets the missing entries again, and one
// that follows another stream (it was reconfigured, or restarted) gets a full
// snapshot.

// AckInterval is how often a replica reports its offset to its primary.
const AckInterval = 100 * time.Millisecond

// backlogMax bounds the entries a primary keeps for partial resynchronisation.
const backlogMax = 10000

// snapshotEvery bounds how often a primary sends a full snapshot to one replica.
const snapshotEvery = time.Second

// Entry is one replicated change: the client command as the primary executed
// it, and the primary's expiry-clock reading at that moment, so that TTLs are
// the same absolute times on every copy (as Redis 7 propagates PXAT).
type Entry struct {
	Offset int64
	Cmd    any
	At     time.Duration
}

// Replicate carries changes of stream ReplID from a primary to a replica, in
// offset order.
type Replicate struct {
	ReplID  string
	Entries []Entry
}

// Snapshot is a full resynchronisation: the primary's keyspace at Offset.
type Snapshot struct {
	ReplID string
	Offset int64
	Data   *Keyspace
}

// ReplAck is a replica's report to its primary: it has applied stream ReplID up
// to Offset. Gap says it dropped entries that came out of order.
type ReplAck struct {
	ReplID string
	Offset int64
	Gap    bool
}

// Wait is WAIT numreplicas timeout: the primary answers once N replicas have
// acknowledged the client's last write, or after Timeout on its monotonic
// clock, with Reply.Int the number that did (Reply.OK when it reached N).
type Wait struct {
	N       int
	Timeout time.Duration
}

// Ping asks an instance for its replication state (a Pong, sent back).
type Ping struct{}

// Pong is an instance's replication state, as the monitor sees it.
type Pong struct {
	Role    Role
	Primary sim.NodeID // for a replica
	Epoch   uint64
	ReplID  string
	Offset  int64
}

// Promote makes a replica the primary of config epoch Epoch (REPLICAOF NO ONE).
type Promote struct{ Epoch uint64 }

// ReplicaOf makes an instance a replica of Primary under config epoch Epoch;
// it discards its data and resynchronises.
type ReplicaOf struct {
	Primary sim.NodeID
	Epoch   uint64
}

// replState is an instance's volatile replication state.
type replState struct {
	replID string
	offset int64
	// primary side
	log          []Entry // entries after logBase
	logBase      int64
	replicas     []*replicaInfo // sorted by node
	clientOffset map[sim.NodeID]int64
	waiters      []*waiter
	// replica side
	gap bool
}

type replicaInfo struct {
	node         sim.NodeID
	replID       string // the stream it last acknowledged
	acked        int64
	snapshotSent time.Duration // monotonic; 0 = never
}

type waiter struct {
	req    sim.Message
	n      int
	target int64
	done   bool
}

// startReplication resets the volatile replication state after a (re)start.
func (s *Server) startReplication(n *sim.Node) {
	s.repl = replState{clientOffset: map[sim.NodeID]int64{}}
	if s.role == RolePrimary {
		s.repl.replID = fmt.Sprintf("%s/%d/%d", n.Name(), n.Incarnation(), s.epoch)
		return
	}
	s.repl.gap = true
	s.tickAcks(n)
}

// tickAcks sends a replica's periodic ack while it is a replica.
func (s *Server) tickAcks(n *sim.Node) {
	if s.acking {
		s.sendAck(n)
		return
	}
	s.acking = true
	var tick func()
	tick = func() {
		if s.role != RoleReplica {
			s.acking = false
			return
		}
		s.sendAck(n)
		n.SetTimer(AckInterval, tick)
	}
	tick()
}

func (s *Server) sendAck(n *sim.Node) {
	n.Send(s.primary, ReplAck{ReplID: s.repl.replID, Offset: s.repl.offset, Gap: s.repl.gap})
}

// receiveControl handles replication and monitor messages; it reports false
// for client commands.
func (s *Server) receiveControl(n *sim.Node, m sim.Message) bool {
	switch b := m.Body.(type) {
	case Replicate:
		if s.role == RoleReplica && m.From == s.primary {
			s.applyEntries(n, b)
		}
	case Snapshot:
		if s.role == RoleReplica && m.From == s.primary {
			s.data = b.Data.Clone()
			s.repl.replID, s.repl.offset, s.repl.gap = b.ReplID, b.Offset, false
			s.persist()
			s.sendAck(n)
		}
	case ReplAck:
		if s.role == RolePrimary {
			s.ack(n, m.From, b)
		}
	case Ping:
		n.Send(m.From, s.pong())
	case Promote:
		if b.Epoch >= s.epoch && s.role != RolePrimary {
			s.promote(n, b.Epoch)
		}
		n.Send(m.From, s.pong())
	case ReplicaOf:
		if b.Epoch >= s.epoch && (s.role != RoleReplica || s.primary != b.Primary) {
			s.follow(n, b.Primary, b.Epoch)
		}
		n.Send(m.From, s.pong())
	default:
		return false
	}
	return true
}

func (s *Server) pong() Pong {
	return Pong{Role: s.role, Primary: s.primary, Epoch: s.epoch, ReplID: s.repl.replID, Offset: s.repl.offset}
}

func (s *Server) applyEntries(n *sim.Node, r Replicate) {
	if r.ReplID != s.repl.replID {
		s.repl.gap = true // another stream: wait for the snapshot
		return
	}
	progressed := false
	for _, e := range r.Entries {
		if e.Offset <= s.repl.offset {
			continue
		}
		if e.Offset != s.repl.offset+1 {
			s.repl.gap = true
			break
		}
		s.data.Apply(e.Cmd, e.At)
		s.repl.offset = e.Offset
		s.repl.gap = false
		progressed = true
		s.persist()
	}
	if progressed || s.repl.gap {
		s.sendAck(n)
	}
}

// propagate streams a change the primary made for client from.
func (s *Server) propagate(n *sim.Node, from sim.NodeID, cmd any, at time.Duration) {
	st := &s.repl
	st.offset++
	e := Entry{Offset: st.offset, Cmd: cmd, At: at}
	if len(st.replicas) == 0 {
		// No replica has synchronised with this stream, so none can ask for
		// a partial resynchronisation (a replica learns the stream's ID only
		// from this primary's snapshot, sent after it became one of
		// st.replicas): keep no backlog. The first replica gets a snapshot
		// of this offset and entries from here on.
		st.logBase = st.offset
		st.clientOffset[from] = st.offset
		return
	}
	st.log = append(st.log, e)
	if len(st.log) > backlogMax {
		drop := len(st.log) - backlogMax
		st.logBase += int64(drop)
		st.log = slices.Delete(st.log, 0, drop)
	}
	st.clientOffset[from] = st.offset
	for _, r := range st.replicas {
		if r.replID == st.replID {
			n.Send(r.node, Replicate{ReplID: st.replID, Entries: []Entry{e}})
		}
	}
}

func (s *Server) replica(node sim.NodeID) *replicaInfo {
	i, found := slices.BinarySearchFunc(s.repl.replicas, node, func(r *replicaInfo, id sim.NodeID) int { return int(r.node) - int(id) })
	if !found {
		s.repl.replicas = slices.Insert(s.repl.replicas, i, &replicaInfo{node: node})
	}
	return s.repl.replicas[i]
}

// ack handles a replica's report: it resends what the replica misses, a
// snapshot if it follows another stream, and settles WAITs.
func (s *Server) ack(n *sim.Node, from sim.NodeID, a ReplAck) {
	st := &s.repl
	r := s.replica(from)
	switch {
	case a.ReplID != st.replID || a.Offset > st.offset || a.Offset < st.logBase:
		r.replID, r.acked = "", 0
		if r.snapshotSent == 0 || n.Mono()-r.snapshotSent >= snapshotEvery {
			r.snapshotSent = n.Mono()
			n.Send(from, Snapshot{ReplID: st.replID, Offset: st.offset, Data: s.data.Clone()})
		}
		return
	case a.Offset < st.offset && (a.Gap || a.Offset == r.acked):
		// No progress since its last report (or a gap): send the rest again.
		n.Send(from, Replicate{ReplID: st.replID, Entries: slices.Clone(st.log[a.Offset-st.logBase:])})
	}
	r.replID, r.acked = a.ReplID, a.Offset
	s.settleWaiters(n)
}

// acked counts the replicas that have acknowledged offset target.
func (s *Server) acked(target int64) int {
	count := 0
	for _, r := range s.repl.replicas {
		if r.replID == s.repl.replID && r.acked >= target {
			count++
		}
	}
	return count
}

func (s *Server) wait(n *sim.Node, m sim.Message, w Wait) {
	target := s.repl.clientOffset[m.From]
	if count := s.acked(target); count >= w.N {
		n.Reply(m, Reply{OK: true, Int: int64(count)})
		return
	}
	wt := &waiter{req: m, n: w.N, target: target}
	s.repl.waiters = append(s.repl.waiters, wt)
	n.SetTimer(w.Timeout, func() { s.finishWait(n, wt) })
}

func (s *Server) finishWait(n *sim.Node, wt *waiter) {
	if wt.done {
		return
	}
	wt.done = true
	count := s.acked(wt.target)
	n.Reply(wt.req, Reply{OK: count >= wt.n, Int: int64(count)})
	s.repl.waiters = slices.DeleteFunc(s.repl.waiters, func(x *waiter) bool { return x == wt })
}

func (s *Server) settleWaiters(n *sim.Node) {
	for _, wt := range slices.Clone(s.repl.waiters) {
		if s.acked(wt.target) >= wt.n {
			s.finishWait(n, wt)
		}
	}
}

// promote makes a replica the primary of a new stream that starts at its offset.
func (s *Server) promote(n *sim.Node, epoch uint64) {
	s.role, s.epoch = RolePrimary, epoch
	offset := s.repl.offset
	s.repl = replState{clientOffset: map[sim.NodeID]int64{}, offset: offset, logBase: offset,
		replID: fmt.Sprintf("%s/%d/%d", n.Name(), n.Incarnation(), epoch)}
}

// follow makes the instance a replica of primary; its data is replaced by the
// primary's at the next synchronisation.
func (s *Server) follow(n *sim.Node, primary sim.NodeID, epoch uint64) {
	for _, wt := range slices.Clone(s.repl.waiters) {
		s.finishWait(n, wt)
	}
	s.role, s.primary, s.epoch = RoleReplica, primary, epoch
	s.repl = replState{clientOffset: map[sim.NodeID]int64{}, gap: true}
	s.tickAcks(n)
}
