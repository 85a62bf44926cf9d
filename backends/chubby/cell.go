package chubby

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// Event is something the cell did that a reader of the history needs.
type Event struct {
	// F is "session-expired", "master-elected" or "lock-delay".
	F       system.EventKind
	Targets []string
	Detail  string
	At      time.Duration
	// Lock and Over, for a "lock-delay": the master (Targets) started
	// holding Lock back for its lock-delay, or (Over) no longer does: the
	// lock-delay ran out on its clock, or it stopped being the master (it
	// crashed or lost its leadership). The start and the end of one window
	// carry the same Detail.
	Lock string
	Over bool
}

// Cell is a Chubby cell in one world: replicas cb1..cbN.
type Cell struct {
	opts    Options
	servers []*Server
	nodes   []*sim.Node
	clients map[string]*Client
	// OnEvent, when set, is told of every Event.
	OnEvent func(Event)
	// Figures counted over the run: Redelays counts the new masters that
	// restarted some lock's lock-delay.
	Expired, Elections, Delays, Redelays int
	// delays are the lock-delay windows open now, by replica and lock.
	delays map[delayKey]string
	// checkMaster is the replica the storage's checks go to first.
	checkMaster int
	truth       *truth // nil unless RecordGrants
	// decoded caches the log entries read (decode).
	decoded map[string]txn
}

// ReplicaName is the name of replica i (1-based).
func ReplicaName(i int) string { return fmt.Sprintf("cb%d", i) }

// NewCell adds the replicas to w.
func NewCell(w *sim.World, o Options) (*Cell, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := &Cell{opts: o, clients: map[string]*Client{}, delays: map[delayKey]string{}, decoded: map[string]txn{}}
	for i := range o.Replicas {
		c.servers = append(c.servers, newServer(c, uint64(i+1)))
	}
	c.nodes = raftnode.AddNodes(w, c.servers, ReplicaName)
	return c, nil
}

// Nodes are the replicas' nodes.
func (c *Cell) Nodes() []*sim.Node { return slices.Clone(c.nodes) }

// Master is the up replica that leads the highest term, nil if none.
func (c *Cell) Master() *sim.Node { return raftnode.LeaderNode(c.servers, c.nodes, (*Server).replica) }

// Roles are the names Resolve understands that follow the cell's state.
func Roles() []string { return []string{"master", "replicas"} }

// Resolve maps "master" and "replicas" (the others) when a fault starts.
func (c *Cell) Resolve(name string) ([]*sim.Node, bool) {
	return raftnode.Resolve(name, "master", "replicas", c.nodes, c.Master)
}

// NewClient returns the Chubby client library of process p.
func (c *Cell) NewClient(p *sim.Proc) *Client {
	cl := newClient(p, c)
	c.clients[p.Node().Name()] = cl
	return cl
}

func (c *Cell) emit(ev Event) {
	if c.OnEvent != nil {
		c.OnEvent(ev)
	}
}

func (c *Cell) masterElected(s *Server, delayed []string) {
	c.Elections++
	d := fmt.Sprintf("%s is master (term %d); it grants every session a fresh lease", s.node.Name(), s.r.Term())
	if len(delayed) > 0 && c.opts.LockDelay > 0 {
		c.Redelays++
		d += fmt.Sprintf(" and restarts the lock-delay of %s (%v)", strings.Join(delayed, ", "), c.opts.LockDelay)
	}
	c.emit(Event{F: system.EventMasterElected, Targets: []string{s.node.Name()}, At: s.node.World().Now(), Detail: d})
}

func (c *Cell) sessionExpired(s *Server, session int64, lost []string) {
	c.Expired++
	targets := []string{s.node.Name()}
	owner := c.sessionOwner(session)
	if owner != "" {
		targets = append(targets, owner)
	}
	d := fmt.Sprintf("session %#x", session)
	if owner != "" {
		d += " of " + owner
	}
	d += fmt.Sprintf(" expired on master %s (its lease ran out)", s.node.Name())
	if len(lost) > 0 {
		c.Delays++
		d += fmt.Sprintf("; lock-delay started on %s for %v", strings.Join(lost, ", "), c.opts.LockDelay)
	}
	c.emit(Event{F: system.EventSessionExpired, Targets: targets, Detail: d, At: s.node.World().Now()})
}

// delayKey names a lock-delay window: the master keeping it and the lock.
type delayKey struct{ server, lock string }

// delayStarted notes that master s started holding lock back for its
// lock-delay, because why (a window of its own that is still open is
// ended first).
func (c *Cell) delayStarted(s *Server, lock, why string) {
	if c.opts.LockDelay <= 0 {
		return
	}
	k := delayKey{s.node.Name(), lock}
	c.delayOver(s, lock)
	d := fmt.Sprintf("master %s holds %s back for its lock-delay of %v: %s", k.server, lock, c.opts.LockDelay, why)
	c.delays[k] = d
	c.emit(Event{F: system.EventLockDelay, Targets: []string{k.server}, Lock: lock, Detail: d, At: s.node.World().Now()})
}

// delayOver ends master s's lock-delay window of lock, if one is open.
func (c *Cell) delayOver(s *Server, lock string) {
	k := delayKey{s.node.Name(), lock}
	d, ok := c.delays[k]
	if !ok {
		return
	}
	delete(c.delays, k)
	c.emit(Event{F: system.EventLockDelay, Targets: []string{k.server}, Lock: lock, Detail: d, At: s.node.World().Now(), Over: true})
}

// delaysOver ends every lock-delay window of s (it is no longer master).
func (c *Cell) delaysOver(s *Server) {
	var locks []string
	for k := range c.delays { // determinism:ok sorted below
		if k.server == s.node.Name() {
			locks = append(locks, k.lock)
		}
	}
	slices.Sort(locks)
	for _, l := range locks {
		c.delayOver(s, l)
	}
}

// sessionOwner is the client whose session it is ("" if none is known).
func (c *Cell) sessionOwner(session int64) string {
	for _, name := range sorted.Keys(c.clients) {
		if slices.Contains(c.clients[name].sessions, session) {
			return name
		}
	}
	return ""
}

// expiredWhy says why a lock-delay started at a session's expiry.
func (c *Cell) expiredWhy(session int64) string {
	if owner := c.sessionOwner(session); owner != "" {
		return fmt.Sprintf("its holder %s's session %#x expired", owner, session)
	}
	return fmt.Sprintf("its holder's session %#x expired", session)
}

// checkTimeout bounds one CheckSequencer round trip (the storage waits for
// the answer before it writes).
const checkTimeout = 25 * time.Second

// CheckSequencer asks the master, from process p (the storage's), whether
// generation is still the current grant of lock: a round trip, after which
// the lock may change hands before the caller acts on the answer.
func (c *Cell) CheckSequencer(p *sim.Proc, lock string, generation uint64) (bool, error) {
	for range 2 * len(c.nodes) {
		reply, err := p.Call(c.nodes[c.checkMaster].ID(), Request{Op: OpCheck,
			Sequencer: Sequencer{Lock: lock, Mode: "exclusive", Generation: generation}}, checkTimeout)
		if err == nil {
			resp := reply.(Response)
			if resp.Code != CodeNotMaster {
				return resp.Code == CodeOK, nil
			}
			if resp.Master != 0 {
				c.checkMaster = int(resp.Master - 1)
				continue
			}
		}
		c.checkMaster = (c.checkMaster + 1) % len(c.nodes)
	}
	return false, errNoMaster
}
