package chubby

import pb "go.etcd.io/raft/v3/raftpb"

// Op is a client request's operation.
type Op string

// Operations of the client protocol.
const (
	OpOpen      Op = "open" // create a session
	OpKeepAlive Op = "keepalive"
	OpAcquire   Op = "acquire"
	OpRelease   Op = "release"
	OpCheck     Op = "check" // CheckSequencer
)

// Code is a request's outcome.
type Code string

// Result codes.
const (
	CodeOK Code = "ok"
	// CodeBusy: the lock is held, or in its lock-delay.
	CodeBusy Code = "busy"
	// CodeExpired: the session is gone.
	CodeExpired Code = "expired"
	// CodeNotMaster: this replica is not a master with a working quorum.
	CodeNotMaster Code = "notmaster"
	// CodeStale: CheckSequencer found the sequencer no longer current.
	CodeStale Code = "stale"
)

// Sequencer is what the holder of a lock is handed: the lock's name, its
// mode and the generation number of this grant.
type Sequencer struct {
	Lock       string
	Mode       string
	Generation uint64
}

// Request is a client's request to the master.
type Request struct {
	Op        Op
	Session   int64
	Seq       uint64
	Lock      string
	Sequencer Sequencer
}

// Response answers a Request.
type Response struct {
	Code      Code
	Sequencer Sequencer
	Master    uint64 // the replica believed master, when not this one
	// Delay is the lock-delay left when the lock is busy because of it.
	Delay int64
}

// RaftMessage carries etcd raft's messages between replicas.
type RaftMessage struct{ M *pb.Message }

// MessageTypes are one value of every message type, for schedules' matches.
func MessageTypes() []any { return []any{Request{}, Response{}, RaftMessage{}} }
