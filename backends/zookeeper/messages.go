package zookeeper

import (
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Op is a client request's operation.
type Op string

// Operations of the client protocol.
const (
	OpConnect     Op = "connect"
	OpPing        Op = "ping"
	OpCreate      Op = "create"
	OpDelete      Op = "delete"
	OpGetChildren Op = "getChildren"
	OpExists      Op = "exists"
	OpSync        Op = "sync"
)

// Code is the outcome of a request.
type Code string

// Result codes (ZooKeeper's KeeperException codes that matter to the lock).
const (
	CodeOK         Code = "ok"
	CodeNoNode     Code = "nonode"
	CodeNodeExists Code = "nodeexists"
	// CodeExpired: the session is gone (SESSIONEXPIRED).
	CodeExpired Code = "expired"
	// CodeNotReady: the server is not part of a working quorum (it closes the
	// connection: CONNECTIONLOSS for the client).
	CodeNotReady Code = "notready"
)

// Request is a client's request to the server it is connected to.
type Request struct {
	Op         Op
	Session    int64
	Xid        uint64
	Path       string
	Ephemeral  bool
	Sequential bool
	Watch      bool
	Timeout    int64 // connect: the session timeout (ns)
	New        bool  // connect: create the session (else resume it)
	// Until (connect) is the true time at which the client gives up this
	// connection attempt and closes its socket. A real client sends its
	// ConnectRequest only once the TCP handshake is done, which cannot
	// happen after the client closed the socket: a connect arriving later
	// (held by a cut) belongs to no connection and is ignored. 0: no bound.
	Until time.Duration
}

// onSession is r as sent on session with xid (see roundTrip).
func (r Request) onSession(session int64, xid uint64) Request {
	r.Session, r.Xid = session, xid
	return r
}

// Stat is a znode's metadata.
type Stat struct {
	Czxid, Mzxid   uint64
	Version        int32
	Cversion       int32
	EphemeralOwner int64
}

// Response answers a Request.
type Response struct {
	Code     Code
	Path     string   // create: the created path (with its sequence suffix)
	Stat     Stat     // create, exists
	Children []string // getChildren: names, sorted
	Zxid     uint64   // the last zxid the server had applied
}

// replyCode is the server's code (see roundTrip).
func (r Response) replyCode() Code { return r.Code }

// WatchEvent is a fired watch, sent to the client that set it.
type WatchEvent struct {
	Type string // created, deleted, children
	Path string
	Zxid uint64
}

// Touch tells the leader that a session is alive (a follower relays its
// clients' pings).
type Touch struct{ Session int64 }

// RaftMessage carries etcd raft's messages between servers.
type RaftMessage struct{ M *pb.Message }

// MessageTypes are one value of every message type, for schedules' matches.
func MessageTypes() []any {
	return []any{Request{}, Response{}, WatchEvent{}, Touch{}, RaftMessage{}}
}
