package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/control"
	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/workloads"
)

// Deployment is a lock system set up in a world.
type Deployment struct {
	// Servers are the system's nodes (none for the control lock).
	Servers []*sim.Node
	// NewLock makes the lock client library of one client process.
	NewLock func(p *sim.Proc) backends.Lock
	// HasTokens reports whether grants carry fencing tokens.
	HasTokens bool
	// Resolve maps system-specific target names ("primary") to nodes; nil if none.
	Resolve func(name string) ([]*sim.Node, bool)
}

// System is an entry of the system registry.
type System struct {
	// Name is the system's name on the command line.
	Name string
	// Doc is one line describing it.
	Doc string
	// Options lists the option keys it understands.
	Options []string
	// Deploy checks the options and adds the system's nodes to w.
	Deploy func(w *sim.World, opts map[string]string) (Deployment, error)
}

// Systems is the registry of lock systems, sorted by name.
var Systems = []System{
	{
		Name: "control",
		Doc:  "a lock that grants everything at once (the control: must be judged invalid)",
		Deploy: func(w *sim.World, opts map[string]string) (Deployment, error) {
			if len(opts) > 0 {
				return Deployment{}, fmt.Errorf("control has no options (got %v)", sortedKeys(opts))
			}
			return Deployment{NewLock: func(p *sim.Proc) backends.Lock { return control.New(p.Name()) }}, nil
		},
	},
	{
		Name:    "redis",
		Doc:     "single Redis instance: SET NX PX, release lua|del|check-then-del, watchdog, INCR fencing",
		Options: redis.OptionNames,
		Deploy:  deployRedis,
	},
}

func deployRedis(w *sim.World, opts map[string]string) (Deployment, error) {
	o := redis.DefaultOptions()
	for _, k := range sortedKeys(opts) {
		if err := o.Set(k, opts[k]); err != nil {
			return Deployment{}, err
		}
	}
	srv := w.AddNode("redis", sim.NodeOptions{Handler: redis.NewServer(o.Persistence)})
	return Deployment{
		Servers:   []*sim.Node{srv},
		NewLock:   func(p *sim.Proc) backends.Lock { return redis.NewClient(p, srv.ID(), o) },
		HasTokens: o.Fencing,
	}, nil
}

// FindSystem returns the system called name.
func FindSystem(name string) (System, error) {
	for _, s := range Systems {
		if s.Name == name {
			return s, nil
		}
	}
	return System{}, fmt.Errorf("unknown system %q (known: %s)", name, strings.Join(SystemNames(), ", "))
}

// SystemNames lists the registered systems.
func SystemNames() []string {
	out := make([]string, len(Systems))
	for i, s := range Systems {
		out[i] = s.Name
	}
	return out
}

// WorkloadEntry is an entry of the workload registry.
type WorkloadEntry struct {
	Name string
	Doc  string
	// New checks the options and returns the workload.
	New func(opts map[string]string) (workloads.Workload, error)
}

// Workloads is the registry of workloads.
var Workloads = []WorkloadEntry{
	{
		Name: "fenced-counter",
		Doc:  "acquire, read the counter, hold, write counter+1 with the token, release (options: keys, hold, think, wait)",
		New: func(opts map[string]string) (workloads.Workload, error) {
			w := workloads.DefaultFencedCounter()
			for _, k := range sortedKeys(opts) {
				if err := w.Set(k, opts[k]); err != nil {
					return nil, err
				}
			}
			return w, nil
		},
	},
}

// FindWorkload returns the workload called name.
func FindWorkload(name string) (WorkloadEntry, error) {
	var names []string
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return WorkloadEntry{}, fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(names, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
