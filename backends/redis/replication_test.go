package redis

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// cluster is a primary, two replicas and a monitor on a quiet 1 ms network.
type cluster struct {
	w         *sim.World
	nodes     []*sim.Node // redis, replica1, replica2
	servers   []*Server
	mon       *Monitor
	monNode   *sim.Node
	failovers []string
}

func newCluster(cfg ServerConfig) *cluster {
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	c := &cluster{w: w}
	for i, name := range []string{"redis", "replica1", "replica2"} {
		sc := cfg
		if i > 0 {
			sc.Replica, sc.ReplicaOf = true, c.nodes[0].ID()
		}
		s := NewServerWith(sc)
		c.servers = append(c.servers, s)
		c.nodes = append(c.nodes, w.AddNode(name, sim.NodeOptions{Handler: s}))
	}
	ids := []sim.NodeID{c.nodes[0].ID(), c.nodes[1].ID(), c.nodes[2].ID()}
	c.mon = NewMonitor(MonitorConfig{Instances: ids, DownAfter: 2 * time.Second, OnFailover: func(n *sim.Node, f Failover) {
		c.failovers = append(c.failovers, fmt.Sprintf("%v %s", n.World().Now().Round(100*time.Millisecond), f.Describe(n.World())))
	}})
	c.monNode = w.AddNode("sentinel", sim.NodeOptions{Handler: c.mon})
	return c
}

func (c *cluster) client(name string, o Options, body func(p *sim.Proc, cl *Client)) *sim.Node {
	n := c.w.AddNode(name, sim.NodeOptions{})
	n.Spawn(name, func(p *sim.Proc) {
		body(p, NewClientFor(p, Topology{Primary: c.nodes[0].ID(), Monitor: c.monNode.ID(), HasMonitor: true}, o))
	})
	return n
}

// isolate cuts node off from every other node.
func (c *cluster) isolate(n *sim.Node) {
	for _, x := range c.w.Nodes() {
		if x != n {
			c.w.Network().Block(n, x)
			c.w.Network().Block(x, n)
		}
	}
}

func (c *cluster) has(i int, key string) bool {
	_, ok := c.servers[i].Keyspace().lookup(key, c.nodes[i].Wall())
	return ok
}

func TestReplicationIsAsynchronousAndWaitCountsReplicas(t *testing.T) {
	c := newCluster(ServerConfig{})
	o := DefaultOptions()
	o.Replicas, o.Wait = 2, 2
	var detail string
	var afterAck [3]bool
	c.client("c1", o, func(p *sim.Proc, cl *Client) {
		p.Sleep(time.Second) // replicas have synchronised
		l, err := cl.Acquire("k", 0)
		require.NoError(t, err)
		detail = l.Detail
		for i := range 3 {
			afterAck[i] = c.has(i, "k")
		}
	})
	var atAck [3]bool
	c.client("c2", DefaultOptions(), func(p *sim.Proc, cl *Client) {
		p.Sleep(2 * time.Second)
		c.w.Network().AddRule(sim.Rule{From: c.nodes[0], Delay: 50 * time.Millisecond, Count: 2,
			Match: func(m sim.Message) bool { _, ok := m.Body.(Replicate); return ok }})
		_, err := cl.do(SetNX{Key: "j", Value: "x", TTL: time.Minute})
		require.NoError(t, err)
		for i := range 3 {
			atAck[i] = c.has(i, "j") // the primary answered before replicating
		}
	})
	c.w.Run(3 * time.Second)
	assert.Equal(t, "granted by redis, WAIT 2: 2 replica(s) acknowledged", detail)
	assert.Equal(t, [3]bool{true, true, true}, afterAck, "WAIT returned after both replicas had the key")
	assert.Equal(t, [3]bool{true, false, false}, atAck, "the reply came before the replicas had the key")
	assert.True(t, c.has(1, "j") && c.has(2, "j"), "replicated shortly after")
}

func TestFailoverPromotesAReplicaAndClientsFollow(t *testing.T) {
	c := newCluster(ServerConfig{})
	o := DefaultOptions()
	o.Replicas, o.TTL = 2, time.Minute
	var got []string
	c.client("c1", o, func(p *sim.Proc, cl *Client) {
		p.Sleep(time.Second)
		_, err := cl.Acquire("replicated", 0)
		require.NoError(t, err)
		p.Sleep(time.Second)
		c.w.Network().Block(c.nodes[0], c.nodes[1]) // the change will not reach the replicas
		c.w.Network().Block(c.nodes[0], c.nodes[2])
		_, err = cl.do(SetNX{Key: "lost", Value: "x", TTL: time.Minute})
		require.NoError(t, err)
		c.isolate(c.nodes[0])
		p.Sleep(5 * time.Second)
		_, err = cl.Acquire("replicated", time.Second) // the first attempt finds redis gone
		got = append(got, fmt.Sprintf("replicated key granted again: %v", err == nil))
		l, err := cl.Acquire("lost", 0)
		got = append(got, fmt.Sprintf("unreplicated key granted again: %v (%s)", err == nil, l.Detail))
	})
	c.w.Run(10 * time.Second)
	assert.Equal(t, []string{"replicated key granted again: false", "unreplicated key granted again: true (granted by replica1)"}, got)
	require.Len(t, c.failovers, 1)
	assert.Contains(t, c.failovers[0], "monitor promoted replica1 to primary (epoch 1) after redis was silent for 2.")
	assert.Equal(t, RolePrimary, c.servers[1].Role())
	assert.Equal(t, RoleReplica, c.servers[2].Role())

	c.w.Network().Heal()
	c.w.Run(2 * time.Second)
	assert.Equal(t, RoleReplica, c.servers[0].Role(), "the old primary is told to follow")
	assert.Equal(t, c.servers[1].Keyspace().Len(), c.servers[0].Keyspace().Len(), "and resynchronises")
}

func TestWaitKeepsTheGrantThroughAFailover(t *testing.T) {
	for _, wait := range []int{0, 1} {
		t.Run(fmt.Sprintf("wait=%d", wait), func(t *testing.T) {
			c := newCluster(ServerConfig{})
			o := DefaultOptions()
			o.Replicas, o.Wait, o.TTL = 2, wait, time.Minute
			// Replication lags by 100 ms.
			c.w.Network().AddRule(sim.Rule{From: c.nodes[0], Delay: 100 * time.Millisecond,
				Match: func(m sim.Message) bool { _, ok := m.Body.(Replicate); return ok }})
			c.client("c1", o, func(p *sim.Proc, cl *Client) {
				p.Sleep(time.Second)
				_, err := cl.Acquire("k", 0)
				require.NoError(t, err)
				c.isolate(c.nodes[0])
			})
			var err2 error
			c.client("c2", o, func(p *sim.Proc, cl *Client) {
				p.Sleep(4 * time.Second)
				_, err2 = cl.Acquire("k", time.Second)
			})
			c.w.Run(10 * time.Second)
			require.Len(t, c.failovers, 1)
			if wait == 0 {
				assert.NoError(t, err2, "the grant was lost with the old primary")
			} else {
				assert.Error(t, err2, "the promoted replica had the grant")
			}
		})
	}
}

func TestWaitShortOfReplicasReleasesAndFails(t *testing.T) {
	c := newCluster(ServerConfig{})
	o := DefaultOptions()
	o.Replicas, o.Wait, o.WaitTimeout = 2, 2, 300*time.Millisecond
	c.w.Network().Block(c.nodes[0], c.nodes[2])
	var err error
	c.client("c1", o, func(p *sim.Proc, cl *Client) {
		p.Sleep(time.Second)
		_, err = cl.Acquire("k", 0)
	})
	c.w.Run(3 * time.Second)
	assert.ErrorIs(t, err, lockapi.ErrNotAcquired)
	assert.ErrorContains(t, err, "WAIT 2 after SET on redis: 1 replica(s) acknowledged")
	assert.False(t, c.has(0, "k"), "the client gave the key back")
}

func TestReplicaRefusesCommandsAndRestartDelayRefusesToo(t *testing.T) {
	c := newCluster(ServerConfig{RestartDelay: 2 * time.Second})
	var got []string
	n := c.w.AddNode("c1", sim.NodeOptions{})
	n.Spawn("c1", func(p *sim.Proc) {
		r, _ := p.Call(c.nodes[1].ID(), SetNX{Key: "k", Value: "v", TTL: time.Second}, time.Second)
		got = append(got, r.(Reply).Err)
		p.Sleep(2 * time.Second)
		r, _ = p.Call(c.nodes[0].ID(), SetNX{Key: "k", Value: "v", TTL: time.Second}, time.Second)
		got = append(got, r.(Reply).Err)
		p.Sleep(2 * time.Second)
		r, _ = p.Call(c.nodes[0].ID(), SetNX{Key: "k", Value: "v", TTL: time.Second}, time.Second)
		got = append(got, fmt.Sprint(r.(Reply).OK))
	})
	c.w.At(time.Second, c.nodes[0].Crash)
	c.w.At(1500*time.Millisecond, c.nodes[0].Restart)
	c.w.Run(10 * time.Second)
	assert.Equal(t, []string{ErrReadOnly, ErrRestarting, "true"}, got)
	assert.Empty(t, c.failovers, "back within down-after: no failover")
}

func TestMonoExpiryIgnoresClockJumps(t *testing.T) {
	for _, clk := range []Clock{ClockWall, ClockMono} {
		t.Run(string(clk), func(t *testing.T) {
			w := sim.NewWorld(sim.Config{Seed: 1})
			s := NewServerWith(ServerConfig{ExpiryClock: clk})
			srv := w.AddNode("redis", sim.NodeOptions{Handler: s})
			var err2 error
			n := w.AddNode("c", sim.NodeOptions{})
			n.Spawn("c", func(p *sim.Proc) {
				o := DefaultOptions()
				c := NewClient(p, srv.ID(), o)
				_, err := c.Acquire("k", 0)
				require.NoError(t, err)
				srv.JumpClock(time.Minute)
				_, err2 = c.Acquire("k", 0)
			})
			w.Run(time.Second)
			if clk == ClockWall {
				assert.NoError(t, err2, "the jump expired the key")
			} else {
				assert.ErrorIs(t, err2, lockapi.ErrNotAcquired)
			}
		})
	}
}

func TestPrimaryBackBeforeDownAfterWithoutPersistenceLosesEverything(t *testing.T) {
	c := newCluster(ServerConfig{})
	o := DefaultOptions()
	o.Replicas, o.TTL = 2, time.Minute
	var err2 error
	c.client("c1", o, func(p *sim.Proc, cl *Client) {
		p.Sleep(time.Second)
		_, err := cl.Acquire("k", 0)
		require.NoError(t, err)
		c.nodes[0].Crash()
		c.nodes[0].Restart() // empty, and still the primary
		p.Sleep(time.Second)
		_, err2 = cl.Acquire("k", 0)
	})
	c.w.Run(5 * time.Second)
	assert.NoError(t, err2)
	assert.Empty(t, c.failovers)
	assert.Equal(t, 1, c.servers[1].Keyspace().Len(), "the replicas resynchronised from the empty primary, then got the new grant")
}

func TestOptionsValidate(t *testing.T) {
	o := DefaultOptions()
	require.NoError(t, o.Set("replicas", "1"))
	require.NoError(t, o.Set("wait", "2"))
	assert.ErrorContains(t, o.Validate(), "only 1 replica")
	assert.ErrorContains(t, o.Set("replicas", "x"), "not an integer")
	assert.ErrorContains(t, o.Set("expiry-clock", "sundial"), "want one of wall, mono")
}

// TestPrimaryKeepsNoBacklogUntilAReplicaSyncs: a primary no replica has
// synchronised with keeps no backlog (none could ask for it); replicas that
// join later get a snapshot, then every command from there on.
func TestPrimaryKeepsNoBacklogUntilAReplicaSyncs(t *testing.T) {
	c := newCluster(ServerConfig{})
	for _, r := range c.nodes[1:] {
		c.w.Network().Block(r, c.nodes[0])
	}
	c.client("c1", Options{TTL: time.Hour, RequestTimeout: time.Second}, func(p *sim.Proc, cl *Client) {
		for i := range 20 {
			if i == 10 {
				assert.Empty(t, c.servers[0].repl.log, "no replica yet: no backlog")
				c.w.Network().Heal()
				p.Sleep(3 * time.Second)
			}
			_, err := cl.Acquire(fmt.Sprintf("k%d", i), 0)
			require.NoError(t, err)
		}
	})
	c.w.Run(10 * time.Second)
	assert.Equal(t, 20, c.servers[0].Keyspace().Len())
	for _, r := range c.servers[1:] {
		assert.Equal(t, 20, r.Keyspace().Len(), "a replica that joined late caught up")
	}
	assert.NotEmpty(t, c.servers[0].repl.log, "commands after the replicas joined are kept")
}
