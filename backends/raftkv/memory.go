package raftkv

import (
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/internal/reuse"
)

// memory is the storage of a cluster's logs and tables, handed from a
// released cluster to the next one (Cluster.Release): a sweep runs world
// after world, and each would otherwise grow its three disk logs, its decode
// table and its audit's tables from nothing again (a third of what a raftkv
// run allocates outside etcd raft). Everything in it is emptied and zeroed.
type memory struct {
	logs    [][]pb.Entry // disk log arrays, length 0
	chunks  [][]decoded  // decode table chunks, zeroed
	applied []appliedEntry
	acks    []Ack
	truth   []uint64
}

var memories reuse.Pool[memory]

// takeLog is an empty log array from m (nil when it has none).
func (m *memory) takeLog() []pb.Entry {
	if m == nil {
		return nil
	}
	return takeLast(&m.logs)
}

// takeChunk is a zeroed decode chunk from m (nil when it has none).
func (m *memory) takeChunk() []decoded {
	if m == nil {
		return nil
	}
	return takeLast(&m.chunks)
}

// takeLast removes the last element of *list and returns it (the zero value
// when the list is empty).
func takeLast[T any](list *[]T) T {
	var zero T
	n := len(*list)
	if n == 0 {
		return zero
	}
	x := (*list)[n-1]
	(*list)[n-1] = zero
	*list = (*list)[:n-1]
	return x
}

// emptied is s with length 0, its whole array zeroed (so it keeps nothing
// of the released run alive).
func emptied[T any](s []T) []T {
	s = s[:cap(s)]
	clear(s)
	return s[:0]
}

// Release hands the storage of the cluster's disk logs, decode table and
// audit to the next cluster, for a caller that runs world after world (a
// sweep) once it has read what it needs: the cluster, its servers, their
// disks and its audit must not be used afterwards (they are emptied).
func (c *Cluster) Release() {
	if c.released {
		return
	}
	c.released = true
	m := c.mem
	if m == nil {
		m = new(memory)
	}
	for _, s := range c.servers {
		d := s.disk
		if l := d.cache.entries; cap(l) > 0 {
			m.logs = append(m.logs, emptied(l))
		}
		d.cache, d.durable = image{}, image{}
	}
	for _, ch := range c.decoder.chunks {
		if ch != nil {
			m.chunks = append(m.chunks, emptied(ch)[:decodeChunk])
		}
	}
	c.decoder = decoder{}
	m.applied, m.acks = emptied(c.audit.applied), emptied(c.audit.acks)
	c.audit.applied, c.audit.acks = nil, nil
	if c.truth != nil {
		m.truth = emptied(c.truth.applied)
		c.truth.applied = nil
	}
	c.mem = nil
	memories.Put(m)
}
