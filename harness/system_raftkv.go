package harness

import (
	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/sim"
)

func init() {
	registerSystem(System{
		Name: "raftkv",
		Doc: "Raft-replicated KV lock with RheaKV semantics on etcd raft (3 or 5 nodes): reentrant, leased, " +
			"watchdog renewal, fencing tokens from replicated state, leader-stamped lease time",
		Options: raftkv.OptionNames,
		Deploy:  deployRaftKV,
	})
}

func deployRaftKV(w *sim.World, opts map[string]string) (Deployment, error) {
	o := raftkv.DefaultOptions()
	for _, k := range sortedKeys(opts) {
		if err := o.Set(k, opts[k]); err != nil {
			return Deployment{}, err
		}
	}
	c, err := raftkv.NewCluster(w, o)
	if err != nil {
		return Deployment{}, err
	}
	return Deployment{
		Servers:   c.Nodes(),
		NewLock:   func(p *sim.Proc) backends.Lock { return c.NewClient(p) },
		HasTokens: true,
		Resolve:   c.Resolve,
	}, nil
}

// RaftCluster returns the raftkv cluster of a prepared world (nil for other
// systems), for audits and figures after a run.
func (p *Prepared) RaftCluster() *raftkv.Cluster {
	if p.Test.System != "raftkv" {
		return nil
	}
	n := p.World.Node(raftkv.NodeName(1))
	if n == nil {
		return nil
	}
	if s, ok := n.Handler().(*raftkv.Server); ok {
		return s.Cluster()
	}
	return nil
}
