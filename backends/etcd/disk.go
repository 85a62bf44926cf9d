package etcd

import (
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftnode"
)

// disk is a member's durable raft store (etcd's WAL, fsync on every write):
// the hard state and the log after the bootstrap snapshot. It survives
// crashes; the keyspace is rebuilt by replaying the committed entries. It is
// the member's raftnode.Log: each start reads it into a new MemoryStorage,
// which every write also goes to.
type disk struct {
	snap    pb.Snapshot
	hard    pb.HardState
	entries []pb.Entry          // entries[i].Index == snap index + 1 + i
	st      *raft.MemoryStorage // what the running member reads (nil while it is down)
}

var _ raftnode.Log = (*disk)(nil)

func newDisk(voters []uint64) *disk {
	snap := pb.Snapshot{Metadata: pb.SnapshotMetadata{ConfState: pb.ConfState{Voters: voters}, Index: 1, Term: 1}}
	return &disk{snap: snap, hard: pb.HardState{Term: 1, Commit: 1}}
}

// write stores a Ready's hard state and entries (entries may replace a
// suffix of the log).
func (d *disk) write(hard pb.HardState, entries []pb.Entry) {
	if !raft.IsEmptyHardState(hard) {
		d.hard = hard
	}
	if len(entries) > 0 {
		first := d.snap.Metadata.Index + 1
		keep := entries[0].Index - first
		if keep > uint64(len(d.entries)) {
			panic(fmt.Sprintf("etcd: disk: entry %d leaves a gap", entries[0].Index))
		}
		if keep < uint64(len(d.entries)) {
			// A suffix is replaced: copy, so that no raft storage built from
			// the old slice sees its entries change.
			d.entries = append(d.entries[:keep:keep], entries...)
		} else {
			d.entries = append(d.entries, entries...)
		}
	}
}

// Open builds the raft storage a (re)starting member reads.
func (d *disk) Open() (raft.Storage, uint64) {
	d.st = d.storage()
	return d.st, d.snap.Metadata.Index
}

// Write stores a Ready's hard state and entries, on the disk and in the
// running member's storage.
func (d *disk) Write(hard pb.HardState, entries []pb.Entry) {
	d.write(hard, entries)
	if !raft.IsEmptyHardState(hard) {
		if err := d.st.SetHardState(hard); err != nil {
			panic(fmt.Sprintf("etcd: disk: set hard state: %v", err))
		}
	}
	if err := d.st.Append(entries); err != nil {
		panic(fmt.Sprintf("etcd: disk: append: %v", err))
	}
}

// Crash drops the running member's storage: the disk keeps every write.
func (d *disk) Crash() { d.st = nil }

// storage builds the raft storage a (re)starting member reads.
func (d *disk) storage() *raft.MemoryStorage {
	st := raft.NewMemoryStorage()
	if err := st.ApplySnapshot(d.snap); err != nil {
		panic(fmt.Sprintf("etcd: disk: apply snapshot: %v", err))
	}
	if err := st.SetHardState(d.hard); err != nil {
		panic(fmt.Sprintf("etcd: disk: set hard state: %v", err))
	}
	if err := st.Append(d.entries); err != nil {
		panic(fmt.Sprintf("etcd: disk: append: %v", err))
	}
	return st
}
