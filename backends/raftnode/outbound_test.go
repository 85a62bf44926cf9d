package raftnode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"
)

// TestOutboundSharesPlainMessagesAndCopiesTheRest: a plain message is sent
// as it is (the Ready batch's own); one with a snapshot or responses is
// copied whole.
func TestOutboundSharesPlainMessagesAndCopiesTheRest(t *testing.T) {
	m := pb.Message{Type: pb.MsgApp, To: 2, From: 1, Term: 3, Entries: []pb.Entry{{Term: 3, Index: 7, Data: []byte("x")}}}
	assert.Same(t, &m, Outbound(&m))

	snap := pb.Message{Type: pb.MsgSnap, To: 2, From: 1, Snapshot: &pb.Snapshot{Data: []byte("s"),
		Metadata: pb.SnapshotMetadata{Index: 9, Term: 3, ConfState: pb.ConfState{Voters: []uint64{1, 2, 3}}}}}
	c := Outbound(&snap)
	require.NotSame(t, &snap, c)
	assert.Equal(t, snap, *c)
	assert.NotSame(t, snap.Snapshot, c.Snapshot, "a snapshot is copied")
	c.Snapshot.Data[0] = 'z'
	assert.Equal(t, []byte("s"), snap.Snapshot.Data)
}

// TestInboundCopiesOnlyProposalEntries: a proposal's entries are the
// receiver's own (the leader writes their term and index); other messages
// keep theirs shared.
func TestInboundCopiesOnlyProposalEntries(t *testing.T) {
	prop := pb.Message{Type: pb.MsgProp, From: 2, Entries: []pb.Entry{{Data: []byte("cmd")}}}
	in := Inbound(prop)
	assert.Equal(t, prop, in)
	in.Entries[0].Term, in.Entries[0].Index = 4, 11
	assert.Zero(t, prop.Entries[0].Term)
	assert.Zero(t, prop.Entries[0].Index)
	assert.Same(t, &prop.Entries[0].Data[0], &in.Entries[0].Data[0], "the data is still shared")

	app := pb.Message{Type: pb.MsgApp, Entries: []pb.Entry{{Term: 4, Index: 11, Data: []byte("cmd")}}}
	assert.Same(t, &app.Entries[0], &Inbound(app).Entries[0])
}
