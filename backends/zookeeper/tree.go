package zookeeper

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/sorted"
)

// txn is one entry of the replicated log: every change to the tree and to
// the set of sessions goes through it, so every server applies the same
// changes in the same (zxid) order.
type txn struct {
	Op         string `json:"op"` // session, close, create, delete, sync
	Session    int64  `json:"session,omitempty"`
	Timeout    int64  `json:"timeout,omitempty"`
	Path       string `json:"path,omitempty"`
	Ephemeral  bool   `json:"ephemeral,omitempty"`
	Sequential bool   `json:"sequential,omitempty"`
	Origin     uint64 `json:"origin,omitempty"` // the server whose client asked
	Xid        uint64 `json:"xid,omitempty"`
	Expired    bool   `json:"expired,omitempty"` // close: by the leader's expiry
	// The generic client API's (api.go): its create, delete and set follow
	// ZooKeeper's rules (applyAPI).
	API     bool   `json:"api,omitempty"`
	Data    []byte `json:"data,omitempty"`
	Version int32  `json:"version,omitempty"`
	Time    int64  `json:"time,omitempty"`
}

type znode struct {
	stat     Stat
	children []string // names, sorted
	// Of the generic client API (api.go): the node's data, the zxid of its
	// last setData, its times, the zxid of its last child change.
	data         []byte
	mzxid, pzxid uint64
	ctime, mtime int64
}

// tree is ZooKeeper's data tree plus its sessions: the replicated state.
type tree struct {
	nodes    map[string]*znode
	sessions map[int64]time.Duration // session -> timeout
	owned    map[int64][]string      // session -> its ephemeral paths
	zxid     uint64
}

func newTree() *tree {
	return &tree{nodes: map[string]*znode{"/": {}}, sessions: map[int64]time.Duration{}, owned: map[int64][]string{}}
}

// change is what applying a txn did, for replies and watches.
type change struct {
	code    Code
	path    string
	stat    Stat
	created []string // paths created
	deleted []string // paths deleted
	changed []string // paths whose data changed (the generic API's set)
}

func (t *tree) apply(x txn, zxid uint64) change {
	t.zxid = zxid
	if x.API {
		return t.applyAPI(x, zxid)
	}
	switch x.Op {
	case "session":
		t.sessions[x.Session] = time.Duration(x.Timeout)
		return change{code: CodeOK}
	case "close":
		if _, ok := t.sessions[x.Session]; !ok {
			return change{code: CodeExpired}
		}
		c := change{code: CodeOK}
		for _, p := range slices.Clone(t.owned[x.Session]) {
			t.remove(p, zxid)
			c.deleted = append(c.deleted, p)
		}
		delete(t.sessions, x.Session)
		delete(t.owned, x.Session)
		return c
	case "create":
		return t.create(x, zxid)
	case "delete":
		n, ok := t.nodes[x.Path]
		if !ok {
			return change{code: CodeNoNode}
		}
		if len(n.children) > 0 {
			return change{code: CodeNodeExists}
		}
		t.remove(x.Path, zxid)
		return change{code: CodeOK, deleted: []string{x.Path}}
	case "sync":
		return change{code: CodeOK}
	}
	panic("zookeeper: unknown txn " + x.Op)
}

// create makes x.Path (and, like creatingParentContainersIfNeeded, its
// missing parents as persistent nodes).
func (t *tree) create(x txn, zxid uint64) change {
	if x.Ephemeral {
		if _, ok := t.sessions[x.Session]; !ok {
			return change{code: CodeExpired}
		}
	}
	var c change
	dir := path.Dir(x.Path)
	if _, ok := t.nodes[dir]; !ok {
		c.created = append(c.created, t.mkdirs(dir, zxid)...)
	}
	parent := t.nodes[dir]
	p := x.Path
	if x.Sequential {
		p = fmt.Sprintf("%s%010d", p, parent.stat.Cversion)
	}
	if _, ok := t.nodes[p]; ok {
		c.code = CodeNodeExists
		return c
	}
	n := &znode{stat: Stat{Czxid: zxid, Mzxid: zxid}}
	if x.Ephemeral {
		n.stat.EphemeralOwner = x.Session
		t.owned[x.Session] = append(t.owned[x.Session], p)
	}
	t.nodes[p] = n
	t.link(dir, path.Base(p))
	c.code, c.path, c.stat = CodeOK, p, n.stat
	c.created = append(c.created, p)
	return c
}

func (t *tree) mkdirs(dir string, zxid uint64) []string {
	if _, ok := t.nodes[dir]; ok || dir == "/" {
		return nil
	}
	out := t.mkdirs(path.Dir(dir), zxid)
	t.nodes[dir] = &znode{stat: Stat{Czxid: zxid, Mzxid: zxid}}
	t.link(path.Dir(dir), path.Base(dir))
	return append(out, dir)
}

func (t *tree) link(dir, name string) {
	parent := t.nodes[dir]
	i, _ := slices.BinarySearch(parent.children, name)
	parent.children = slices.Insert(parent.children, i, name)
	parent.stat.Cversion++
	parent.pzxid = t.zxid
}

func (t *tree) remove(p string, zxid uint64) {
	n := t.nodes[p]
	delete(t.nodes, p)
	if o := n.stat.EphemeralOwner; o != 0 {
		t.owned[o] = slices.DeleteFunc(t.owned[o], func(q string) bool { return q == p })
	}
	parent := t.nodes[path.Dir(p)]
	if i, ok := slices.BinarySearch(parent.children, path.Base(p)); ok {
		parent.children = slices.Delete(parent.children, i, i+1)
	}
	parent.stat.Cversion++
	parent.stat.Mzxid = zxid
	parent.pzxid = zxid
}

// sessionIDs lists the live sessions in order.
func (t *tree) sessionIDs() []int64 {
	return sorted.Keys(t.sessions)
}

// sequence is the sequence number a sequential node's name ends with.
func sequence(name string) uint64 {
	if len(name) < 10 {
		return 0
	}
	var n uint64
	for _, c := range name[len(name)-10:] {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}

// sortBySequence orders lock node names by their sequence suffix (Curator's
// StandardLockInternalsDriver.fixForSorting).
func sortBySequence(names []string) {
	slices.SortFunc(names, func(a, b string) int {
		if c := strings.Compare(a[max(0, len(a)-10):], b[max(0, len(b)-10):]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}
