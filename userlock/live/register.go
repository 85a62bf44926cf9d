package userlive

import (
	"fmt"

	"github.com/go-zookeeper/zk"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/useretcd"
)

// RegisterEtcd registers a user's lock over etcd in both worlds: as
// useretcd.Register does (the system over the simulated etcd cluster)
// and its live form: the real etcd servers the built-in etcd system starts
// live, each client's lock, guarded (a panic becomes an unknown outcome),
// over a real *clientv3.Client. It panics on a spec without a name or
// without New.
func RegisterEtcd(l useretcd.EtcdLock) {
	useretcd.Register(l)
	registerEtcdForm(l.Name, l.Tokens, func(env lockapi.Env, cli *clientv3.Client) lockapi.Lock {
		return userlock.Guard(l.New(env, cli), env, l.Spec, nil)
	})
}

// RegisterZooKeeper registers a user's ZooKeeper lock in both worlds: as
// userlock.RegisterZooKeeper does (the system over the simulated ensemble)
// and its live form: the ensemble the built-in zookeeper system starts
// live, with the same options, names and faults, each client with its own
// go-zookeeper *zk.Conn. The lock is guarded there too, by a conduct record
// of the run whose misconduct is written into the history as
// "lock-misconduct" events and listed in the run's figures
// (lock_misconduct); the check lock-conduct audits simulated runs only. It
// panics on a spec without a name or without New.
func RegisterZooKeeper(l userlock.ZooKeeperLock) {
	userlock.RegisterZooKeeper(l)
	liveform.Register(l.Name, zooKeeperForm(zkLock{
		Name:     l.Name,
		New:      func(env lockapi.Env, conn *zk.Conn) lockapi.Lock { return l.New(env, conn) },
		LockPath: l.PathOf,
		Tokens:   l.Tokens,
		Guard:    func() (func(lockapi.Lock, lockapi.Env) lockapi.Lock, func() []string) { return guard(l.Spec) },
	}))
}

// guard opens a live run's conduct record of the lock of spec s: each
// client's lock is guarded by it, its times are the clients' clocks (the
// run's), and its misconduct reads as lock-conduct's counterexample lines.
func guard(s userlock.Spec) (func(lockapi.Lock, lockapi.Env) lockapi.Lock, func() []string) {
	c := userlock.NewConduct(nil)
	wrap := func(l lockapi.Lock, env lockapi.Env) lockapi.Lock { return userlock.Guard(l, env, s, c) }
	lines := func() []string {
		var out []string
		for _, m := range c.Misconducts() {
			out = append(out, fmt.Sprintf("client %s's %s at %s: %s", m.Client, m.Call, m.At, m.What))
		}
		return out
	}
	return wrap, lines
}
