package raftkvlive

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/liveform"
)

// Response is a live node's answer to a raftkv.Request: the simulated
// nodes' raftkv.Response, and one answer they never give (a simulated node
// that loses leadership stays silent, and its client times out).
type Response struct {
	raftkv.Response
	// Unknown: the node proposed the command and lost leadership before
	// knowing whether it committed (hashicorp/raft's ErrLeadershipLost).
	Unknown string
}

// Node is one raft node: a hashicorp/raft instance with its stores, FSM and
// fault-injecting transport.
type Node struct {
	c    *Cluster
	id   int
	name string
	addr raft.ServerAddress

	mu     sync.Mutex
	r      *raft.Raft
	fsm    *FSM
	inner  *raft.InmemTransport
	logs   *raft.InmemStore
	snaps  *raft.InmemSnapshotStore
	obsCh  chan raft.Observation
	obsEnd chan struct{}
	obs    *raft.Observer
}

// Election is a leader change seen by a node.
type Election struct {
	At     time.Duration `json:"at"`
	Node   string        `json:"node"`
	Leader string        `json:"leader"`
}

// Cluster is a live raftkv group on hashicorp/raft, in this process.
type Cluster struct {
	net   *faultnet.Net
	opts  Options
	nodes []*Node
	names map[raft.ServerAddress]string

	mu        sync.Mutex
	elections []Election
	closed    bool
}

// Version is the hashicorp/raft module version the cluster runs.
const Version = "github.com/hashicorp/raft v1.8.0"

// NewCluster starts o.Nodes raft nodes n1..nN on net and bootstraps them as
// one group. Close stops them.
func NewCluster(net *faultnet.Net, o Options) (*Cluster, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{net: net, opts: o, names: map[raft.ServerAddress]string{}}
	var servers []raft.Server
	for i := 1; i <= o.Nodes; i++ {
		n := &Node{c: c, id: i, name: NodeName(i), addr: raft.ServerAddress(NodeName(i))}
		c.nodes = append(c.nodes, n)
		c.names[n.addr] = n.name
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(n.name), Address: n.addr})
		n.logs, n.snaps = raft.NewInmemStore(), raft.NewInmemSnapshotStore()
	}
	for _, n := range c.nodes {
		_, n.inner = raft.NewInmemTransportWithTimeout(n.addr, o.RPCTimeout)
	}
	c.connectAll()
	for _, n := range c.nodes {
		tr := n.wrap()
		if err := raft.BootstrapCluster(c.config(n), n.logs, n.logs, n.snaps, tr, raft.Configuration{Servers: servers}); err != nil {
			return nil, fmt.Errorf("raftkv live: bootstrap %s: %w", n.name, err)
		}
		if err := n.start(tr); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) connectAll() {
	for _, a := range c.nodes {
		for _, b := range c.nodes {
			if a != b {
				a.inner.Connect(b.addr, b.inner)
			}
		}
	}
}

func (c *Cluster) config(n *Node) *raft.Config {
	o := c.opts
	cfg := raft.DefaultConfig()
	cfg.LocalID = raft.ServerID(n.name)
	cfg.HeartbeatTimeout, cfg.ElectionTimeout = o.HeartbeatTimeout, o.ElectionTimeout
	cfg.LeaderLeaseTimeout, cfg.CommitTimeout = o.LeaderLeaseTimeout, o.CommitTimeout
	cfg.PreVoteDisabled = !o.PreVote
	cfg.SnapshotThreshold, cfg.TrailingLogs = o.SnapshotThreshold, o.TrailingLogs
	cfg.Logger = hclog.NewNullLogger()
	cfg.LogOutput = io.Discard
	return cfg
}

func (n *Node) wrap() *transport {
	c := n.c
	return &transport{InmemTransport: n.inner, net: c.net, node: n.name, names: c.names,
		timeout: func() error { return c.net.Sleep(c.opts.RPCTimeout) }}
}

// start runs a raft instance over the node's stores (n.mu not held).
func (n *Node) start(tr *transport) error {
	c := n.c
	fsm := NewFSM(c.net, n.name, lockfsm.Config{Unlock: c.opts.Unlock})
	r, err := raft.NewRaft(c.config(n), fsm, n.logs, n.logs, n.snaps, tr)
	if err != nil {
		return fmt.Errorf("raftkv live: start %s: %w", n.name, err)
	}
	ch := make(chan raft.Observation, 64)
	end := make(chan struct{})
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(obs)
	go func() {
		defer close(end)
		for o := range ch {
			lo := o.Data.(raft.LeaderObservation)
			c.mu.Lock()
			c.elections = append(c.elections, Election{At: c.net.Now(), Node: n.name, Leader: string(lo.LeaderID)})
			c.mu.Unlock()
		}
	}()
	n.mu.Lock()
	n.r, n.fsm, n.obsCh, n.obsEnd, n.obs = r, fsm, ch, end, obs
	n.mu.Unlock()
	return nil
}

// stop shuts the raft instance down and waits for its goroutines.
func (n *Node) stop() {
	n.mu.Lock()
	r, ch, end, obs := n.r, n.obsCh, n.obsEnd, n.obs
	n.r, n.obsCh = nil, nil
	n.mu.Unlock()
	if r == nil {
		return
	}
	_ = r.Shutdown().Error()
	r.DeregisterObserver(obs)
	close(ch)
	<-end
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Raft is the node's hashicorp/raft instance (nil while crashed).
func (n *Node) Raft() *raft.Raft {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.r
}

// FSM is the node's state machine (nil while crashed).
func (n *Node) FSM() *FSM {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.r == nil {
		return nil
	}
	return n.fsm
}

// Nodes are the raft nodes, n1 first.
func (c *Cluster) Nodes() []*Node { return c.nodes }

func nodeName(n *Node) string { return n.name }

// Names are the node names.
func (c *Cluster) Names() []string { return liveform.Each(c.nodes, nodeName) }

// Node returns the node called name (nil when none is).
func (c *Cluster) Node(name string) *Node {
	n, _ := liveform.Lookup(c.nodes, nodeName, name)
	return n
}

// Leader is the node that believes it leads (ties: the lowest id; "" none).
func (c *Cluster) Leader() string {
	for _, n := range c.nodes {
		if r := n.Raft(); r != nil && r.State() == raft.Leader {
			return n.name
		}
	}
	return ""
}

// Resolve maps the roles leader and followers to node names.
func (c *Cluster) Resolve(role string) ([]string, bool) {
	switch role {
	case "leader":
		if l := c.Leader(); l != "" {
			return []string{l}, true
		}
		return nil, true
	case "followers":
		l := c.Leader()
		var out []string
		for _, n := range c.nodes {
			if n.name != l {
				out = append(out, n.name)
			}
		}
		return out, true
	}
	return nil, false
}

// WaitLeader waits up to d for a leader (the initial leader, if the options
// name one: leadership is transferred to it) and returns its name.
func (c *Cluster) WaitLeader(d time.Duration) (string, error) {
	deadline := time.Now().Add(d)
	want := c.opts.InitialLeader
	transferred := false
	for time.Now().Before(deadline) {
		l := c.Leader()
		switch {
		case l != "" && (want == "" || l == want):
			return l, nil
		case l != "" && !transferred:
			n := c.Node(want)
			if r := c.Node(l).Raft(); r != nil {
				_ = r.LeadershipTransferToServer(raft.ServerID(n.name), n.addr).Error()
				transferred = true
			}
		}
		if err := c.net.Sleep(time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("raftkv live: no leader (wanted %q) within %v", want, d)
}

// Crash stops node name at once; Restart brings it back.
func (c *Cluster) Crash(name string) error {
	n := c.Node(name)
	if n == nil {
		return fmt.Errorf("raftkv live: no node %q", name)
	}
	n.stop()
	return nil
}

// Restart starts a crashed node again, over its stores (restart=keep) or
// empty ones (restart=lose), on a fresh transport at the same address.
func (c *Cluster) Restart(name string) error {
	n := c.Node(name)
	if n == nil {
		return fmt.Errorf("raftkv live: no node %q", name)
	}
	if n.Raft() != nil {
		return nil
	}
	if c.opts.Restart == RestartLose {
		n.logs, n.snaps = raft.NewInmemStore(), raft.NewInmemSnapshotStore()
	}
	_, n.inner = raft.NewInmemTransportWithTimeout(n.addr, c.opts.RPCTimeout)
	c.connectAll()
	return n.start(n.wrap())
}

// Elections are the leader changes the nodes observed, in time order.
func (c *Cluster) Elections() []Election {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]Election(nil), c.elections...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// Close shuts every node down and waits for their goroutines.
func (c *Cluster) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.stop() }()
	}
	wg.Wait()
}

// Serve handles one client request at node name: a follower redirects, the
// leader stamps the command (stamp=leader) with its wall clock, proposes it
// and answers with the state machine's result.
func (c *Cluster) Serve(name string, req raftkv.Request) Response {
	n := c.Node(name)
	r := n.Raft()
	if r == nil {
		return notLeader(0) // a crashed node: connection refused
	}
	if r.State() != raft.Leader {
		_, id := r.LeaderWithID()
		lead, _ := nodeID(string(id), len(c.nodes))
		return notLeader(uint64(lead))
	}
	cmd := req.Cmd
	if c.opts.Stamp == raftkv.StampLeader {
		cmd.Stamp = int64(c.net.Wall(name))
	}
	f := r.Apply(lockfsm.Encode(cmd), c.opts.RequestTimeout)
	err := f.Error()
	switch {
	case err == nil:
		res, _ := f.Response().(ApplyResult)
		if res.Err != nil {
			return Response{Response: raftkv.Response{Invalid: res.Err.Error()}}
		}
		return Response{Response: raftkv.Response{Result: res.Result, Index: f.Index()}}
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrEnqueueTimeout),
		errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrAbortedByRestore):
		return notLeader(0)
	default: // ErrLeadershipLost, ErrRaftShutdown after enqueue: it may commit
		return Response{Unknown: err.Error()}
	}
}

// notLeader is the answer of a node that did not propose the command
// (leader: the raft id of the leader it knows of, 0 none).
func notLeader(leader uint64) Response {
	return Response{Response: raftkv.Response{NotLeader: true, Leader: leader}}
}
