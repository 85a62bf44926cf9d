package raftnode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestCloneMessageIsProtoClone: the hand-written copy equals proto.Clone's
// for the messages peers exchange, shares no memory with the original, and
// keeps absent fields absent and empty data empty.
func TestCloneMessageIsProtoClone(t *testing.T) {
	typ, et := pb.MessageType_MsgApp, pb.EntryType_EntryNormal
	tests := []struct {
		name string
		m    *pb.Message
	}{
		{"heartbeat", &pb.Message{Type: typ.Enum(), To: proto.Uint64(2), From: proto.Uint64(1), Term: proto.Uint64(3), Commit: proto.Uint64(9)}},
		{"append", &pb.Message{Type: typ.Enum(), To: proto.Uint64(2), From: proto.Uint64(1), Term: proto.Uint64(3),
			LogTerm: proto.Uint64(2), Index: proto.Uint64(7), Commit: proto.Uint64(6), Entries: []*pb.Entry{
				{Term: proto.Uint64(3), Index: proto.Uint64(8), Type: et.Enum(), Data: []byte("abc")},
				{Term: proto.Uint64(3), Index: proto.Uint64(9), Data: []byte{}},
				{Term: proto.Uint64(3), Index: proto.Uint64(10)},
			}}},
		{"reject", &pb.Message{Type: pb.MessageType_MsgAppResp.Enum(), Reject: proto.Bool(true), RejectHint: proto.Uint64(4),
			Vote: proto.Uint64(1), Context: []byte("ctx")}},
		{"snapshot (proto.Clone)", &pb.Message{Type: pb.MessageType_MsgSnap.Enum(), Snapshot: &pb.Snapshot{Data: []byte("s")}}},
		{"empty", &pb.Message{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CloneMessage(tc.m)
			require.True(t, proto.Equal(tc.m, c), "clone %v of %v", c, tc.m)
			assert.Equal(t, tc.m.String(), c.String())
			for i, e := range tc.m.Entries {
				assert.Equal(t, e.Data == nil, c.Entries[i].Data == nil, "entry %d: nil data stays nil, empty stays empty", i)
				if len(e.Data) > 0 {
					c.Entries[i].Data[0] = 'X'
					assert.NotEqual(t, byte('X'), e.Data[0], "entry %d: data is copied", i)
				}
			}
			if tc.m.Term != nil {
				*c.Term = 99
				assert.NotEqual(t, uint64(99), tc.m.GetTerm(), "scalars are copied")
			}
		})
	}
	assert.Nil(t, CloneMessage(nil))
}

func BenchmarkCloneMessage(b *testing.B) {
	typ := pb.MessageType_MsgApp
	m := &pb.Message{Type: typ.Enum(), To: proto.Uint64(2), From: proto.Uint64(1), Term: proto.Uint64(3),
		LogTerm: proto.Uint64(2), Index: proto.Uint64(7), Commit: proto.Uint64(6), Entries: []*pb.Entry{
			{Term: proto.Uint64(3), Index: proto.Uint64(8), Data: []byte("abcdefgh")}}}
	b.Run("CloneMessage", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = CloneMessage(m)
		}
	})
	b.Run("proto.Clone", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = proto.Clone(m)
		}
	})
}
