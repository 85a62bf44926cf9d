package raftnode

import (
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// MemoryLog is a Log that survives a crash whole: every write is durable
// before raft's messages leave (a ZooKeeper server fsyncs its transaction log
// before it acknowledges). It is a raft.MemoryStorage holding the bootstrap
// snapshot of a group and everything written since.
type MemoryLog struct {
	group int
	st    *raft.MemoryStorage
}

var _ Log = (*MemoryLog)(nil)

// NewMemoryLog returns the empty log of a member of a group of voters
// 1..group.
func NewMemoryLog(group int) *MemoryLog { return &MemoryLog{group: group} }

// Open returns the storage, bootstrapped with the group's snapshot (index 1,
// term 1) the first time.
func (l *MemoryLog) Open() (raft.Storage, uint64) {
	if l.st == nil {
		l.st = raft.NewMemoryStorage()
		voters := make([]uint64, l.group)
		for i := range voters {
			voters[i] = uint64(i + 1)
		}
		snap := pb.Snapshot{Metadata: pb.SnapshotMetadata{ConfState: pb.ConfState{Voters: voters}, Index: 1, Term: 1}}
		if err := l.st.ApplySnapshot(snap); err != nil {
			panic(fmt.Sprintf("raftnode: memory log: bootstrap: %v", err))
		}
	}
	return l.st, 1
}

// Write stores the Ready's hard state and entries.
func (l *MemoryLog) Write(hard pb.HardState, entries []pb.Entry) {
	if !raft.IsEmptyHardState(hard) {
		if err := l.st.SetHardState(hard); err != nil {
			panic(fmt.Sprintf("raftnode: memory log: hard state: %v", err))
		}
	}
	if err := l.st.Append(entries); err != nil {
		panic(fmt.Sprintf("raftnode: memory log: append: %v", err))
	}
}

// Crash keeps everything.
func (l *MemoryLog) Crash() {}

// Logger discards raft's logging (formatting it would cost more than the
// rest of a run) but keeps its panics, raised as a Panic.
type Logger struct{}

var _ raft.Logger = Logger{}

// Panic is what raft raises when it finds its own state impossible (a
// follower whose disk lost acknowledged entries without fsync), as opposed
// to a bug of the service: a service may recover it and take the node down.
type Panic string

// Debug discards its message.
func (Logger) Debug(...any) {}

// Debugf discards its message.
func (Logger) Debugf(string, ...any) {}

// Error discards its message.
func (Logger) Error(...any) {}

// Errorf discards its message.
func (Logger) Errorf(string, ...any) {}

// Info discards its message.
func (Logger) Info(...any) {}

// Infof discards its message.
func (Logger) Infof(string, ...any) {}

// Warning discards its message.
func (Logger) Warning(...any) {}

// Warningf discards its message.
func (Logger) Warningf(string, ...any) {}

// Fatal raises v as a Panic.
func (Logger) Fatal(v ...any) { panic(Panic(fmt.Sprint(v...))) }

// Fatalf raises the formatted text as a Panic.
func (Logger) Fatalf(f string, v ...any) { panic(Panic(fmt.Sprintf(f, v...))) }

// Panic raises v as a Panic.
func (Logger) Panic(v ...any) { panic(Panic(fmt.Sprint(v...))) }

// Panicf raises the formatted text as a Panic.
func (Logger) Panicf(f string, v ...any) { panic(Panic(fmt.Sprintf(f, v...))) }
