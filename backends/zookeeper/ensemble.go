package zookeeper

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// Event is something the ensemble did that a reader of the history needs:
// a session expired (and the nodes its expiry deleted), a leader elected.
type Event struct {
	// F is "session-expired" or "leader-elected".
	F system.EventKind
	// Targets are the nodes concerned (the leader; the session's client).
	Targets []string
	// Detail says it in words.
	Detail string
	At     time.Duration
	// Deleted are the nodes a session's expiry deleted.
	Deleted []string
	// Promised is, for a session's expiry, until when (true time) the
	// ensemble had promised the session: its last contact with the serving
	// leader of the highest term (not a new leader's re-arming, nor a
	// contact after the leader decided to expire it), plus its timeout (0:
	// none). An expiry at or
	// after it kept the promise; one before it (a leader whose clock runs
	// fast) broke it.
	Promised time.Duration
}

// LockNode splits a lock node's path, /lock/<key>/<name>, into its key; ok
// is false for any other path.
func LockNode(p string) (key string, ok bool) {
	dir := path.Dir(p)
	if path.Dir(dir) != "/lock" {
		return "", false
	}
	return path.Base(dir), true
}

// Ensemble is a ZooKeeper ensemble in one world: servers zk1..zkN.
type Ensemble struct {
	opts    Options
	servers []*Server
	nodes   []*sim.Node
	clients map[string]*handle
	// OnEvent, when set, is told of every Event.
	OnEvent func(Event)
	// Figures counted over the run.
	Expired, Elections int

	// The record of grants (RecordGrants): the holder of each lock is the
	// owner of its lowest node; grants are recorded by the first server to
	// apply each transaction.
	grants   *lockapi.GrantLog
	recorded uint64       // the last zxid the record has seen
	holders  []lockHolder // the lowest node of each lock, by key
	// acked is, per session, the true time of its last contact with the
	// serving leader of the highest term, for the record: the leader
	// promises the session its timeout from there. Nothing the ensemble
	// decides reads it.
	acked map[int64]time.Duration
	// paths, when set, are the lock directories of a user's lock over the
	// generic API (userdeploy.go); nil: the recipe's /lock/<key>.
	paths *lockPaths
}

// lockHolder is a lock's lowest node and the session that owns it.
type lockHolder struct {
	key, node string
	session   int64
}

// grantScope is the scope of the ensemble's grants: one replicated tree.
const grantScope = "zookeeper"

// ServerName is the name of server i (1-based).
func ServerName(i int) string { return fmt.Sprintf("zk%d", i) }

// NewEnsemble adds the servers zk1..zkN to w.
func NewEnsemble(w *sim.World, o Options) (*Ensemble, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	e := &Ensemble{opts: o, clients: map[string]*handle{}, acked: map[int64]time.Duration{}}
	for i := range o.Servers {
		e.servers = append(e.servers, newServer(e, uint64(i+1)))
	}
	e.nodes = raftnode.AddNodes(w, e.servers, ServerName)
	return e, nil
}

// Options are the ensemble's options.
func (e *Ensemble) Options() Options { return e.opts }

// Nodes are the servers' nodes.
func (e *Ensemble) Nodes() []*sim.Node { return slices.Clone(e.nodes) }

// Leader is the up server that leads the highest term, nil if none.
func (e *Ensemble) Leader() *sim.Node {
	return raftnode.LeaderNode(e.servers, e.nodes, (*Server).replica)
}

// Roles are the names Resolve understands that follow the ensemble's state,
// which random schedules aim at too: the leader, the followers, and the
// server client c1 is connected to.
func Roles() []string { return []string{"leader", "followers", "server-of:c1"} }

// Resolve maps schedule names: "leader", "followers", "server-of:cN" (the
// server client cN is connected to when the fault starts) and
// "servers-but:cN" (every other server).
func (e *Ensemble) Resolve(name string) ([]*sim.Node, bool) {
	if ns, ok := raftnode.Resolve(name, "leader", "followers", e.nodes, e.Leader); ok {
		return ns, true
	}
	for _, prefix := range []string{"server-of:", "servers-but:"} {
		client, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		c := e.clients[client]
		conn := 0
		if c != nil {
			conn = c.conn
		}
		if prefix == "server-of:" {
			return []*sim.Node{e.nodes[conn]}, true
		}
		var out []*sim.Node
		for i, n := range e.nodes {
			if i != conn {
				out = append(out, n)
			}
		}
		return out, true
	}
	return nil, false
}

// NewClient returns the lock client (Curator's InterProcessMutex over a
// ZooKeeper handle) of process p.
func (e *Ensemble) NewClient(p *sim.Proc) *Client {
	h := newHandle(p, e)
	e.clients[p.Node().Name()] = h
	return NewClient(p, h, e.opts)
}

func (e *Ensemble) emit(ev Event) {
	if e.OnEvent != nil {
		e.OnEvent(ev)
	}
}

func (e *Ensemble) leaderElected(s *Server, term uint64) {
	e.Elections++
	e.emit(Event{F: system.EventLeaderElected, Targets: []string{s.node.Name()}, At: s.node.World().Now(),
		Detail: fmt.Sprintf("%s leads epoch %d; it re-arms every session's timeout", s.node.Name(), term)})
}

func (e *Ensemble) sessionExpired(s *Server, session int64, deleted []string) {
	e.Expired++
	targets := []string{s.node.Name()}
	owner := ""
	for _, name := range sortedClientNames(e.clients) {
		if e.clients[name].ownsSession(session) {
			owner = name
			targets = append(targets, name)
		}
	}
	d := fmt.Sprintf("session %#x", session)
	if owner != "" {
		d += " of " + owner
	}
	d += fmt.Sprintf(" expired on leader %s (no contact for its timeout)", s.node.Name())
	if len(deleted) > 0 {
		d += "; node deleted: " + strings.Join(deleted, ", ")
	}
	e.emit(Event{F: system.EventSessionExpired, Targets: targets, Detail: d, At: s.node.World().Now(), Deleted: deleted, Promised: e.promised(session)})
}

func sortedClientNames(m map[string]*handle) []string { return sorted.Keys(m) }

// Describe says, server by server, its role, epoch, last zxid, whether it
// serves clients, and the children of every lock: for debugging and stories.
func (e *Ensemble) Describe() []string {
	var out []string
	for i, s := range e.servers {
		if s.tree == nil {
			out = append(out, fmt.Sprintf("%s: down", ServerName(i+1)))
			continue
		}
		line := fmt.Sprintf("%s: %v term %d lead %d zxid %#x serving=%v sessions=%v", ServerName(i+1), s.r.Role(), s.r.Term(), s.r.Lead(),
			s.tree.zxid, s.serving(), s.tree.sessionIDs())
		if n, ok := s.tree.nodes["/lock"]; ok {
			for _, k := range n.children {
				dir := "/lock/" + k
				line += " " + dir + "=["
				for _, c := range s.tree.nodes[dir].children {
					line += fmt.Sprintf(" %s(%#x)", c, s.tree.nodes[dir+"/"+c].stat.EphemeralOwner)
				}
				line += " ]"
			}
		}
		out = append(out, line)
	}
	return out
}

// RecordGrants makes the ensemble keep its record of the grants it makes in
// g (see lockapi.GrantLog): a grant is a lock's lowest node, given to the
// client whose session owns it, from the transaction that made it the lowest
// until it is deleted. A deletion by its owner (a release) ends the grant; a
// session's expiry does not: the grant then lasts as long as the leader had
// promised the session (its last contact with the serving leader of the
// highest term, plus its timeout, moved by every contact), so an expiry
// before that promise ran out (a leader whose clock runs fast) shows as an
// overlap with the next grant.
func (e *Ensemble) RecordGrants(g *lockapi.GrantLog) { e.grants = g }

// applied updates the record with the transaction x, of zxid, that s
// applied, if no server applied it before.
func (e *Ensemble) applied(s *Server, x txn, c change, zxid uint64) {
	if !e.grants.Recording() || zxid <= e.recorded {
		return
	}
	e.recorded = zxid
	var keys []string
	for _, p := range append(slices.Clone(c.deleted), c.created...) {
		if k, ok := e.lockKey(p); ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	now := s.node.World().Now()
	for _, k := range keys {
		var low lockHolder
		if n, ok := s.tree.nodes[e.lockDir(k)]; ok && len(n.children) > 0 {
			children := slices.Clone(n.children)
			sortBySequence(children)
			p := path.Join(e.lockDir(k), children[0])
			low = lockHolder{key: k, node: p, session: s.tree.nodes[p].stat.EphemeralOwner}
		}
		i := slices.IndexFunc(e.holders, func(h lockHolder) bool { return h.key == k })
		var prev lockHolder
		if i >= 0 {
			prev = e.holders[i]
		}
		if prev.node == low.node {
			continue
		}
		if prev.node != "" && x.Op == "delete" {
			// An expiry leaves the grant to run out its promise.
			e.grants.Removed(grantScope, k, prev.node, e.clientOf(x.Session), now)
		}
		if i >= 0 {
			e.holders = slices.Delete(e.holders, i, i+1)
		}
		if low.node == "" {
			continue
		}
		e.holders = append(e.holders, low)
		until := e.promised(low.session)
		if until == 0 {
			until = now // nothing promised: the grant protects nobody yet
		}
		e.grants.Granted(grantScope, s.node.Name(), k, low.node, e.clientOf(low.session), now, until)
	}
}

// contacted notes that the serving leader s, which leads the highest term
// (a deposed leader that has not heard of its successor promises nothing),
// heard from session, and moves, in the record, the promise of the locks it
// holds.
func (e *Ensemble) contacted(s *Server, session int64) {
	now := s.node.World().Now()
	e.acked[session] = now
	if !e.grants.Recording() {
		return
	}
	for _, h := range e.holders {
		if h.session == session {
			e.grants.Renewed(grantScope, h.key, h.node, now, now+e.opts.SessionTimeout)
		}
	}
}

// promised is until when (true time) the ensemble had promised session:
// its last contact with the serving leader of the highest term, plus its
// timeout (0 if none).
func (e *Ensemble) promised(session int64) time.Duration {
	at, ok := e.acked[session]
	if !ok {
		return 0
	}
	return at + e.opts.SessionTimeout
}

// clientOf is the name of the client whose session id is ("" if none).
func (e *Ensemble) clientOf(id int64) string {
	for _, name := range sortedClientNames(e.clients) {
		if e.clients[name].ownsSession(id) {
			return name
		}
	}
	return ""
}
