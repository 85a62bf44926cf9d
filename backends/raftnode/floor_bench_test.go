package raftnode

import (
	"io"
	"log"
	"testing"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// BenchmarkRawNodeProposal is the floor etcd raft itself sets for the
// systems built on it: one proposal committed and applied by a 3-node group
// (MemoryStorage, messages delivered at once in order, no simulator, no
// state machine), drained with Drain as the servers drain theirs. A 60 s
// raftkv run makes about 3,600 proposals, so this times 3,600 is what raft
// alone costs such a run.
func BenchmarkRawNodeProposal(b *testing.B) {
	const n = 3
	nodes := make([]*raft.RawNode, n+1)
	stores := make([]*raft.MemoryStorage, n+1)
	logger := &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	for id := uint64(1); id <= n; id++ {
		st := raft.NewMemoryStorage()
		snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{ConfState: &pb.ConfState{Voters: []uint64{1, 2, 3}},
			Index: new(uint64(1)), Term: new(uint64(1))}}
		if err := st.ApplySnapshot(snap); err != nil {
			b.Fatal(err)
		}
		if err := st.SetHardState(&pb.HardState{Term: new(uint64(1)), Commit: new(uint64(1))}); err != nil {
			b.Fatal(err)
		}
		rn, err := raft.NewRawNode(&raft.Config{ID: id, ElectionTick: 1 << 30, HeartbeatTick: 2, Storage: st, Applied: 1,
			MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, Logger: logger})
		if err != nil {
			b.Fatal(err)
		}
		nodes[id], stores[id] = rn, st
	}
	var queue []*pb.Message
	applied := 0
	steps := func(id uint64) Steps {
		return Steps{
			Persist: func(rd raft.Ready) {
				if !raft.IsEmptyHardState(rd.HardState) {
					_ = stores[id].SetHardState(rd.HardState)
				}
				_ = stores[id].Append(rd.Entries)
			},
			Send:  func(m *pb.Message) { queue = append(queue, m) },
			Apply: func(*pb.Entry) { applied++ },
			Role:  func(*raft.SoftState) {},
		}
	}
	all := make([]Steps, n+1)
	for id := uint64(1); id <= n; id++ {
		all[id] = steps(id)
	}
	pump := func() {
		for id := uint64(1); id <= n; id++ {
			Drain(nodes[id], all[id])
		}
		for len(queue) > 0 {
			m := queue[0]
			queue = queue[1:]
			if err := nodes[m.GetTo()].Step(m); err != nil {
				b.Fatal(err)
			}
			Drain(nodes[m.GetTo()], all[m.GetTo()])
		}
	}
	if err := nodes[1].Campaign(); err != nil {
		b.Fatal(err)
	}
	pump()
	data := make([]byte, 60) // about a lock command's size
	b.ReportAllocs()
	b.ResetTimer()
	applied = 0
	for range b.N {
		if err := nodes[1].Propose(append([]byte(nil), data...)); err != nil {
			b.Fatal(err)
		}
		pump()
	}
	if applied != 3*b.N {
		b.Fatalf("%d entries applied, want %d", applied, 3*b.N)
	}
}
