package etcd

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

func init() {
	system.Register(system.System{
		Name: "etcd",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts: []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "ttl", What: "the session lease"}},
		GroundTruth: []system.Truth{
			{Label: "etcd", Strict: true},
			{Label: "etcd-guarded", Options: map[string]string{"resource": "etcd"}, Strict: true},
		},
		Recorded: []system.Recorded{
			{Label: "etcd", Nemesis: "random", Seeds: system.Seeds(1, 3), Time: time.Minute},
			{Label: "etcd", Nemesis: "random", Seeds: system.Seeds(11, 2), Time: 20 * time.Second, Trace: true},
		},
		Doc: "etcd (3 or 5 members on etcd raft): MVCC revisions, leases expired by the leader and restarted on a " +
			"leader change, clientv3 Session + queue Mutex or simple txn lock, create revision as fencing token, " +
			"optional guarded write Txn(If IsOwner Then Put) to a resource kept in etcd",
		Options: Table,
		Deploy:  system.DeployService(Table, NewCluster, (*Cluster).NewLock, deployEtcd),
		// Tokens are create revisions, given with every grant. The mutex's
		// key is its own lease's, so a late release deletes only its own.
		Claims: []system.Claims{
			{Tokens: true, SafeRelease: true},
			{Variant: "txn", Options: map[string]string{"lock": "txn", "unlock": "guarded"}, Tokens: true, SafeRelease: true},
		},
		// A session takes a lock once: a Lock whose key (the queue mutex: its
		// lease's key; the txn lock: the key holding its id) is already there
		// returns that key, and one Unlock deletes it. A client whose release
		// certainly failed still holds the lock; its next acquire is that same
		// grant, not a nested one.
		Uncounted: true,
		Designs: []system.Design{
			{Name: "etcd clientv3 Mutex", Modes: system.UnfencedOnly},
			{Name: "etcd clientv3 Mutex + revision fencing", Modes: system.FencedModes},
			{Name: "etcd Mutex + guarded Txn write", SystemOptions: map[string]string{"resource": "etcd"},
				Modes: []system.DesignMode{{Storage: storage.Unfenced, Guard: system.GuardEtcdTxn}}},
			{Name: "etcd Txn lock (put if absent, with a lease)", SystemOptions: map[string]string{"lock": "txn"}, Modes: system.UnfencedOnly},
		},
		DataGuard: func(opts map[string]string) (string, bool) {
			o, err := Table.Parse(opts)
			if err != nil || o.Resource != ResourceEtcd {
				return "", false
			}
			return system.GuardEtcdTxn, true
		},
	})
}

// deployEtcd hands the run what the members etcd1..etcdN record and offer.
// Schedules may name "leader" and "followers". The cluster's lease expiries
// and leader-change extensions are recorded in the history beside the
// faults.
func deployEtcd(_ *sim.World, o Options, c *Cluster) system.Deployment {
	var log *history.Log
	c.OnEvent = func(n *sim.Node, e SystemEvent) {
		if log != nil {
			system.RecordEvent(log, n.World(), e.Kind, []string{e.Member}, e.Detail)
		}
	}
	dep := system.Deployment{
		HasTokens: true,
		Messages:  MessageTypes(),
		Roles:     []string{"leader", "followers"},
		Record:    func(l *history.Log) { log = l },
		Figures:   func() map[string]any { return etcdFigures(c) },
	}
	if o.Resource == ResourceEtcd {
		dep.Writes = lockapi.NewWriteLog()
		c.RecordWrites(dep.Writes)
		dep.InitialData = c.Preset
		dep.NewStorage = func(p *sim.Proc, lock lockapi.Lock) lockapi.Storage {
			return NewGuardedStore(lock.(*Lock))
		}
	}
	return dep
}

// etcdFigures counts the cluster's lease expiries and extensions.
func etcdFigures(c *Cluster) map[string]any {
	counts := map[system.EventKind]int{system.EventLeaseExpired: 0, system.EventLeaseExtended: 0}
	for _, e := range c.Events() {
		counts[e.Kind]++
	}
	return map[string]any{"lease_expired": counts[system.EventLeaseExpired], "lease_extended": counts[system.EventLeaseExtended]}
}
