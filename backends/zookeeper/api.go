package zookeeper

import (
	"fmt"
	"path"
	"slices"

	"github.com/locklab/locklab/sim"
)

// The generic client API (APIRequest, APIResponse): the requests a user's
// own lock makes through Conn, the simulated go-zookeeper connection, as a
// real ZooKeeper server serves them. The lock recipe of the built-in system
// speaks Request and Response; the two share the servers, their log, their
// sessions and their watches, and neither changes what the other does.

// Operations of the generic client API beside OpCreate, OpDelete, OpExists
// and OpGetChildren.
const (
	// OpGetData reads a node's data and stat.
	OpGetData Op = "getData"
	// OpSetData writes a node's data, if its version is the one given.
	OpSetData Op = "setData"
	// OpSetWatches re-registers a client's watches on the server it
	// reconnected to, firing those whose change the client missed.
	OpSetWatches Op = "setWatches"
)

// Result codes of the generic API beside those of the recipe's protocol.
const (
	// CodeBadVersion: the version given to a delete or a setData is not the
	// node's (BADVERSION).
	CodeBadVersion Code = "badversion"
	// CodeNotEmpty: a delete of a node that has children (NOTEMPTY).
	CodeNotEmpty Code = "notempty"
	// CodeNoChildrenForEphemerals: a create under an ephemeral node.
	CodeNoChildrenForEphemerals Code = "nochildrenforephemerals"
	// CodeInvalidACL: a create with an empty ACL.
	CodeInvalidACL Code = "invalidacl"
)

// APIRequest is a request of the generic client API (Conn) to the server
// the client is connected to.
type APIRequest struct {
	Op         Op
	Session    int64
	Xid        uint64
	Path       string
	Data       []byte
	Ephemeral  bool
	Sequential bool
	// Version is the expected version of a delete or setData (-1: any).
	Version int32
	// ACLs is the number of ACL entries of a create (ZooKeeper refuses
	// none; the entries themselves are not modelled: every node is
	// world-accessible).
	ACLs  int
	Watch bool
	// Time is the client's wall clock (ms) when it sent a write, standing in
	// for the leader's clock that stamps ctime and mtime.
	Time int64
	// Watches (setWatches) are the paths of the client's data, exist and
	// child watches, and RelativeZxid the last zxid the client saw.
	DataWatches, ExistWatches, ChildWatches []string
	RelativeZxid                            uint64
}

// onSession is r as sent on session with xid (see roundTrip).
func (r APIRequest) onSession(session int64, xid uint64) APIRequest {
	r.Session, r.Xid = session, xid
	return r
}

// APIStat is a znode's metadata as the generic API returns it: every field
// of ZooKeeper's Stat.
type APIStat struct {
	Czxid, Mzxid, Pzxid     uint64
	Ctime, Mtime            int64 // ms
	Version, Cversion       int32
	EphemeralOwner          int64
	DataLength, NumChildren int32
}

// APIResponse answers an APIRequest.
type APIResponse struct {
	Code     Code
	Path     string // create: the created path
	Data     []byte
	Stat     APIStat
	Children []string
	Zxid     uint64 // the last zxid the server had applied
}

// replyCode is the server's code (see roundTrip).
func (r APIResponse) replyCode() Code { return r.Code }

// APIMessageTypes are one value of every message type of a deployment whose
// clients use the generic API: the recipe's and the API's.
func APIMessageTypes() []any {
	return append(MessageTypes(), APIRequest{}, APIResponse{})
}

// apiRequest serves a request of the generic API: reads from the server's
// own tree (which may lag), writes through the log, as request does for the
// recipe's protocol.
func (s *Server) apiRequest(m sim.Message, r APIRequest) {
	if !s.serving() {
		s.replyAPI(m, APIResponse{Code: CodeNotReady})
		return
	}
	if _, live := s.tree.sessions[r.Session]; !live {
		s.replyAPI(m, APIResponse{Code: CodeExpired})
		return
	}
	s.touch(r.Session)
	switch r.Op {
	case OpCreate:
		if r.ACLs == 0 {
			s.replyAPI(m, APIResponse{Code: CodeInvalidACL})
			return
		}
		s.proposeAPI(m, r, txn{Op: "create", API: true, Session: r.Session, Path: r.Path, Data: r.Data,
			Ephemeral: r.Ephemeral, Sequential: r.Sequential, Time: r.Time})
	case OpDelete:
		s.proposeAPI(m, r, txn{Op: "delete", API: true, Session: r.Session, Path: r.Path, Version: r.Version})
	case OpSetData:
		s.proposeAPI(m, r, txn{Op: "set", API: true, Session: r.Session, Path: r.Path, Data: r.Data, Version: r.Version, Time: r.Time})
	case OpSync:
		// Through the log, as the recipe's sync: answered once this server
		// applied everything committed before it (ZooKeeper sends a sync
		// marker down the leader's commit stream to the same effect).
		s.proposeAPI(m, r, txn{Op: "sync", API: true, Session: r.Session, Path: r.Path})
	case OpExists, OpGetData, OpGetChildren:
		s.replyAPI(m, s.readAPI(m, r))
	case OpSetWatches:
		s.setWatches(m, r)
	default:
		panic(fmt.Sprintf("zookeeper: %s: unknown API op %q", s.node.Name(), r.Op))
	}
}

// setWatches re-registers a reconnected client's watches, as ZooKeeper's
// SetWatches does: a watch whose change happened after RelativeZxid fires
// at once (a data watch whose node is gone or changed, an exist watch
// whose node now exists, a child watch whose node is gone or whose
// children changed); the others wait on this server.
func (s *Server) setWatches(m sim.Message, r APIRequest) {
	to := m.From
	fire := func(typ, p string) { s.node.Send(to, WatchEvent{Type: typ, Path: p, Zxid: s.tree.zxid}) }
	for _, p := range r.DataWatches {
		switch n, ok := s.tree.nodes[p]; {
		case !ok:
			fire("deleted", p)
		case n.dataZxid() > r.RelativeZxid:
			fire("changed", p)
		default:
			s.dataW[p] = addWatcher(s.dataW[p], to)
		}
	}
	for _, p := range r.ExistWatches {
		if _, ok := s.tree.nodes[p]; ok {
			fire("created", p)
			continue
		}
		s.dataW[p] = addWatcher(s.dataW[p], to)
	}
	for _, p := range r.ChildWatches {
		switch n, ok := s.tree.nodes[p]; {
		case !ok:
			fire("deleted", p)
		case n.pzxid > r.RelativeZxid:
			fire("children", p)
		default:
			s.childW[p] = addWatcher(s.childW[p], to)
		}
	}
	s.replyAPI(m, APIResponse{Code: CodeOK})
}

// readAPI answers a read of the generic API (exists, getData, getChildren)
// from the server's own tree.
func (s *Server) readAPI(m sim.Message, r APIRequest) APIResponse {
	n := s.read(m, r.Op, r.Path, r.Watch)
	switch {
	case n == nil:
		return APIResponse{Code: CodeNoNode}
	case r.Op == OpGetData:
		return APIResponse{Code: CodeOK, Data: slices.Clone(n.data), Stat: n.apiStat()}
	case r.Op == OpGetChildren:
		return APIResponse{Code: CodeOK, Children: slices.Clone(n.children), Stat: n.apiStat()}
	}
	return APIResponse{Code: CodeOK, Stat: n.apiStat()}
}

func (s *Server) replyAPI(m sim.Message, r APIResponse) {
	r.Zxid = s.tree.zxid
	s.node.Reply(m, r)
}

func (s *Server) proposeAPI(m sim.Message, r APIRequest, x txn) {
	if !s.submit(m, r.Session, r.Xid, x) {
		s.replyAPI(m, APIResponse{Code: CodeNotReady})
	}
}

// answerAPI answers the API request whose transaction x applied with c.
func (s *Server) answerAPI(m sim.Message, x txn, c change) {
	r := APIResponse{Code: c.code, Path: c.path}
	if c.code == CodeOK && x.Op != "delete" {
		if n, ok := s.tree.nodes[c.path]; ok {
			r.Stat = n.apiStat()
		}
	}
	s.replyAPI(m, r)
}

// dataZxid is the zxid of the node's last data change: its creation or its
// last setData (the tree's own mzxid also moves when a child goes, which the
// recipe's protocol never shows and a real server does not do).
func (n *znode) dataZxid() uint64 {
	if n.mzxid != 0 {
		return n.mzxid
	}
	return n.stat.Czxid
}

func (n *znode) apiStat() APIStat {
	pz := n.pzxid
	if pz == 0 {
		pz = n.stat.Czxid
	}
	return APIStat{Czxid: n.stat.Czxid, Mzxid: n.dataZxid(), Pzxid: pz, Ctime: n.ctime, Mtime: n.mtime,
		Version: n.stat.Version, Cversion: n.stat.Cversion, EphemeralOwner: n.stat.EphemeralOwner,
		DataLength: int32(len(n.data)), NumChildren: int32(len(n.children))}
}

// versioned is the node x changes (delete, set) when it has the version x
// asks for (-1: any); otherwise the refusal's code (no node, bad version).
func (t *tree) versioned(x txn) (*znode, Code) {
	n, ok := t.nodes[x.Path]
	switch {
	case !ok:
		return nil, CodeNoNode
	case x.Version != -1 && x.Version != n.stat.Version:
		return nil, CodeBadVersion
	}
	return n, CodeOK
}

// applyAPI applies a transaction of the generic API (x.API): ZooKeeper's
// own rules, where the recipe's protocol has the simulator's shortcuts
// (it makes missing parents and deletes without a version).
func (t *tree) applyAPI(x txn, zxid uint64) change {
	switch x.Op {
	case "create":
		return t.apiCreate(x, zxid)
	case "delete":
		n, code := t.versioned(x)
		switch {
		case code != CodeOK:
			return change{code: code}
		case len(n.children) > 0:
			return change{code: CodeNotEmpty}
		}
		t.remove(x.Path, zxid)
		return change{code: CodeOK, path: x.Path, deleted: []string{x.Path}}
	case "set":
		n, code := t.versioned(x)
		if code != CodeOK {
			return change{code: code}
		}
		n.data = slices.Clone(x.Data)
		n.stat.Version++
		n.mzxid, n.mtime = zxid, x.Time
		return change{code: CodeOK, path: x.Path, changed: []string{x.Path}}
	case "sync":
		return change{code: CodeOK, path: x.Path} // whether the node exists or not, as ZooKeeper's
	}
	panic("zookeeper: unknown API txn " + x.Op)
}

// apiCreate makes x.Path under an existing parent (NONODE otherwise).
func (t *tree) apiCreate(x txn, zxid uint64) change {
	if x.Ephemeral {
		if _, ok := t.sessions[x.Session]; !ok {
			return change{code: CodeExpired}
		}
	}
	dir := path.Dir(x.Path)
	parent, ok := t.nodes[dir]
	if !ok {
		return change{code: CodeNoNode}
	}
	if parent.stat.EphemeralOwner != 0 {
		return change{code: CodeNoChildrenForEphemerals}
	}
	p := x.Path
	if x.Sequential {
		p = fmt.Sprintf("%s%010d", p, parent.stat.Cversion)
	}
	if _, ok := t.nodes[p]; ok || p == "/" {
		return change{code: CodeNodeExists}
	}
	n := &znode{stat: Stat{Czxid: zxid, Mzxid: zxid}, data: slices.Clone(x.Data), ctime: x.Time, mtime: x.Time, pzxid: zxid}
	if x.Ephemeral {
		n.stat.EphemeralOwner = x.Session
		t.owned[x.Session] = append(t.owned[x.Session], p)
	}
	t.nodes[p] = n
	t.link(dir, path.Base(p))
	return change{code: CodeOK, path: p, stat: n.stat, created: []string{p}}
}
