package raftnode

import (
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Outbound returns what a server puts on the simulated network for m, a
// message of a Ready batch: m itself, shared with the receiver rather than
// copied, because once Ready has handed it out nothing writes to it.
//
//   - The sender's RawNode forgets the batch's messages when it accepts the
//     Ready (raft.msgs and msgsAfterAppend are reset; the self-addressed ones
//     it keeps are never sent).
//   - The entries a message carries are shared with the sender's log, which
//     etcd raft never changes in place: appendEntry stores clones of proposed
//     entries, and every slice it hands out is capped (full slice expression),
//     so an append to it by the receiver's unstable log reallocates. The
//     receivers' logs, disks and state machines only read entries.
//   - A receiving RawNode writes to a message only when it forwards it (m.To,
//     and m.From/Term in send): proposals, ReadIndex and leader transfers,
//     which are built fresh by the forwarding node, or when a leader
//     neutralises a conf-change entry of a proposal; no service here
//     proposes conf changes. The simulated network delivers a duplicated
//     message as the same value twice, as it did when messages were copied.
//
// A message with a snapshot or local responses attached is deep-copied
// (proto.Clone): the services here never send one, and a copy costs nothing
// when it never happens. TestOutboundMessagesAreNeverWritten (harness) checks
// the claim over whole runs of every raft-based system: each message encodes
// to the same bytes at the end of the run as when it was sent.
func Outbound(m *pb.Message) *pb.Message {
	if m.Snapshot != nil || len(m.Responses) > 0 {
		return proto.Clone(m).(*pb.Message)
	}
	return m
}
