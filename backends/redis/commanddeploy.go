package redis

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// CommandDeployment is a Redis deployment whose clients send Commands (a
// user's lock over GoRedisClient): the instances the redis system deploys
// for the same options, recording the grants of the lock keys.
type CommandDeployment struct {
	// Options gives the servers' options: Persistence, ExpiryClock,
	// RestartDelay, Replicas and DownAfter (the client recipe's are unused).
	Options Options
	// IsLockKey tells the keys whose grants the servers record (see
	// Server.WatchLockKeys).
	IsLockKey func(key string) bool
	// NewLock makes the lock of one client process, which finds Redis
	// through t.
	NewLock func(p *sim.Proc, t Topology) lockapi.Lock
}

// DeployCommands adds the instances as the redis system does: one called
// "redis", or with replicas the primary "redis", replicas "replica1".. and
// the monitor "sentinel", which fails over. Schedules may name "primary",
// "replicas" and "sentinel".
func DeployCommands(w *sim.World, d CommandDeployment) (system.Deployment, error) {
	if err := d.Options.Validate(); err != nil {
		return system.Deployment{}, err
	}
	return deployTopology(w, d.Options, func(s *Server) { s.WatchLockKeys(d.IsLockKey) }, CommandMessageTypes(), d.NewLock), nil
}

// deployTopology adds the instances of o, as the redis system deploys them
// for both kinds of client: one called "redis", or with replicas the
// primary "redis", replicas "replica1".. and the monitor "sentinel", which
// fails over. Every server records its grants (and watch, when set, tells
// it more); newLock makes each client's lock, which finds Redis through the
// topology. The instances' unexpected error replies to Commands (a
// script's error, an unknown command) are the deployment's Notes.
// Schedules may name "primary", "replicas" and "sentinel".
func deployTopology(w *sim.World, o Options, watch func(*Server), messages []any, newLock func(p *sim.Proc, t Topology) lockapi.Lock) system.Deployment {
	grants := lockapi.NewGrantLog(1)
	errs := NewCommandErrors()
	server := func(cfg ServerConfig) *Server {
		s := NewServerWith(cfg)
		s.RecordGrants(grants, "redis")
		s.RecordCommandErrors(errs)
		if watch != nil {
			watch(s)
		}
		return s
	}
	primary := w.AddNode("redis", sim.NodeOptions{Handler: server(o.Server())})
	instances := []*sim.Node{primary}
	if o.Replicas == 0 {
		topo := Topology{Primary: primary.ID()}
		return system.Deployment{
			Grants:   grants,
			Servers:  instances,
			NewLock:  func(p *sim.Proc) lockapi.Lock { return newLock(p, topo) },
			Messages: messages,
			Resolve:  roleResolver(func() *sim.Node { return primary }, instances, nil),
			Notes:    errs.Notes,
		}
	}
	for i := range o.Replicas {
		cfg := o.Server()
		cfg.Replica, cfg.ReplicaOf = true, primary.ID()
		instances = append(instances, w.AddNode(fmt.Sprintf("replica%d", i+1), sim.NodeOptions{Handler: server(cfg)}))
	}
	var log *history.Log
	mon := NewMonitor(MonitorConfig{Instances: sim.IDs(instances), DownAfter: o.DownAfter,
		OnFailover: func(n *sim.Node, f Failover) {
			if log != nil {
				system.RecordEvent(log, n.World(), system.EventFailover, []string{w.Nodes()[f.New].Name(), w.Nodes()[f.Old].Name()}, f.Describe(w))
			}
		}})
	sentinel := w.AddNode("sentinel", sim.NodeOptions{Handler: mon})
	topo := Topology{Primary: primary.ID(), Monitor: sentinel.ID(), HasMonitor: true}
	return system.Deployment{
		Grants:   grants,
		Servers:  append(slices.Clone(instances), sentinel),
		NewLock:  func(p *sim.Proc) lockapi.Lock { return newLock(p, topo) },
		Messages: messages,
		Resolve:  roleResolver(func() *sim.Node { return w.Nodes()[mon.Primary()] }, instances, sentinel),
		Roles:    []string{"primary", "replicas"},
		Record:   func(l *history.Log) { log = l },
		Notes:    errs.Notes,
	}
}
