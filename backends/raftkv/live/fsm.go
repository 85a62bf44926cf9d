package raftkvlive

import (
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/internal/faultnet"
)

// FSM is the RheaKV lock state machine (lockfsm) as a hashicorp/raft FSM.
// Apply passes the node's pause gate first: a paused node applies nothing
// until it resumes, as a process stopped by a GC pause.
type FSM struct {
	net  *faultnet.Net
	node string
	mu   sync.Mutex
	m    *lockfsm.Machine
}

var _ raft.FSM = (*FSM)(nil)

// ApplyResult is what FSM.Apply returns (ApplyFuture.Response).
type ApplyResult struct {
	Result lockfsm.Result
	Err    error
}

// NewFSM returns an empty machine for node.
func NewFSM(net *faultnet.Net, node string, cfg lockfsm.Config) *FSM {
	return &FSM{net: net, node: node, m: lockfsm.New(cfg)}
}

// Apply executes one committed command.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	if err := f.net.Gate(f.node); err != nil {
		return ApplyResult{Err: err}
	}
	c, err := lockfsm.Decode(l.Data)
	if err != nil {
		return ApplyResult{Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.m.Apply(c)
	return ApplyResult{Result: r, Err: err}
}

// Snapshot captures the machine's state.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := f.m.Snapshot()
	if err != nil {
		return nil, err
	}
	return snapshot(b), nil
}

// Restore replaces the state with a snapshot's.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("raftkv fsm %s: restore: %w", f.node, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m.Restore(b)
}

// Lookup returns the owner record of key.
func (f *FSM) Lookup(key string) (lockfsm.Owner, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m.Lookup(key)
}

// Fence is the last fencing token the machine handed out.
func (f *FSM) Fence() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m.Fence()
}

type snapshot []byte

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("raftkv fsm: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s snapshot) Release() {}
