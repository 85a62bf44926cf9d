package raftnode

import (
	"fmt"
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Outbound returns what a server puts on the simulated network for m, a
// message of a Ready batch (a pointer into the batch's Messages): m itself,
// shared with the receiver rather than copied, because once Ready has handed
// it out nothing writes to it.
//
//   - The batch's Messages array is the RawNode's raft.msgs, handed over with
//     the batch: accepting a Ready sets raft.msgs (and msgsAfterAppend) to
//     nil, so raft appends its next messages to a new array and never writes
//     to this one again. The servers only read the messages they send.
//   - The entries a message carries are shared with the sender's log, which
//     etcd raft never changes in place: its logs hold copies of the entries
//     they are given (values appended to their own arrays), and every slice
//     it hands out is capped (full slice expression), so an append to it by
//     the receiver's unstable log reallocates. The receivers' logs, disks
//     and state machines only read entries.
//   - A receiving RawNode steps its own copy of the message (Step takes a
//     value), so writes to the fixed fields when it forwards a message
//     (m.To, and m.From/Term in send) stay with the receiver. It writes to
//     the entries of a proposal it appends (their term and index, in place)
//     or neutralises (a conf change; no service here proposes one): Inbound
//     gives a proposal entries of its own before it is stepped. The
//     simulated network delivers a duplicated message as the same value
//     twice, as it did when messages were copied.
//
// A message with a snapshot or local responses attached is deep-copied: the
// services here never send one, and a copy costs nothing when it never
// happens. TestOutboundMessagesAreNeverWritten (harness) checks the claim
// over whole runs of every raft-based system: each message reads as the same
// text at the end of the run as when it was sent.
func Outbound(m *pb.Message) *pb.Message {
	if m.Snapshot != nil || len(m.Responses) > 0 {
		c := deepCopy(m)
		return &c
	}
	return m
}

// Inbound returns the message a server steps for m, a message it received:
// m itself, except that a proposal (forwarded by a follower) gets a copy of
// its entries, which the leader's raft writes to when it appends them.
func Inbound(m pb.Message) pb.Message {
	if m.Type == pb.MsgProp {
		m.Entries = slices.Clone(m.Entries)
	}
	return m
}

// deepCopy copies m and everything it points to, through its encoding.
func deepCopy(m *pb.Message) pb.Message {
	enc, err := m.Marshal()
	if err != nil {
		panic(fmt.Sprintf("raftnode: copy %v message: encode: %v", m.Type, err))
	}
	var c pb.Message
	if err := c.Unmarshal(enc); err != nil {
		panic(fmt.Sprintf("raftnode: copy %v message: decode: %v", m.Type, err))
	}
	return c
}
