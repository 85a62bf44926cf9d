package redlock

import (
	"slices"
	"time"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

func init() {
	system.Register(system.System{
		Name: "redlock",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts:    []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "ttl", What: "the lock's expiry"}},
		GroundTruth: []system.Truth{{Label: "redlock", Options: map[string]string{"token": "external"}, Storage: storage.Fenced}},
		Recorded: append([]system.Recorded{
			{Label: "redlock", Nemesis: "random", Seeds: system.Seeds(1, 4), Time: time.Minute},
			{Label: "redlock-sequential-wall", Options: map[string]string{"fanout": "sequential", "elapsed-clock": "wall"},
				Nemesis: "random", Seeds: system.Seeds(1, 2), Time: time.Minute},
		}, system.PerNemesis("redlock", 5, time.Minute, "pause", "clock", "crash", "partition,delay")...),
		Doc: "Redlock over N independent Redis instances (redis-a, redis-b, ...): majority, validity check, " +
			"tokens value|incr|external, restart-delay",
		Options: Table,
		Deploy:  deployRedlock,
		// Redlock's tokens are random values, not monotonic: no fenced claim
		// but with a sequencer of its own (the maximum of the instances'
		// counters goes back when one restarts empty).
		Claims: []system.Claims{{SafeRelease: true},
			{Variant: "incr", Options: map[string]string{"token": "incr"}, SafeRelease: true},
			{Variant: "external", Options: map[string]string{"token": "external"}, Tokens: true, SafeRelease: true}},
		// The random values are unique but not ordered: fencing needs a
		// counter of its own (token=external).
		Designs: []system.Design{
			{Name: "Redlock (redsync)", Modes: system.UnfencedOnly},
			{Name: "Redlock + fencing token from a separate counter", SystemOptions: map[string]string{"token": "external"}, Modes: system.FencedModes},
		},
	})
}

// deployRedlock adds the instances redis-a, redis-b, ... and, for
// token=external, the sequencer "fence" (assumed correct: not a target of
// random faults). Schedules may name "instances" (all of them).
func deployRedlock(w *sim.World, opts map[string]string) (system.Deployment, error) {
	o, err := Table.Parse(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	grants := lockapi.NewGrantLog(o.Quorum())
	instances := addInstances(w, o.Instances, o.Server(), grants, nil)
	topo := Topology{Instances: nodeIDs(instances)}
	if o.Token == TokenExternal {
		topo.Fence = w.AddNode(FenceName, sim.NodeOptions{Handler: redis.NewServer(redis.PersistAlways)}).ID()
	}
	return system.Deployment{
		Grants:    grants,
		Servers:   instances,
		NewLock:   func(p *sim.Proc) lockapi.Lock { return NewClient(p, topo, o) },
		HasTokens: true,
		Messages:  MessageTypes(),
		Resolve:   resolveInstances(instances),
	}, nil
}

// addInstances adds the n independent instances redis-a, redis-b, ... with
// configuration cfg, each recording its grants in grants under its own name
// (its own lock state) and, with watch, the grants of the keys watch tells
// (see redis.Server.WatchLockKeys).
func addInstances(w *sim.World, n int, cfg redis.ServerConfig, grants *lockapi.GrantLog, watch func(key string) bool) []*sim.Node {
	instances := make([]*sim.Node, n)
	for i := range n {
		s := redis.NewServerWith(cfg)
		s.RecordGrants(grants, InstanceName(i))
		if watch != nil {
			s.WatchLockKeys(watch)
		}
		instances[i] = w.AddNode(InstanceName(i), sim.NodeOptions{Handler: s})
	}
	return instances
}

// nodeIDs are the ids of nodes.
func nodeIDs(nodes []*sim.Node) []sim.NodeID {
	ids := make([]sim.NodeID, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID()
	}
	return ids
}

// resolveInstances resolves the role "instances": all of them.
func resolveInstances(instances []*sim.Node) func(name string) ([]*sim.Node, bool) {
	return func(name string) ([]*sim.Node, bool) {
		if name == "instances" {
			return slices.Clone(instances), true
		}
		return nil, false
	}
}
