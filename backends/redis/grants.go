package redis

import (
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// RecordGrants makes the instance record every grant, renewal and release it
// executes as a primary in log, under scope (the lock state it belongs to:
// the deployment for a primary and its replicas, the instance itself for
// Redlock). The record is the ground truth of a simulated run.
func (s *Server) RecordGrants(log *lockapi.GrantLog, scope string) { s.grants, s.scope = log, scope }

// holderBefore is, when grants are recorded, the value a lock command's key
// holds before the command runs at wall ("" if none).
func (s *Server) holderBefore(cmd any, wall time.Duration) string {
	if !s.grants.Recording() {
		return ""
	}
	var key string
	switch c := cmd.(type) {
	case HoldLock:
		key = c.Key
	case Del:
		key = c.Key
	default:
		return ""
	}
	e, ok := s.data.get(key)
	if !ok || (e.expireAt != 0 && wall >= e.expireAt) {
		return ""
	}
	return e.value
}

// noteGrant records what a client command that succeeded did to a lock, in
// true time; before is the key's holder before the command (holderBefore).
// TTLs are counted from the moment of the command: the lease the instance
// promised, whatever its clock does afterwards.
func (s *Server) noteGrant(n *sim.Node, m sim.Message, r Reply, before string) {
	if !r.OK || !s.grants.Recording() {
		return
	}
	now := n.World().Now()
	client := n.World().Nodes()[m.From].Name()
	switch c := m.Body.(type) {
	case SetNX:
		s.grants.Granted(s.scope, n.Name(), c.Key, c.Value, client, now, now+c.TTL)
	case SetNXFence:
		s.grants.Granted(s.scope, n.Name(), c.Key, c.Value, client, now, now+c.TTL)
	case HoldLock:
		if before == c.Owner {
			s.grants.Renewed(s.scope, c.Key, c.Owner, now, now+c.TTL) // a reentrant acquire
		} else {
			s.grants.Granted(s.scope, n.Name(), c.Key, c.Owner, client, now, now+c.TTL)
		}
		if e, ok := s.data.get(c.Key); ok {
			s.grants.Counted(s.scope, c.Key, c.Owner, now, int(e.count))
		}
	case ExpireIfValue:
		s.grants.Renewed(s.scope, c.Key, c.Value, now, now+c.TTL)
	case DelIfValue:
		s.grants.Released(s.scope, c.Key, c.Value, now)
	case Del:
		s.grants.Removed(s.scope, c.Key, before, client, now)
	case UnholdLock:
		if r.Int == 0 {
			s.grants.Released(s.scope, c.Key, c.Owner, now)
		} else {
			s.grants.Renewed(s.scope, c.Key, c.Owner, now, now+c.TTL)
			s.grants.Counted(s.scope, c.Key, c.Owner, now, int(r.Int))
		}
	}
}
