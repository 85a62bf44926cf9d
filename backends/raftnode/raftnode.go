// Package raftnode holds what the lock services built on etcd raft inside the
// simulator share: the replica (starting and restarting a RawNode over what
// survived a crash, ticking it, the seeded election timer, draining its Ready
// batches in the order etcd raft requires, and handing its messages to and
// from the simulated network). Each service keeps its own messages,
// persistence policy and state machine, and plugs them in as a Replica's
// hooks; this package knows nothing about locks. For the services whose
// clients hold sessions (Chubby, ZooKeeper) it also keeps the leader's clock
// on their leases (SessionLeases).
package raftnode

import (
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Steps are what a server does with each part of a Ready batch. Send and
// Apply are given a pointer into the batch (no copy); it is valid during the
// call, and what it points to must not be written. Persist is given the
// batch itself (a pointer to it, through a function value, would move every
// batch to the heap).
type Steps struct {
	// Persist makes the batch's hard state and entries durable (and visible
	// to the RawNode's storage) before any message is sent.
	Persist func(rd raft.Ready)
	// Send sends one message to its peer.
	Send func(m *pb.Message)
	// Apply applies one committed entry to the state machine.
	Apply func(e *pb.Entry)
	// Role is told of a change of leader or role: after the batch's entries
	// are applied, or before them when RoleFirst is set.
	Role func(ss *raft.SoftState)
	// RoleFirst tells Role of the batch's role change before its entries are
	// applied, as etcd's server does (it learns of a new term's leadership
	// before it applies that term's entries).
	RoleFirst bool
}

// Drain processes every Ready batch rn has, in order: persist, send, apply,
// role change (or role change, apply), advance.
func Drain(rn *raft.RawNode, s Steps) {
	for rn.HasReady() {
		rd := rn.Ready()
		s.Persist(rd)
		for i := range rd.Messages {
			s.Send(&rd.Messages[i])
		}
		if s.RoleFirst && rd.SoftState != nil {
			s.Role(rd.SoftState)
		}
		for i := range rd.CommittedEntries {
			s.Apply(&rd.CommittedEntries[i])
		}
		if !s.RoleFirst && rd.SoftState != nil {
			s.Role(rd.SoftState)
		}
		rn.Advance(rd)
	}
}
