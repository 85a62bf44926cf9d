package raftkv

import (
	"slices"

	"github.com/locklab/locklab/backends/raftnode"
	"github.com/locklab/locklab/sim"
)

// Cluster is a raft group of lock servers in one world, with the audit that
// watches it.
type Cluster struct {
	opts    Options
	servers []*Server
	nodes   []*sim.Node
	audit   *Audit
	truth   *truth // the ground truth, when recorded (see RecordGrants)
	decoder decoder
	// mem is the storage taken from a released cluster (nil: none), which
	// this one's logs and tables start from; released: Release ran.
	mem      *memory
	released bool
}

// NewCluster adds the nodes n1..nN of a raft group to w.
func NewCluster(w *sim.World, o Options) (*Cluster, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	mem := memories.Get()
	c := &Cluster{opts: o, audit: newAudit(), mem: mem}
	c.decoder.mem = mem
	c.audit.applied, c.audit.acks = mem.applied, mem.acks
	mem.applied, mem.acks = nil, nil
	voters := make([]uint64, o.Nodes)
	for i := range voters {
		voters[i] = uint64(i + 1)
	}
	for _, id := range voters {
		c.servers = append(c.servers, newServer(c, id, newDisk(voters, o.Fsync, mem.takeLog())))
	}
	c.nodes = raftnode.AddNodes(w, c.servers, NodeName)
	return c, nil
}

// Options are the cluster's options.
func (c *Cluster) Options() Options { return c.opts }

// Nodes are the raft nodes n1..nN.
func (c *Cluster) Nodes() []*sim.Node { return slices.Clone(c.nodes) }

// Servers are the nodes' handlers, in the same order.
func (c *Cluster) Servers() []*Server { return slices.Clone(c.servers) }

// Audit is the cluster's audit.
func (c *Cluster) Audit() *Audit { return c.audit }

// Leader is the node that is up and believes it leads the highest term, or
// nil when none does.
func (c *Cluster) Leader() *sim.Node {
	return raftnode.LeaderNode(c.servers, c.nodes, (*Server).replica)
}

// Followers are the nodes other than the Leader (every node when there is none).
func (c *Cluster) Followers() []*sim.Node {
	out, _ := c.Resolve("followers")
	return out
}

// Resolve maps the names a fault schedule may use for this system: "leader"
// (the current leader, nothing when there is none) and "followers", looked
// up when the fault starts.
func (c *Cluster) Resolve(name string) ([]*sim.Node, bool) {
	return raftnode.Resolve(name, "leader", "followers", c.nodes, c.Leader)
}

// Violations lists every breach of Raft's guarantees the audit saw, plus
// acknowledged commands missing from the logs of a majority now.
func (c *Cluster) Violations() []string {
	disks := make([]*Disk, len(c.servers))
	for i, s := range c.servers {
		disks[i] = s.disk
	}
	return append(slices.Clone(c.audit.violations), c.audit.checkKept(disks)...)
}

// NewClient returns the lock client library of process p.
func (c *Cluster) NewClient(p *sim.Proc) *Client {
	return NewClient(p, &procTransport{p: p, servers: sim.IDs(c.nodes), stamps: c.opts.Stamp == StampClient, truth: c.truth}, c.opts)
}
