package harness

import (
	"slices"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/backends/redlock"
	"github.com/locklab/locklab/sim"
)

func init() {
	registerSystem(System{
		Name: "redlock",
		Doc: "Redlock over N independent Redis instances (redis-a, redis-b, ...): majority, validity check, " +
			"tokens value|incr|external, restart-delay",
		Options: redlock.Table,
		Deploy:  deployRedlock,
		// Redlock's tokens are random values, not monotonic: no fenced claim
		// but with a sequencer of its own (the maximum of the instances'
		// counters goes back when one restarts empty).
		Claims: []Claims{{SafeRelease: true},
			{Variant: "incr", Options: map[string]string{"token": "incr"}, SafeRelease: true},
			{Variant: "external", Options: map[string]string{"token": "external"}, Tokens: true, SafeRelease: true}},
		// The random values are unique but not ordered: fencing needs a
		// counter of its own (token=external).
		Designs: []Design{
			{Name: "Redlock (redsync)", Modes: unfencedOnly},
			{Name: "Redlock + fencing token from a separate counter", SystemOptions: map[string]string{"token": "external"}, Modes: fencedModes},
		},
	})
}

// deployRedlock adds the instances redis-a, redis-b, ... and, for
// token=external, the sequencer "fence" (assumed correct: not a target of
// random faults). Schedules may name "instances" (all of them).
func deployRedlock(w *sim.World, opts map[string]string) (Deployment, error) {
	o, err := redlock.Table.Parse(opts)
	if err != nil {
		return Deployment{}, err
	}
	var instances []*sim.Node
	topo := redlock.Topology{}
	grants := backends.NewGrantLog(o.Quorum())
	for i := range o.Instances {
		s := redis.NewServerWith(o.Server())
		s.RecordGrants(grants, redlock.InstanceName(i))
		n := w.AddNode(redlock.InstanceName(i), sim.NodeOptions{Handler: s})
		instances = append(instances, n)
		topo.Instances = append(topo.Instances, n.ID())
	}
	if o.Token == redlock.TokenExternal {
		topo.Fence = w.AddNode(redlock.FenceName, sim.NodeOptions{Handler: redis.NewServer(redis.PersistAlways)}).ID()
	}
	return Deployment{
		Grants:    grants,
		Servers:   instances,
		NewLock:   func(p *sim.Proc) backends.Lock { return redlock.NewClient(p, topo, o) },
		HasTokens: true,
		Messages:  redlock.MessageTypes(),
		Resolve: func(name string) ([]*sim.Node, bool) {
			if name == "instances" {
				return slices.Clone(instances), true
			}
			return nil, false
		},
	}, nil
}
