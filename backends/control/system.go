package control

import (
	"time"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// controlOptions is the control lock's option table: it has none.
var controlOptions = opt.Table[struct{}]{Owner: "control"}

func init() {
	system.Register(system.System{
		Name: "control",
		// The control lock is invalid on every seed: a few show it.
		GroundTruth: []system.Truth{{Label: "control", Seeds: 5}},
		Recorded:    []system.Recorded{{Label: "control", Nemesis: "random", Seeds: system.Seeds(1, 2), Time: time.Minute}},
		Doc:         "a lock that grants everything at once (the control: must be judged invalid)",
		Options:     controlOptions,
		// The control grants everything: its baseline is invalid, by design.
		Claims: []system.Claims{{ExpectFail: []string{"baseline"}}},
		Deploy: func(w *sim.World, opts map[string]string) (system.Deployment, error) {
			if _, err := controlOptions.Parse(opts); err != nil {
				return system.Deployment{}, err
			}
			grants := lockapi.NewGrantLog(1)
			return system.Deployment{Grants: grants, NewLock: func(p *sim.Proc) lockapi.Lock {
				l := New(p.Name())
				l.RecordGrants(grants, p.World().Now)
				return l
			}}, nil
		},
	})
}
