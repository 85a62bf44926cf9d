package raftnode

import (
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// msgBlock holds a copied message and its scalar fields in one allocation.
type msgBlock struct {
	m                                                       pb.Message
	typ                                                     pb.MessageType
	to, from, term, logTerm, index, commit, vote, rejectHnt uint64
	reject                                                  bool
}

// entryBlock holds a copied entry and its scalar fields.
type entryBlock struct {
	e           pb.Entry
	term, index uint64
	typ         pb.EntryType
}

// CloneMessage deep-copies a raft message for the simulated network (the
// receiver must not share memory with the sender). It is proto.Clone for the
// messages peers exchange, without reflection and in a few allocations: the
// message with its scalars in one block, its entries in another, their data
// in a third. Messages it does not know how to copy by hand (a snapshot, local
// storage responses) go through proto.Clone. Unknown fields are not copied:
// messages built in process by etcd raft have none.
func CloneMessage(m *pb.Message) *pb.Message {
	if m == nil {
		return nil
	}
	if m.Snapshot != nil || len(m.Responses) > 0 || slices.Contains(m.Entries, nil) {
		return proto.Clone(m).(*pb.Message)
	}
	b := new(msgBlock)
	c := &b.m
	c.Type = copyPtr(m.Type, &b.typ)
	c.To = copyPtr(m.To, &b.to)
	c.From = copyPtr(m.From, &b.from)
	c.Term = copyPtr(m.Term, &b.term)
	c.LogTerm = copyPtr(m.LogTerm, &b.logTerm)
	c.Index = copyPtr(m.Index, &b.index)
	c.Commit = copyPtr(m.Commit, &b.commit)
	c.Vote = copyPtr(m.Vote, &b.vote)
	c.Reject = copyPtr(m.Reject, &b.reject)
	c.RejectHint = copyPtr(m.RejectHint, &b.rejectHnt)
	c.Context = copyBytes(m.Context)
	if m.Entries != nil {
		size := 0
		for _, e := range m.Entries {
			size += len(e.Data)
		}
		var data []byte
		if size > 0 {
			data = make([]byte, 0, size)
		}
		blocks := make([]entryBlock, len(m.Entries))
		c.Entries = make([]*pb.Entry, len(m.Entries))
		for i, e := range m.Entries {
			eb := &blocks[i]
			eb.e.Term = copyPtr(e.Term, &eb.term)
			eb.e.Index = copyPtr(e.Index, &eb.index)
			eb.e.Type = copyPtr(e.Type, &eb.typ)
			switch {
			case e.Data == nil:
			case len(e.Data) == 0:
				eb.e.Data = []byte{}
			default:
				start := len(data)
				data = append(data, e.Data...)
				eb.e.Data = data[start:len(data):len(data)]
			}
			c.Entries[i] = &eb.e
		}
	}
	return c
}

// copyPtr points at a copy of *p kept in slot, or is nil when p is.
func copyPtr[T any](p *T, slot *T) *T {
	if p == nil {
		return nil
	}
	*slot = *p
	return slot
}

// copyBytes copies b, keeping nil apart from empty.
func copyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
