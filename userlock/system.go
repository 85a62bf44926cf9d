package userlock

import (
	"fmt"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// DeployFunc adds a service's simulated servers to w for one run, with the
// run's options and its conduct record (the service's simulated client
// reports a call from a goroutine of the user's own there). The Deployment's
// NewLock makes the user's lock; System guards it.
type DeployFunc func(w *sim.World, opts map[string]string, c *Conduct) (system.Deployment, error)

// System is the registered system of a user's lock over a service: its
// name, doc and claims from s, the service's option table and deployment,
// the audit lock-conduct, and one design (the lock itself) for the safety
// matrix, offered fenced when the lock has tokens. Each service's Register
// calls it; a spec without a name is refused (panic: a programming error,
// like system.Register's).
func (s Spec) System(service string, options opt.Spec, deploy DeployFunc) system.System {
	if s.Name == "" {
		panic("userlock: a lock needs a Spec.Name (its name on the command line)")
	}
	doc := s.Doc
	if doc == "" {
		doc = "a user's lock over " + service
	}
	modes := system.UnfencedOnly
	if s.Tokens {
		modes = system.FencedModes
	}
	return system.System{
		Name:    s.Name,
		Doc:     doc + " (your lock, over the simulated " + service + ")",
		Options: options,
		Audits:  []string{ConductCheck},
		Claims:  []system.Claims{{Tokens: s.Tokens, SafeRelease: s.SafeRelease}},
		Designs: []system.Design{{Name: fmt.Sprintf("%s (your lock over %s)", s.Name, service), Modes: modes}},
		Deploy: func(w *sim.World, opts map[string]string) (system.Deployment, error) {
			c := NewConduct(w.Now)
			d, err := deploy(w, opts, c)
			if err != nil {
				return d, err
			}
			if d.NewLock == nil {
				return d, fmt.Errorf("userlock: the %s deployment of %s makes no lock", service, s.Name)
			}
			newLock := d.NewLock
			d.NewLock = func(p *sim.Proc) lockapi.Lock { return Guard(newLock(p), p, s, c) }
			d.Audit = c.Audit()
			d.HasTokens = s.Tokens
			return d, nil
		},
	}
}
