package raftkvlive

import (
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/internal/faultnet"
)

// transport wraps a raft.InmemTransport so that every RPC crosses the
// faultnet: a cut link hangs for the RPC timeout and fails (a blackhole),
// a delay rule delays it, a paused sender or receiver holds it. Pipelining is
// refused, so every append and heartbeat goes through AppendEntries below.
type transport struct {
	*raft.InmemTransport
	net     *faultnet.Net
	node    string
	names   map[raft.ServerAddress]string
	timeout func() error
}

var (
	_ raft.Transport   = (*transport)(nil)
	_ raft.WithPreVote = (*transport)(nil) // without it raft silently disables pre-vote
	_ raft.WithClose   = (*transport)(nil)
)

var errBlackhole = errors.New("raftkv transport: link cut")

// gate carries one RPC's request to target, runs it, and carries the
// response back.
func (t *transport) gate(target raft.ServerAddress, req any, rpc func() error) error {
	to := t.names[target]
	if err := t.net.Gate(t.node); err != nil {
		return err
	}
	if err := t.net.Send(t.node, to, req); err != nil {
		if errors.Is(err, faultnet.ErrDropped) {
			if err := t.timeout(); err != nil {
				return err
			}
			return fmt.Errorf("%w: %s -> %s", errBlackhole, t.node, to)
		}
		return err
	}
	if err := rpc(); err != nil {
		return err
	}
	if err := t.net.Send(to, t.node, req); err != nil {
		if errors.Is(err, faultnet.ErrDropped) {
			return fmt.Errorf("%w: %s -> %s (response)", errBlackhole, to, t.node)
		}
		return err
	}
	return t.net.Gate(t.node)
}

func (t *transport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

func (t *transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, a *raft.AppendEntriesRequest, r *raft.AppendEntriesResponse) error {
	return t.gate(target, a, func() error { return t.InmemTransport.AppendEntries(id, target, a, r) })
}

func (t *transport) RequestVote(id raft.ServerID, target raft.ServerAddress, a *raft.RequestVoteRequest, r *raft.RequestVoteResponse) error {
	return t.gate(target, a, func() error { return t.InmemTransport.RequestVote(id, target, a, r) })
}

func (t *transport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, a *raft.RequestPreVoteRequest, r *raft.RequestPreVoteResponse) error {
	return t.gate(target, a, func() error { return t.InmemTransport.RequestPreVote(id, target, a, r) })
}

func (t *transport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, a *raft.InstallSnapshotRequest, r *raft.InstallSnapshotResponse, data io.Reader) error {
	return t.gate(target, a, func() error { return t.InmemTransport.InstallSnapshot(id, target, a, r, data) })
}

func (t *transport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, a *raft.TimeoutNowRequest, r *raft.TimeoutNowResponse) error {
	return t.gate(target, a, func() error { return t.InmemTransport.TimeoutNow(id, target, a, r) })
}

// MessageTypes are the types a delay's match can name for the raft group.
func MessageTypes() []any {
	return []any{raftkv.Request{}, Response{}, &raft.AppendEntriesRequest{}, &raft.RequestVoteRequest{},
		&raft.RequestPreVoteRequest{}, &raft.InstallSnapshotRequest{}, &raft.TimeoutNowRequest{}}
}
