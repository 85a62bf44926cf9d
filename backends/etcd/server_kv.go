package etcd

import (
	"encoding/binary"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

// kvEntries holds the log entries of the generic KV API by command id (they
// share the ids of Cluster.cmds, so an entry is one or the other).
type kvEntries map[uint64]KVOp

// rememberKV keeps op under a fresh command id.
func (c *Cluster) rememberKV(op KVOp) uint64 {
	if c.kvOps == nil {
		c.kvOps = kvEntries{}
	}
	c.nextCmd++
	c.kvOps[c.nextCmd] = op
	return c.nextCmd
}

// kvRequest answers a serializable Range locally, and proposes anything else
// if this member leads.
func (s *Server) kvRequest(m sim.Message, req KVRequest) {
	if req.Op.Type == KVRange && req.Op.Serializable {
		s.node.Reply(m, KVResponse{Result: s.store.ReadKV(req.Op), Member: s.id, Term: s.r.Term()})
		return
	}
	if !s.ready {
		s.node.Reply(m, KVResponse{NotLeader: true, Leader: s.r.Lead(), Member: s.id})
		return
	}
	id := s.cluster.rememberKV(req.Op)
	s.pending[id] = raftnode.Request{Msg: m, At: s.node.Mono(), Term: s.r.Term()}
	s.cluster.truth.asked(id, clientName(s.node, m))
	s.cluster.user.asked(id, clientName(s.node, m))
	if err := s.r.Propose(binary.BigEndian.AppendUint64(nil, id)); err != nil {
		delete(s.pending, id)
		s.node.Reply(m, KVResponse{NotLeader: true, Leader: s.r.Lead(), Member: s.id})
		return
	}
	s.r.Drain()
}

// applyKV applies an entry of the generic KV API and answers the request
// that proposed it, if this member did.
func (s *Server) applyKV(e *pb.Entry, id uint64, op KVOp) {
	res := s.store.ApplyKV(op)
	s.cluster.user.applied(s, e.Index, id, Command{Type: CmdTxn}, res.Err, res.Events)
	if e.Term == s.r.Term() && s.r.Leading() {
		s.ready = true
	}
	if len(res.Events) > 0 {
		s.notify(res.Events)
	}
	if p, ok := s.pending.Take(id); ok && p.Term == e.Term {
		s.node.Reply(p.Msg, KVResponse{Result: res, Member: s.id, Term: e.Term})
	}
}

// leaseTTL answers LeaseTimeToLive from the leader's lessor.
func (s *Server) leaseTTL(m sim.Message, req LeaseTTLRequest) {
	if !s.ready {
		s.node.Reply(m, LeaseTTLResponse{NotLeader: true, Leader: s.r.Lead(), Member: s.id})
		return
	}
	resp := LeaseTTLResponse{Member: s.id, Term: s.r.Term(), Revision: s.store.Revision()}
	ttl, _, keys, ok := s.store.LeaseInfo(req.Lease)
	exp, timed := s.expiry[req.Lease]
	if ok && timed {
		resp.Found, resp.Granted, resp.Remaining = true, ttl, max(0, exp-s.node.Mono())
		if req.Keys {
			resp.Keys = keys
		}
	}
	s.node.Reply(m, resp)
}
