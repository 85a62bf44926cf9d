package harness

import (
	"fmt"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/control"
	"github.com/locklab/locklab/sim"
)

func init() {
	registerSystem(System{
		Name: "control",
		Doc:  "a lock that grants everything at once (the control: must be judged invalid)",
		Deploy: func(w *sim.World, opts map[string]string) (Deployment, error) {
			if len(opts) > 0 {
				return Deployment{}, fmt.Errorf("control has no options (got %v)", sortedKeys(opts))
			}
			grants := backends.NewGrantLog(1)
			return Deployment{Grants: grants, NewLock: func(p *sim.Proc) backends.Lock {
				l := control.New(p.Name())
				l.RecordGrants(grants, p.World().Now)
				return l
			}}, nil
		},
	})
}
