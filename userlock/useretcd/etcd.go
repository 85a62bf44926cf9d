// Package useretcd lets a lock of one's own written against etcd's clientv3
// be tested by locklab, as package userlock does for Redis and ZooKeeper:
// the lock is written against Etcd (the methods of *clientv3.Client a lock
// calls), registered with Register, and runs in the simulator over the
// simulated etcd cluster and, live (userlock/live's RegisterEtcd), over a
// real *clientv3.Client. It is a package of its own so that a program whose
// lock is not over etcd builds without clientv3 and gRPC.
//
//	func main() {
//		useretcd.Register(useretcd.EtcdLock{
//			Spec: userlock.Spec{Name: "mylock", Tokens: true},
//			New:  mylock.New, // func(env userlock.Env, cli useretcd.Etcd) userlock.Lock
//		})
//		cli.Main()
//	}
//
// (ExampleRegister in example_test.go registers such a lock and runs it.)
package useretcd

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/backends/etcd/etcdclient"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
)

// Etcd is the etcd client a user's lock is written against: the methods of
// clientv3's *clientv3.Client that a lock uses, with their exact signatures,
// so the real client satisfies it unchanged (live) and the simulated one
// (etcdclient.Client) runs the same code in the simulator. Options are
// clientv3's own (clientv3.WithLease, WithPrefix, WithRev, WithPrevKV,
// WithFirstCreate, ...), replies and errors are clientv3's
// (rpctypes.ErrLeaseNotFound, ...).
//
// In the simulator: each call is bounded by the option request-timeout on
// the client's clock and returns context.DeadlineExceeded past it (the
// context's own deadline is on the machine's clock and is not used; a
// cancelled context fails the call). KeepAlive and Watch are not offered:
// clientv3 feeds their channels from goroutines of its own, and a simulated
// client cannot block on a Go channel. KeepAlive returns an error; Watch
// returns a closed channel whose one response is cancelled; both are
// reported by the check lock-conduct. Renew with KeepAliveOnce from the
// lock's own calls, and wait by polling Get (WithRev) and Env.Sleep. A nested
// Txn is refused. A call from a goroutine the lock started returns an error
// and is reported.
type Etcd interface {
	Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error)
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
	Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error)
	Txn(ctx context.Context) clientv3.Txn
	Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error)
	Ctx() context.Context
	Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error)
	Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error)
	TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error)
	KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error)
	KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error)
	Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan
}

var (
	_ Etcd = (*clientv3.Client)(nil)
	_ Etcd = (*etcdclient.Client)(nil)
)

// EtcdLock is a user's lock over etcd.
type EtcdLock struct {
	userlock.Spec
	// New makes the lock of one client: env is its environment, cli its
	// etcd client (simulated, or live a *clientv3.Client).
	New func(env userlock.Env, cli Etcd) userlock.Lock
	// LockKey is the etcd key under which the lock keeps the lock of the
	// workload's key (nil: the key itself). The servers' record of grants
	// (the ground truth a verdict is checked against) reads the lock there:
	// the holder is, among the key LockKey(k) and the keys under
	// LockKey(k)+"/", the one with the lowest create revision; its owner is
	// that key's value (its name when the value is empty), so a lock whose
	// Lease.Owner is that string is matched with the record. A lock that
	// keeps its state elsewhere (a counter, an owner key apart) is judged by
	// that holder key only.
	LockKey func(key string) string
}

// lockKey is the key the lock keeps the lock of the workload's key under.
func (l EtcdLock) lockKey(key string) string {
	if l.LockKey == nil {
		return key
	}
	return l.LockKey(key)
}

// Register makes a user's lock over etcd a system: its runs deploy the
// simulated etcd cluster as the built-in etcd does, with the options that
// concern the servers (members, leader-change-extends, tick,
// election-timeout, initial-leader, backoff-max) and the client's
// request-timeout and attempt-timeout. Its live form (the same real etcd
// servers and a real *clientv3.Client) is registered by userlock/live's
// RegisterEtcd, which calls this one. It panics on a spec without a name
// or without New.
func Register(l EtcdLock) {
	if l.New == nil {
		panic("useretcd: etcd lock " + l.Name + " has no New")
	}
	l.RegisterSystem(l.SimSystem())
}

// SimSystem is the simulated system of the lock, as Register registers
// it (a test may register it alone, and system.Unregister it after).
func (l EtcdLock) SimSystem() system.System { return l.System("etcd", etcd.UserTable, l.deploy) }

// deploy adds the members etcd1..etcdN, recording the grants of the lock's
// keys, and makes each client's lock over a simulated clientv3.
func (l EtcdLock) deploy(w *sim.World, opts map[string]string, conduct *userlock.Conduct) (system.Deployment, error) {
	o, err := etcd.ParseUser(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	c, err := etcd.NewCluster(w, o.Options)
	if err != nil {
		return system.Deployment{}, err
	}
	grants := lockapi.NewGrantLog(1)
	c.RecordUserGrants(grants)
	var log *history.Log
	c.OnEvent = func(n *sim.Node, e etcd.SystemEvent) {
		if log != nil {
			system.RecordEvent(log, n.World(), e.Kind, []string{e.Member}, e.Detail)
		}
	}
	return system.Deployment{
		Grants:  grants,
		Servers: c.Nodes(),
		NewLock: func(p *sim.Proc) lockapi.Lock {
			cli := etcdclient.New(c, p, o.CallTimeout)
			cli.OnMisuse = func(call string, err error) {
				conduct.Report(p.Node().Name(), call, p.World().Now(), "%v", err)
			}
			return &keysWatched{Lock: l.New(p, cli), watch: func(key string) { c.WatchLock(key, l.lockKey(key)) }}
		},
		Messages: append(etcd.MessageTypes(), etcd.UserMessageTypes()...),
		Resolve:  c.Resolve,
		Roles:    []string{"leader", "followers"},
		Record:   func(h *history.Log) { log = h },
	}, nil
}

// keysWatched tells the servers' record which key's lock an acquire takes
// before the lock runs (watch: nil live, where nothing records).
type keysWatched struct {
	userlock.Lock
	watch func(key string)
}

func (k *keysWatched) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	if k.watch != nil {
		k.watch(key)
	}
	return k.Lock.Acquire(key, wait)
}
