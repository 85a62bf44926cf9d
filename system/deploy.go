package system

import (
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Service is a simulated lock service as DeployService deploys it: the
// servers a system's constructor added to the world.
type Service interface {
	// RecordGrants makes the servers note every grant they make in log.
	RecordGrants(log *lockapi.GrantLog)
	// Nodes are the servers' nodes.
	Nodes() []*sim.Node
	// Resolve maps the role names of fault schedules ("leader") to nodes.
	Resolve(name string) ([]*sim.Node, bool)
}

// DeployService returns a System.Deploy for a service built the way most
// systems are: its options parsed from the run's by table, the service built
// in the world by build and given a fresh record of grants, and finish
// filling in what the service itself hands the run (its tokens, roles,
// messages, events, figures). The Deployment finish returns gets the record
// of grants, the service's nodes and Resolve, and NewLock, a client made by
// newLock for each client process.
func DeployService[O any, S Service, L lockapi.Lock](table opt.Table[O], build func(*sim.World, O) (S, error),
	newLock func(S, *sim.Proc) L, finish func(w *sim.World, o O, s S) Deployment) func(*sim.World, map[string]string) (Deployment, error) {
	return func(w *sim.World, opts map[string]string) (Deployment, error) {
		o, err := table.Parse(opts)
		if err != nil {
			return Deployment{}, err
		}
		s, err := build(w, o)
		if err != nil {
			return Deployment{}, err
		}
		grants := lockapi.NewGrantLog(1)
		s.RecordGrants(grants)
		dep := finish(w, o, s)
		dep.Grants, dep.Servers, dep.Resolve = grants, s.Nodes(), s.Resolve
		dep.NewLock = func(p *sim.Proc) lockapi.Lock { return newLock(s, p) }
		return dep, nil
	}
}
