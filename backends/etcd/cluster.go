package etcd

import (
	"slices"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// SystemEvent is something the cluster did by itself that a reader of the
// history should see: a lease expired ("lease-expired") or a new leader
// restarted every lease ("lease-extended").
type SystemEvent struct {
	Kind   system.EventKind
	Member string
	Detail string
}

// Cluster is an etcd cluster of 3 or 5 members in one world.
type Cluster struct {
	opts    Options
	servers []*Server
	nodes   []*sim.Node
	// cmds holds every proposed command by id; raft entries carry the id.
	// Commands are immutable once proposed, so sharing them between members
	// shares no state.
	cmds    map[uint64]Command
	nextCmd uint64
	// OnEvent, when set, is told of every SystemEvent.
	OnEvent   func(n *sim.Node, e SystemEvent)
	events    []SystemEvent
	truth     *grantRecord     // the record of grants (nil: none)
	user      *grantRecord     // the record of grants of a user's lock (nil: none)
	userLocks userLocks        // the user's lock keys it follows
	kvOps     kvEntries        // the log entries of the generic KV API, by command id
	writes    *writeTruth      // the record of the resource's writes (nil: none)
	initial   map[string]int64 // the resource's initial values (Preset)
}

// NewCluster adds the members etcd1..etcdN to w.
func NewCluster(w *sim.World, o Options) (*Cluster, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, cmds: map[uint64]Command{}}
	voters := make([]uint64, o.Members)
	for i := range voters {
		voters[i] = uint64(i + 1)
	}
	for _, id := range voters {
		c.servers = append(c.servers, newServer(c, id, newDisk(voters)))
	}
	c.nodes = raftnode.AddNodes(w, c.servers, MemberName)
	return c, nil
}

// Options are the cluster's options.
func (c *Cluster) Options() Options { return c.opts }

// Nodes are the members' nodes, etcd1..etcdN.
func (c *Cluster) Nodes() []*sim.Node { return slices.Clone(c.nodes) }

// Servers are the members' handlers, in the same order.
func (c *Cluster) Servers() []*Server { return slices.Clone(c.servers) }

// Events are the system events so far.
func (c *Cluster) Events() []SystemEvent { return slices.Clone(c.events) }

func (c *Cluster) remember(cmd Command) uint64 {
	c.nextCmd++
	c.cmds[c.nextCmd] = cmd
	return c.nextCmd
}

func (c *Cluster) command(id uint64) Command { return c.cmds[id] }

func (c *Cluster) event(n *sim.Node, kind system.EventKind, detail string) {
	e := SystemEvent{Kind: kind, Member: n.Name(), Detail: detail}
	c.events = append(c.events, e)
	if c.OnEvent != nil {
		c.OnEvent(n, e)
	}
}

// Leader is the member that is up and leads the highest term, or nil.
func (c *Cluster) Leader() *sim.Node {
	return raftnode.LeaderNode(c.servers, c.nodes, (*Server).replica)
}

// Resolve maps "leader" and "followers" to members when a fault starts.
func (c *Cluster) Resolve(name string) ([]*sim.Node, bool) {
	return raftnode.Resolve(name, "leader", "followers", c.nodes, c.Leader)
}

// NewKV returns the KV client of process p.
func (c *Cluster) NewKV(p *sim.Proc) *KVClient { return newKV(p, sim.IDs(c.nodes), c.opts) }

// NewLock returns the lock client (session + recipe) of process p.
func (c *Cluster) NewLock(p *sim.Proc) *Lock {
	return NewLock(p, simTransport{kv: c.NewKV(p), p: p}, c.opts, "")
}
