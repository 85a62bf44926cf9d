package raftkv

import (
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
)

// Request is a client's lock command sent to a raft node. Cmd carries the
// session and sequence number that make retries exactly-once.
type Request struct {
	Cmd lockfsm.Command
}

// Response answers a Request.
type Response struct {
	// NotLeader: the node did not propose the command (it is not the leader,
	// or raft dropped the proposal); the command certainly did not enter the
	// log through this request. Leader is the raft id of the leader the node
	// knows of (0: none).
	NotLeader bool
	Leader    uint64
	// Result is the state machine's answer to the committed command.
	Result lockfsm.Result
	// Invalid is set when the state machine refused the command (a bug in the
	// client, never a lock outcome).
	Invalid string
	// Node, Term and Index say which leader proposed the command and where it
	// sits in the log (for the audit of what clients were told).
	Node  uint64
	Term  uint64
	Index uint64
}

// RaftMessage carries one raft message between nodes: the message of the
// sender's Ready batch itself, shared with the receiver: nothing writes to
// it once sent (raftnode.Outbound).
type RaftMessage struct {
	M *pb.Message
}

// MessageTypes returns one value of every message type the raft nodes and
// their clients send, so that a fault schedule can be checked for a delay
// whose "match" names a type that is never sent.
func MessageTypes() []any { return []any{Request{}, Response{}, RaftMessage{}} }
