package harness

import (
	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

func init() {
	registerSystem(System{
		Name: "zookeeper",
		Doc: "ZooKeeper ensemble (zk1..zkN, writes through a leader and a quorum) and Curator's InterProcessMutex: " +
			"EPHEMERAL_SEQUENTIAL nodes, sessions expired by the leader, protection, herd, on-suspend, czxid tokens",
		Options: zookeeper.Table,
		Deploy:  deployZooKeeper,
		Claims:  []Claims{{Tokens: true, SafeRelease: true}},
	})
}

// deployZooKeeper adds the ensemble. Schedules may name "leader",
// "followers", "server-of:cN" and "servers-but:cN".
func deployZooKeeper(w *sim.World, opts map[string]string) (Deployment, error) {
	o, err := zookeeper.Table.Parse(opts)
	if err != nil {
		return Deployment{}, err
	}
	e, err := zookeeper.NewEnsemble(w, o)
	if err != nil {
		return Deployment{}, err
	}
	var log *history.Log
	e.OnEvent = func(ev zookeeper.Event) {
		if log != nil && ev.F == "session-expired" {
			recordSystemEvent(log, w, ev.F, ev.Targets, ev.Detail)
		}
	}
	return Deployment{
		Servers:   e.Nodes(),
		NewLock:   func(p *sim.Proc) backends.Lock { return e.NewClient(p) },
		HasTokens: true,
		Resolve:   e.Resolve,
		Roles:     zookeeper.Roles(),
		Record:    func(l *history.Log) { log = l },
		Messages:  zookeeper.MessageTypes(),
		Figures: func() map[string]any {
			return map[string]any{"elections": e.Elections, "sessions_expired": e.Expired}
		},
	}, nil
}
