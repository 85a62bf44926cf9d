package raftkv

import (
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// diskStorage is the raft.Storage a running node reads: a view of what its
// Disk has written (the cache), so each Ready's entries are stored once, in
// the Disk, rather than in the Disk and again in a raft.MemoryStorage. It
// answers every call exactly as a MemoryStorage holding the disk's snapshot,
// hard state and entries would (TestDiskStorageIsMemoryStorage), without its
// mutex: a node is single-threaded.
//
// Slices it returns are capped (full slice expression) and the Disk copies
// its log on truncation, so neither an append by raft nor a later write to
// the disk changes entries raft was given.
type diskStorage struct{ d *Disk }

var _ raft.Storage = diskStorage{}

// InitialState returns the written hard state and the snapshot's voters.
func (s diskStorage) InitialState() (pb.HardState, pb.ConfState, error) {
	return s.d.cache.hard, s.d.snap.Metadata.ConfState, nil
}

// Entries returns the entries [lo, hi), at most maxSize bytes of them (at
// least one).
func (s diskStorage) Entries(lo, hi, maxSize uint64) ([]pb.Entry, error) {
	offset := s.d.SnapshotIndex()
	ents := s.d.cache.entries
	if lo <= offset {
		return nil, raft.ErrCompacted
	}
	if last := offset + uint64(len(ents)); hi > last+1 {
		panic(fmt.Sprintf("raftkv: disk: entries' hi(%d) is out of bound lastindex(%d)", hi, last))
	}
	if len(ents) == 0 {
		return nil, raft.ErrUnavailable
	}
	out := limitSize(ents[lo-offset-1:hi-offset-1], maxSize)
	return out[:len(out):len(out)], nil
}

// Term returns the term of entry i (the snapshot's term at its index).
func (s diskStorage) Term(i uint64) (uint64, error) {
	offset := s.d.SnapshotIndex()
	switch {
	case i < offset:
		return 0, raft.ErrCompacted
	case i-offset > uint64(len(s.d.cache.entries)):
		return 0, raft.ErrUnavailable
	case i == offset:
		return s.d.snap.Metadata.Term, nil
	}
	return s.d.cache.entries[i-offset-1].Term, nil
}

// LastIndex is the index of the last written entry.
func (s diskStorage) LastIndex() (uint64, error) {
	return s.d.SnapshotIndex() + uint64(len(s.d.cache.entries)), nil
}

// FirstIndex is the index after the snapshot's.
func (s diskStorage) FirstIndex() (uint64, error) { return s.d.SnapshotIndex() + 1, nil }

// Snapshot returns the bootstrap snapshot.
func (s diskStorage) Snapshot() (pb.Snapshot, error) { return s.d.snap, nil }

// limitSize is etcd raft's: the longest prefix of ents (at least one entry)
// whose encoded sizes add up to at most maxSize. It skips the encoding sizes
// when a bound on them shows the whole slice fits, which is the common case.
func limitSize(ents []pb.Entry, maxSize uint64) []pb.Entry {
	if len(ents) == 0 {
		return ents
	}
	bound := uint64(0)
	for i := range ents {
		bound += entrySizeBound(&ents[i])
		if bound > maxSize {
			break
		}
	}
	if bound <= maxSize {
		return ents
	}
	size := uint64(ents[0].Size())
	for limit := 1; limit < len(ents); limit++ {
		size += uint64(ents[limit].Size())
		if size > maxSize {
			return ents[:limit]
		}
	}
	return ents
}

// entrySizeBound is at least e.Size(): three varint fields of at most 1+10
// bytes, and the data with its tag and length prefix.
func entrySizeBound(e *pb.Entry) uint64 {
	return 3*11 + 1 + 10 + uint64(len(e.Data))
}
