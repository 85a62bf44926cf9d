package etcd

import (
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Request is a client's KV or lease command sent to a member. A linearizable
// command goes through the leader's log; a Serializable one (reads only) is
// answered by the member from what it has applied.
type Request struct {
	Cmd          Command
	Serializable bool
}

// Response answers a Request.
type Response struct {
	// NotLeader: the member did not propose the command (it does not lead,
	// or leads but has not yet committed an entry of its term); the command
	// certainly did not enter the log through this request. Leader is the
	// raft id of the leader it knows of (0: none).
	NotLeader bool
	Leader    uint64
	// Result is the applied command's outcome.
	Result Result
	// Member is the raft id of the member that answered.
	Member uint64
	// Retried is set by the client, not the member: an earlier attempt of
	// this request timed out, so it may have taken effect as well.
	Retried bool
}

// KeepAlive renews a lease. Only the leader's lessor renews (keep-alives are
// not in the log, as in etcd).
type KeepAlive struct {
	Lease int64
}

// KeepAliveResp answers a KeepAlive: TTL 0 means the lease is gone.
type KeepAliveResp struct {
	NotLeader bool
	Leader    uint64
	TTL       time.Duration
}

// WatchReq registers (or re-registers) watch ID of the sending node on a key
// or prefix from revision FromRev at the member.
type WatchReq struct {
	ID      uint64
	Key     string
	Prefix  bool
	FromRev int64
}

// WatchAck acknowledges a WatchReq.
type WatchAck struct {
	Revision int64
}

// WatchEvents notifies a watcher of changes (not a reply: it arrives through
// Proc.Recv).
type WatchEvents struct {
	ID     uint64
	Events []Event
}

// RaftMessage carries one raft message between members: the message of the
// sender's Ready batch itself, shared with the receiver: nothing writes to
// it once sent (raftnode.Outbound).
type RaftMessage struct {
	M *pb.Message
}

// MessageTypes returns one value of every message type the members and their
// clients send (for a schedule's delay "match").
func MessageTypes() []any {
	return []any{Request{}, Response{}, KeepAlive{}, KeepAliveResp{}, WatchReq{}, WatchAck{}, WatchEvents{}, RaftMessage{}}
}
