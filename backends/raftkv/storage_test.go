package raftkv

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// memoryStorage is what a node read before diskStorage: a MemoryStorage
// holding the disk's snapshot, hard state and entries.
func memoryStorage(t *testing.T, d *Disk) *raft.MemoryStorage {
	t.Helper()
	st := raft.NewMemoryStorage()
	require.NoError(t, st.ApplySnapshot(d.snap))
	require.NoError(t, st.SetHardState(d.cache.hard))
	require.NoError(t, st.Append(d.cache.entries))
	return st
}

func entries(term, from uint64, data ...string) []pb.Entry {
	var out []pb.Entry
	for i, s := range data {
		e := pb.Entry{Term: term, Index: from + uint64(i), Type: pb.EntryNormal}
		if s != "-" {
			e.Data = []byte(s)
		}
		out = append(out, e)
	}
	return out
}

// TestDiskStorageIsMemoryStorage: for every call raft makes, the view of a
// disk answers what a MemoryStorage with the same contents answers, and a
// write to the disk never changes a slice handed out before.
func TestDiskStorageIsMemoryStorage(t *testing.T) {
	type write struct {
		hard pb.HardState
		ents []pb.Entry
	}
	hard := func(term, vote, commit uint64) pb.HardState {
		return pb.HardState{Term: term, Vote: vote, Commit: commit}
	}
	tests := []struct {
		name   string
		fsync  Fsync
		writes []write
	}{
		{"fresh", FsyncAlways, nil},
		{"appends", FsyncAlways, []write{{hard(2, 1, 1), entries(2, 2, "-", "a")}, {pb.HardState{}, entries(2, 4, "bb", "")}, {hard(2, 1, 5), nil}}},
		{"a suffix replaced", FsyncAlways, []write{{hard(2, 1, 1), entries(2, 2, "a", "b", "c", "d")}, {hard(3, 2, 3), entries(3, 4, "x")}}},
		{"fsync interval", FsyncInterval, []write{{hard(2, 1, 1), entries(2, 2, "a", "b", "c")}, {pb.HardState{}, entries(3, 3, "y", "z")}}},
		{"long values", FsyncAlways, []write{{hard(2, 1, 1), entries(2, 2, string(make([]byte, 300)), "b", string(make([]byte, 70)), "c")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDisk([]uint64{1, 2, 3}, tc.fsync, nil)
			var handedOut [][]pb.Entry
			var want [][]pb.Entry
			for _, w := range tc.writes {
				d.write(w.hard, w.ents)
				ms, ds := memoryStorage(t, d), d.storage()
				mh, mc, merr := ms.InitialState()
				dh, dc, derr := ds.InitialState()
				assert.Equal(t, mh.String(), dh.String())
				assert.Equal(t, mc.String(), dc.String())
				assert.Equal(t, merr, derr)
				for _, f := range []func(raft.Storage) (uint64, error){raft.Storage.FirstIndex, raft.Storage.LastIndex} {
					mv, merr := f(ms)
					dv, derr := f(ds)
					assert.Equal(t, mv, dv)
					assert.Equal(t, merr, derr)
				}
				last, _ := ms.LastIndex()
				for i := uint64(0); i <= last+2; i++ {
					mv, merr := ms.Term(i)
					dv, derr := ds.Term(i)
					assert.Equal(t, mv, dv, "term %d", i)
					assert.Equal(t, merr, derr, "term %d", i)
				}
				for lo := uint64(0); lo <= last+1; lo++ {
					for hi := lo; hi <= last+1; hi++ {
						for _, max := range []uint64{0, 1, 20, 60, 330, 400, 1 << 20, math.MaxUint64} {
							name := fmt.Sprintf("entries(%d, %d, %d)", lo, hi, max)
							me, merr := ms.Entries(lo, hi, max)
							de, derr := ds.Entries(lo, hi, max)
							require.Equal(t, merr, derr, name)
							require.Equal(t, len(me), len(de), name)
							assert.Equal(t, me, de, name)
							assert.Equal(t, len(de), cap(de), "%s: capped", name)
							if len(de) > 0 {
								handedOut = append(handedOut, de)
								want = append(want, append([]pb.Entry(nil), de...))
							}
						}
					}
				}
				msnap, _ := ms.Snapshot()
				dsnap, _ := ds.Snapshot()
				assert.Equal(t, msnap.String(), dsnap.String())
			}
			for i := range handedOut {
				require.Equal(t, want[i], handedOut[i], "a slice handed out was changed by a later write")
			}
		})
	}
}
