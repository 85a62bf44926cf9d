package raftkv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
)

// TestDecoderIsDecode: the cluster's decode cache gives what decoding gives,
// for the same entry applied again (by another node: a copy of the entry
// sharing its data), for another entry at the same index (a replaced log
// suffix) or in another chunk of the table, and for a prefix of the same
// data.
func TestDecoderIsDecode(t *testing.T) {
	entry := func(index uint64, cmd lockfsm.Command) *pb.Entry {
		return &pb.Entry{Index: index, Term: 2, Data: lockfsm.Encode(cmd)}
	}
	a := lockfsm.Command{Op: lockfsm.OpTryLock, Key: "k", Acquirer: "c1:k", Context: []byte("n1"), Session: "c1", Seq: 1}
	b := lockfsm.Command{Op: lockfsm.OpUnlock, Key: "k", Acquirer: "c2:k", Session: "c2", Seq: 7}
	ea, eb := entry(5, a), entry(5, b)
	copyOfA := *ea
	prefixOfA := *ea
	prefixOfA.Data = prefixOfA.Data[:len(prefixOfA.Data)-1]
	tests := []struct {
		name string
		e    *pb.Entry
		want lockfsm.Command
	}{
		{"first node applies", ea, a},
		{"second node applies the same entry", ea, a},
		{"third node applies its copy of the entry", &copyOfA, a},
		{"a prefix of the same data", &prefixOfA, lockfsm.Command{}},
		{"another entry at the same index", eb, b},
		{"another entry in another chunk", entry(5+decodeChunk, a), a},
		{"the first entry again", ea, a},
		{"bad data", &pb.Entry{Index: 9, Data: []byte{9}}, lockfsm.Command{}},
		{"no data", &pb.Entry{Index: 10}, lockfsm.Command{}},
	}
	var d decoder
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.decode(tc.e)
			want, wantErr := lockfsm.Decode(tc.e.Data)
			require.Equal(t, wantErr, err)
			assert.Equal(t, want, got)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestAProposedCommandIsWhatDecodingGives: a leader's own command, noted when
// its entry is persisted, is what decoding the entry would give, whatever
// its context; a command with an op the codec does not know is not noted, so
// applying it is refused as decoding refuses it.
func TestAProposedCommandIsWhatDecodingGives(t *testing.T) {
	cmds := []lockfsm.Command{
		{Op: lockfsm.OpTryLock, Key: "k", Acquirer: "c1:k", Lease: 5, Context: []byte("n1"), Stamp: 9, Session: "c1", Seq: 1},
		{Op: lockfsm.OpTryLock, Key: "k", Acquirer: "c1:k", Lease: 5, Context: []byte{}, Session: "c1", Seq: 2},
		{Op: lockfsm.OpUnlock, Key: "k", Acquirer: "c1:k", Session: "c1", Seq: 3},
		{Op: lockfsm.OpKeepLease, Key: "k", Acquirer: "c1:k", Lease: 5, Session: "c1/watchdog:k", Seq: 1},
		{Op: lockfsm.OpGet, Key: "k"},
		{Op: "steal", Key: "k", Acquirer: "c1:k"},
	}
	var d decoder
	for i, cmd := range cmds {
		t.Run(string(cmd.Op), func(t *testing.T) {
			e := &pb.Entry{Index: uint64(10 + i), Term: 2, Data: lockfsm.Encode(cmd)}
			d.proposed(e.Index, e.Data, cmd)
			got, err := d.decode(e)
			want, wantErr := lockfsm.Decode(e.Data)
			require.Equal(t, wantErr, err)
			assert.Equal(t, want, got)
		})
	}
}
