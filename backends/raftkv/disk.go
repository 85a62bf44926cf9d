package raftkv

import (
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// image is what a node has written: the hard state and the log after the
// bootstrap snapshot. Entries are never mutated once written.
type image struct {
	hard    pb.HardState
	entries []pb.Entry // entries[i].Index == snap index + 1 + i
}

func (im image) clone() image {
	return image{hard: im.hard, entries: slices.Clone(im.entries)}
}

// Disk is a raft node's durable store: it survives crashes. With fsync
// always, every write is durable at once; with fsync interval, writes sit in
// a cache that Sync makes durable and a crash throws away.
type Disk struct {
	snap    pb.Snapshot
	durable image
	cache   image // what the node reads; == durable when synced
	synced  bool  // fsync always: cache and durable are one
	writes  int
}

// newDisk returns a disk holding the bootstrap snapshot of a group with the
// given voters; its log starts in log (an empty array, or nil).
func newDisk(voters []uint64, fsync Fsync, log []pb.Entry) *Disk {
	snap := pb.Snapshot{Metadata: pb.SnapshotMetadata{ConfState: pb.ConfState{Voters: voters}, Index: 1, Term: 1}}
	hard := pb.HardState{Term: 1, Commit: 1}
	d := &Disk{snap: snap, durable: image{hard: hard}, synced: fsync == FsyncAlways}
	d.cache = image{hard: hard, entries: log[:0]}
	return d
}

// write stores a Ready's hard state and entries (entries may overwrite a
// suffix of the log).
func (d *Disk) write(hard pb.HardState, entries []pb.Entry) {
	if !raft.IsEmptyHardState(hard) {
		d.cache.hard = hard
	}
	if len(entries) > 0 {
		first := d.snap.Metadata.Index + 1
		keep := entries[0].Index - first
		if keep > uint64(len(d.cache.entries)) {
			panic(fmt.Sprintf("raftkv: disk: entry %d leaves a gap after %d", entries[0].Index, first+uint64(len(d.cache.entries))-1))
		}
		if keep < uint64(len(d.cache.entries)) {
			// A suffix is replaced: copy (full slice expression), since raft
			// may still hold slices of the old log that diskStorage handed
			// out, and the durable image may share the array.
			d.cache.entries = append(d.cache.entries[:keep:keep], entries...)
		} else {
			// Past the end of every slice handed out (they are capped).
			n := len(d.cache.entries)
			d.cache.entries = extend(d.cache.entries, uint64(n+len(entries)-1))
			copy(d.cache.entries[n:], entries)
		}
	}
	d.writes++
	if d.synced {
		d.durable = d.cache
	}
}

// Sync makes the cache durable.
func (d *Disk) Sync() {
	if !d.synced {
		d.durable = d.cache.clone()
	}
}

// crash throws away what was not synced. With fsync always nothing is
// unsynced: the log is kept as it is (entries are never changed in place,
// and a restarted node's raft reads them like the crashed one did).
func (d *Disk) crash() {
	if !d.synced {
		d.cache = d.durable.clone()
	}
}

// storage is the raft storage a (re)starting node reads: a view of the
// disk's cache.
func (d *Disk) storage() diskStorage { return diskStorage{d} }

// SnapshotIndex is the index of the bootstrap snapshot.
func (d *Disk) SnapshotIndex() uint64 { return d.snap.Metadata.Index }

// Durable returns the durable hard state and log (for audits).
func (d *Disk) Durable() (pb.HardState, []pb.Entry) { return d.durable.hard, d.durable.entries }
