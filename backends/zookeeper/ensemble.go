package zookeeper

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/locklab/locklab/sim"
)

// Event is something the ensemble did that a reader of the history needs:
// a session expired (and the nodes its expiry deleted), a leader elected.
type Event struct {
	// F is "session-expired" or "leader-elected".
	F string
	// Targets are the nodes concerned (the leader; the session's client).
	Targets []string
	// Detail says it in words.
	Detail string
	At     time.Duration
}

// Ensemble is a ZooKeeper ensemble in one world: servers zk1..zkN.
type Ensemble struct {
	opts    Options
	servers []*Server
	nodes   []*sim.Node
	clients map[string]*Client
	// OnEvent, when set, is told of every Event.
	OnEvent func(Event)
	// Figures counted over the run.
	Expired, Elections int
}

// ServerName is the name of server i (1-based).
func ServerName(i int) string { return fmt.Sprintf("zk%d", i) }

// NewEnsemble adds the servers zk1..zkN to w.
func NewEnsemble(w *sim.World, o Options) (*Ensemble, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	e := &Ensemble{opts: o, clients: map[string]*Client{}}
	for i := range o.Servers {
		e.servers = append(e.servers, &Server{ens: e, id: uint64(i + 1)})
	}
	for i, s := range e.servers {
		e.nodes = append(e.nodes, w.AddNode(ServerName(i+1), sim.NodeOptions{Handler: s}))
	}
	return e, nil
}

// Options are the ensemble's options.
func (e *Ensemble) Options() Options { return e.opts }

// Nodes are the servers' nodes.
func (e *Ensemble) Nodes() []*sim.Node { return slices.Clone(e.nodes) }

// Leader is the up server that leads the highest term, nil if none.
func (e *Ensemble) Leader() *sim.Node {
	var best *Server
	for i, s := range e.servers {
		if e.nodes[i].Down() || s.state != raft.StateLeader {
			continue
		}
		if best == nil || s.term > best.term {
			best = s
		}
	}
	if best == nil {
		return nil
	}
	return e.nodes[best.id-1]
}

// Roles are the names Resolve understands that follow the ensemble's state,
// which random schedules aim at too: the leader, the followers, and the
// server client c1 is connected to.
func Roles() []string { return []string{"leader", "followers", "server-of:c1"} }

// Resolve maps schedule names: "leader", "followers", "server-of:cN" (the
// server client cN is connected to when the fault starts) and
// "servers-but:cN" (every other server).
func (e *Ensemble) Resolve(name string) ([]*sim.Node, bool) {
	switch name {
	case "leader":
		if l := e.Leader(); l != nil {
			return []*sim.Node{l}, true
		}
		return nil, true
	case "followers":
		l := e.Leader()
		var out []*sim.Node
		for _, n := range e.nodes {
			if n != l {
				out = append(out, n)
			}
		}
		return out, true
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
	c := newClient(p, e)
	e.clients[p.Node().Name()] = c
	return c
}

func (e *Ensemble) emit(ev Event) {
	if e.OnEvent != nil {
		e.OnEvent(ev)
	}
}

func (e *Ensemble) leaderElected(s *Server, term uint64) {
	e.Elections++
	e.emit(Event{F: "leader-elected", Targets: []string{s.node.Name()}, At: s.node.World().Now(),
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
	e.emit(Event{F: "session-expired", Targets: targets, Detail: d, At: s.node.World().Now()})
}

func sortedClientNames(m map[string]*Client) []string {
	out := make([]string, 0, len(m))
	for k := range m { // determinism:ok sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// quietLogger discards raft's logging but keeps its panics.
type quietLogger struct{}

func (quietLogger) Debug(...any)              {}
func (quietLogger) Debugf(string, ...any)     {}
func (quietLogger) Error(...any)              {}
func (quietLogger) Errorf(string, ...any)     {}
func (quietLogger) Info(...any)               {}
func (quietLogger) Infof(string, ...any)      {}
func (quietLogger) Warning(...any)            {}
func (quietLogger) Warningf(string, ...any)   {}
func (quietLogger) Fatal(v ...any)            { panic(fmt.Sprint(v...)) }
func (quietLogger) Fatalf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
func (quietLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (quietLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }

var _ raft.Logger = quietLogger{}

// Describe says, server by server, its role, epoch, last zxid, whether it
// serves clients, and the children of every lock: for debugging and stories.
func (e *Ensemble) Describe() []string {
	var out []string
	for i, s := range e.servers {
		if s.tree == nil {
			out = append(out, fmt.Sprintf("%s: down", ServerName(i+1)))
			continue
		}
		line := fmt.Sprintf("%s: %v term %d lead %d zxid %#x serving=%v sessions=%v", ServerName(i+1), s.state, s.term, s.lead,
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
