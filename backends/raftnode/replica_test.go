package raftnode

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/sim"
)

// member is the smallest service on a Replica: its state machine is the list
// of the data of the entries it applied.
type member struct {
	g       *group
	r       *Replica
	node    *sim.Node
	applied []string
	elected int // times it became leader
}

func (m *member) Start(n *sim.Node) {
	m.node, m.applied = n, nil
	m.r.Start(n)
}

func (m *member) Crash(*sim.Node) { m.r.Crash() }

func (m *member) Receive(_ *sim.Node, msg sim.Message) { m.r.Step(msg.Body.(*pb.Message)) }

type group struct {
	w       *sim.World
	members []*member
	nodes   []*sim.Node
}

func newGroup(seed uint64, size int, initial bool) *group {
	g := &group{w: sim.NewWorld(sim.Config{Seed: seed})}
	for i := range size {
		m := &member{g: g}
		id := uint64(i + 1)
		m.r = NewReplica(Config{
			Service: "test",
			Raft: raft.Config{ID: id, ElectionTick: NeverElectionTick, HeartbeatTick: 1, PreVote: true,
				MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256, Logger: Logger{}},
			Group:           size,
			Tick:            10 * time.Millisecond,
			ElectionTimeout: 300 * time.Millisecond,
			InitialLeader:   initial && id == 1,
			Log:             NewMemoryLog(size),
			Apply: func(e *pb.Entry) {
				if e.Type == pb.EntryNormal && len(e.Data) > 0 {
					m.applied = append(m.applied, string(e.Data))
				}
			},
			Role: func(was raft.StateType) {
				if m.r.Leading() && was != raft.StateLeader {
					m.elected++
				}
			},
			Send: func(to uint64, msg *pb.Message) { m.node.Send(g.nodes[to-1].ID(), msg) },
		})
		g.members = append(g.members, m)
	}
	for i, m := range g.members {
		g.nodes = append(g.nodes, g.w.AddNode(fmt.Sprintf("r%d", i+1), sim.NodeOptions{Handler: m}))
	}
	return g
}

func (g *group) leader(t *testing.T) *member {
	t.Helper()
	i, ok := Leader(g.members, func(m *member) *Replica { return m.r })
	require.True(t, ok, "a leader at %v", g.w.Now())
	return g.members[i]
}

// TestReplicaSpecification: what every service on a Replica relies on.
func TestReplicaSpecification(t *testing.T) {
	tests := []struct {
		name    string
		initial bool
		check   func(t *testing.T, g *group)
	}{
		{"a group elects one leader by its seeded election timer", false, func(t *testing.T, g *group) {
			g.w.Run(3 * time.Second)
			l := g.leader(t)
			assert.True(t, l.r.QuorumActive(), "the leader hears a majority")
			for _, m := range g.members {
				assert.Equal(t, l.r.ID(), m.r.Lead(), "%s follows the leader", m.node.Name())
				assert.Equal(t, l.r.Term(), m.r.Term())
			}
		}},
		{"the initial leader campaigns at once and counts no silence", true, func(t *testing.T, g *group) {
			g.w.Run(100 * time.Millisecond)
			l := g.leader(t)
			assert.Equal(t, uint64(1), l.r.ID())
			assert.Equal(t, 1, l.elected)
		}},
		{"a proposal applies on every member", true, func(t *testing.T, g *group) {
			g.w.Run(time.Second)
			l := g.leader(t)
			require.NoError(t, l.r.Propose([]byte("x")))
			l.r.Drain()
			g.w.Run(time.Second)
			for _, m := range g.members {
				assert.Equal(t, []string{"x"}, m.applied, m.node.Name())
			}
		}},
		{"a crashed leader is replaced, and on restart replays its log", true, func(t *testing.T, g *group) {
			g.w.Run(time.Second)
			old := g.leader(t)
			require.NoError(t, old.r.Propose([]byte("x")))
			old.r.Drain()
			g.w.Run(time.Second)
			old.node.Crash()
			assert.False(t, old.r.Leading(), "a crashed replica leads nothing")
			g.w.Run(3 * time.Second)
			l := g.leader(t)
			assert.NotEqual(t, old.r.ID(), l.r.ID())
			old.node.Restart()
			g.w.Run(2 * time.Second)
			assert.Equal(t, []string{"x"}, old.applied, "the log survived the crash")
			assert.Equal(t, l.r.ID(), old.r.Lead())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup(7, 3, tt.initial)
			defer g.w.Close()
			tt.check(t, g)
		})
	}
}

// TestReplicaIsDeterministic: the same seed elects the same leader in the
// same term at the same time.
func TestReplicaIsDeterministic(t *testing.T) {
	run := func(seed uint64) string {
		g := newGroup(seed, 5, false)
		defer g.w.Close()
		g.w.Run(5 * time.Second)
		l := g.leader(t)
		return fmt.Sprintf("%d@%d", l.r.ID(), l.r.Term())
	}
	for seed := range uint64(5) {
		assert.Equal(t, run(seed), run(seed), "seed %d", seed)
	}
}

// TestPendingPurgeForgetsOnlyOldRequests: a request older than PendingTTL is
// forgotten, a younger one is kept and can be taken once.
func TestPendingPurgeForgetsOnlyOldRequests(t *testing.T) {
	p := Pending[int]{1: {At: 0}, 2: {At: 5 * time.Second}}
	p.Purge(PendingTTL + 2*time.Second)
	_, ok := p.Take(1)
	assert.False(t, ok, "older than the TTL")
	r, ok := p.Take(2)
	require.True(t, ok)
	assert.Equal(t, 5*time.Second, r.At)
	_, ok = p.Take(2)
	assert.False(t, ok, "taken once")
}
