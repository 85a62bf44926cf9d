package kubernetes

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/sim"
)

// Cluster is a Kubernetes control plane in one world: the etcd cluster
// (backends/etcd's, etcd1..N) and the API servers apiserver1..N in front of
// it, each its own node with its own etcd connection.
type Cluster struct {
	opts    Options
	etcd    *etcd.Cluster
	servers []*APIServer
	nodes   []*sim.Node
	clients map[string]*sim.Node // identity -> client node
	// holders are the latest holder of each Lease the API servers saw, by
	// name, and the resourceVersion it was seen at.
	holders map[string]seenRecord
	truth   *truth // nil unless RecordGrants
	// Figures counted over the run: ForeignReleases counts the releases
	// (ReleaseOnCancel's update to no holder) of a Lease another client held.
	Takeovers, Releases, ForeignReleases int
	// OnForeignRelease, when set, is told of each such release: the
	// releasing client, the holder it cleared, the Lease.
	OnForeignRelease func(client, holder, lease string)
}

type seenRecord struct {
	rev    int64
	holder string
}

// APIServerName is the name of API server i (1-based).
func APIServerName(i int) string { return fmt.Sprintf("apiserver%d", i) }

// NewCluster adds etcd's members and then the API servers to w.
func NewCluster(w *sim.World, o Options) (*Cluster, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ec, err := etcd.NewCluster(w, o.etcdOptions())
	if err != nil {
		return nil, fmt.Errorf("kubernetes: its etcd: %w", err)
	}
	c := &Cluster{opts: o, etcd: ec, clients: map[string]*sim.Node{}, holders: map[string]seenRecord{}}
	for i := range o.APIServers {
		s := &APIServer{cluster: c, name: APIServerName(i + 1)}
		c.servers = append(c.servers, s)
		c.nodes = append(c.nodes, w.AddNode(s.name, sim.NodeOptions{Handler: s}))
	}
	return c, nil
}

// Nodes are every server node: etcd's members, then the API servers.
func (c *Cluster) Nodes() []*sim.Node { return append(c.etcd.Nodes(), c.nodes...) }

// APIServers are the API servers' nodes.
func (c *Cluster) APIServers() []*sim.Node { return slices.Clone(c.nodes) }

// Roles are the names Resolve understands that follow the cluster's state.
func Roles() []string { return []string{"apiservers", "etcd-leader", "etcd-followers"} }

// Resolve maps "apiservers", "etcd-leader" and "etcd-followers".
func (c *Cluster) Resolve(name string) ([]*sim.Node, bool) {
	switch name {
	case "apiservers":
		return c.APIServers(), true
	case "etcd-leader":
		return c.etcd.Resolve("leader")
	case "etcd-followers":
		return c.etcd.Resolve("followers")
	}
	return nil, false
}

// NewClient returns the elector (client-go's leaderelection over a
// LeaseLock) of process p, whose identity is its node's name.
func (c *Cluster) NewClient(p *sim.Proc) *Client {
	cl := newClient(p, c)
	c.clients[cl.identity] = p.Node()
	return cl
}

// saw notes that API server server read or (for client, "" for a read)
// wrote the Lease name's record rec at resourceVersion rev, at true time
// at: the record of holders.
func (c *Cluster) saw(server, name, client string, rev int64, rec Record, at time.Duration) {
	last, ok := c.holders[name]
	if ok && rev <= last.rev {
		return
	}
	c.holders[name] = seenRecord{rev: rev, holder: rec.Holder}
	switch {
	case rec.Holder == last.holder:
	case rec.Holder == "":
		c.Releases++
		if client != "" && last.holder != "" && client != last.holder {
			c.ForeignReleases++
			if c.OnForeignRelease != nil {
				c.OnForeignRelease(client, last.holder, name)
			}
		}
	default:
		c.Takeovers++
	}
	c.truth.saw(server, name, client, last.holder, rec, c.clients, at)
}

// leaseName is the Lease's name in its etcd key.
func leaseName(key string) string {
	return strings.TrimPrefix(key, leaseKey(""))
}
