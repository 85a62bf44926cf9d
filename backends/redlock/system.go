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
		Name:        "redlock",
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
	var instances []*sim.Node
	topo := Topology{}
	grants := lockapi.NewGrantLog(o.Quorum())
	for i := range o.Instances {
		s := redis.NewServerWith(o.Server())
		s.RecordGrants(grants, InstanceName(i))
		n := w.AddNode(InstanceName(i), sim.NodeOptions{Handler: s})
		instances = append(instances, n)
		topo.Instances = append(topo.Instances, n.ID())
	}
	if o.Token == TokenExternal {
		topo.Fence = w.AddNode(FenceName, sim.NodeOptions{Handler: redis.NewServer(redis.PersistAlways)}).ID()
	}
	return system.Deployment{
		Grants:    grants,
		Servers:   instances,
		NewLock:   func(p *sim.Proc) lockapi.Lock { return NewClient(p, topo, o) },
		HasTokens: true,
		Messages:  MessageTypes(),
		Resolve: func(name string) ([]*sim.Node, bool) {
			if name == "instances" {
				return slices.Clone(instances), true
			}
			return nil, false
		},
	}, nil
}
