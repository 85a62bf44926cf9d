package redis

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/sim"
)

// MonitorConfig configures the sentinel-like monitor of a replicated deployment.
type MonitorConfig struct {
	// Instances are every Redis instance, the initial primary first.
	Instances []sim.NodeID
	// DownAfter is how long the primary must be unreachable, on the monitor's
	// own monotonic clock, before the monitor promotes a replica. Default 3 s.
	DownAfter time.Duration
	// PingInterval is how often the monitor pings every instance. Default 100 ms.
	PingInterval time.Duration
	// OnFailover, when set, is told of every promotion.
	OnFailover func(n *sim.Node, f Failover)
}

// Failover describes one promotion.
type Failover struct {
	Old, New sim.NodeID
	Epoch    uint64
	// Silence is how long the old primary had not answered.
	Silence time.Duration
	// Offset is the promoted replica's replication offset; OldOffset the old
	// primary's, when last heard of (what it had beyond is lost).
	Offset, OldOffset int64
}

// GetPrimary asks the monitor which instance is the primary (Sentinel's
// get-master-addr-by-name); the answer is a PrimaryIs.
type GetPrimary struct{}

// PrimaryIs names the primary of config epoch Epoch.
type PrimaryIs struct {
	Node  sim.NodeID
	Epoch uint64
}

// Monitor is a sentinel-like monitor (one instance: Sentinel's quorum and
// leader election are not modelled). It pings every instance; when the primary
// has not answered for DownAfter it promotes the reachable replica with the
// highest replication offset, in a new config epoch, and reconfigures every
// other instance to replicate from it — including the old primary when it is
// heard of again, which then loses what it had not replicated. Clients ask it
// for the primary. Its configuration (primary, epoch) survives a crash.
type Monitor struct {
	cfg      MonitorConfig
	primary  sim.NodeID
	epoch    uint64
	lastPong map[sim.NodeID]time.Duration // monotonic
	state    map[sim.NodeID]Pong
	// Failovers counts promotions.
	Failovers int
}

// NewMonitor returns a monitor of cfg.Instances.
func NewMonitor(cfg MonitorConfig) *Monitor {
	if cfg.DownAfter == 0 {
		cfg.DownAfter = 3 * time.Second
	}
	if cfg.PingInterval == 0 {
		cfg.PingInterval = 100 * time.Millisecond
	}
	if len(cfg.Instances) == 0 {
		panic("redis: a monitor needs instances")
	}
	return &Monitor{cfg: cfg, primary: cfg.Instances[0]}
}

// Primary is the instance the monitor considers the primary.
func (m *Monitor) Primary() sim.NodeID { return m.primary }

// Epoch is the current config epoch.
func (m *Monitor) Epoch() uint64 { return m.epoch }

// Start begins pinging; every instance counts as just heard from.
func (m *Monitor) Start(n *sim.Node) {
	m.lastPong, m.state = map[sim.NodeID]time.Duration{}, map[sim.NodeID]Pong{}
	for _, id := range m.cfg.Instances {
		m.lastPong[id] = n.Mono()
	}
	m.tick(n)
}

func (m *Monitor) tick(n *sim.Node) {
	for _, id := range m.cfg.Instances {
		n.Send(id, Ping{})
	}
	m.check(n)
	n.SetTimer(m.cfg.PingInterval, func() { m.tick(n) })
}

// Receive records pongs and answers clients.
func (m *Monitor) Receive(n *sim.Node, msg sim.Message) {
	switch b := msg.Body.(type) {
	case Pong:
		m.lastPong[msg.From], m.state[msg.From] = n.Mono(), b
	case GetPrimary:
		n.Reply(msg, PrimaryIs{Node: m.primary, Epoch: m.epoch})
	}
}

func (m *Monitor) fresh(n *sim.Node, id sim.NodeID) bool {
	return n.Mono()-m.lastPong[id] < m.cfg.DownAfter
}

// check fails over a silent primary and brings every instance in line with
// the configuration.
func (m *Monitor) check(n *sim.Node) {
	if !m.fresh(n, m.primary) {
		m.failover(n)
	}
	for _, id := range m.cfg.Instances {
		st, heard := m.state[id]
		if !heard || !m.fresh(n, id) {
			continue
		}
		switch {
		case id == m.primary && (st.Role != RolePrimary || st.Epoch < m.epoch):
			n.Send(id, Promote{Epoch: m.epoch})
		case id != m.primary && (st.Role != RoleReplica || st.Primary != m.primary || st.Epoch < m.epoch):
			n.Send(id, ReplicaOf{Primary: m.primary, Epoch: m.epoch})
		}
	}
}

func (m *Monitor) failover(n *sim.Node) {
	best, found := sim.NodeID(0), false
	for _, id := range m.cfg.Instances {
		st, heard := m.state[id]
		if id == m.primary || !heard || !m.fresh(n, id) || st.Role != RoleReplica {
			continue
		}
		if !found || st.Offset > m.state[best].Offset {
			best, found = id, true
		}
	}
	if !found {
		return // no replica to promote: keep waiting
	}
	f := Failover{Old: m.primary, New: best, Epoch: m.epoch + 1, Silence: n.Mono() - m.lastPong[m.primary],
		Offset: m.state[best].Offset, OldOffset: m.state[m.primary].Offset}
	m.epoch, m.primary = f.Epoch, best
	m.Failovers++
	n.Send(best, Promote{Epoch: m.epoch})
	if m.cfg.OnFailover != nil {
		m.cfg.OnFailover(n, f)
	}
}

// Describe renders a failover in words, with node names from w.
func (f Failover) Describe(w *sim.World) string {
	name := func(id sim.NodeID) string { return w.Nodes()[id].Name() }
	s := fmt.Sprintf("monitor promoted %s to primary (epoch %d) after %s was silent for %v",
		name(f.New), f.Epoch, name(f.Old), f.Silence.Round(time.Millisecond))
	if lost := f.OldOffset - f.Offset; lost > 0 {
		s += fmt.Sprintf("; %s was %d write(s) ahead when last heard of: they are lost", name(f.Old), lost)
	}
	return s
}
