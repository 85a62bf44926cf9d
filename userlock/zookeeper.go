package userlock

import (
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// ZooKeeper is the client a user's ZooKeeper lock is written against: the
// methods of go-zookeeper's *zk.Conn (github.com/go-zookeeper/zk v1.0.4)
// that a lock needs, so that the real *zk.Conn satisfies it unchanged. In
// the simulator it is zookeeper.Conn, over the simulated ensemble: the
// same replies and errors (zk.ErrNodeExists, zk.ErrNoNode,
// zk.ErrBadVersion, zk.ErrSessionExpired, zk.ErrConnectionClosed ...).
//
// Watches (ExistsW, GetW, ChildrenW) return go-zookeeper's channel of one
// event. A simulated client cannot block on a Go channel (the simulator
// does not control it: a bare receive stops the run, reported as a blocked
// call): wait for the event with WaitEvent, which works live as well, or
// poll Exists/Children with env.Sleep. Session events come, live, on the
// channel zk.Connect returns; a lock sees State and SessionID here.
// Children come in no particular order, live and simulated: sort them.
// Multi (go-zookeeper's transaction of several operations) is not offered:
// the simulated ensemble has no multi-operation transaction.
type ZooKeeper interface {
	// Create creates a node: flags zk.FlagEphemeral, zk.FlagSequence (or
	// zk.FlagEphemeralSequential, 0: persistent), acl e.g.
	// zk.WorldACL(zk.PermAll); it returns the path, with a sequential
	// node's sequence number appended.
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	// CreateProtectedEphemeralSequential creates an ephemeral sequential
	// node named with a guid, found again after a connection loss.
	CreateProtectedEphemeralSequential(path string, data []byte, acl []zk.ACL) (string, error)
	// Delete deletes a node of version version (-1: any).
	Delete(path string, version int32) error
	// Exists says whether a node exists.
	Exists(path string) (bool, *zk.Stat, error)
	// ExistsW is Exists with a watch on the node's creation, change, deletion.
	ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error)
	// Get reads a node's data.
	Get(path string) ([]byte, *zk.Stat, error)
	// GetW is Get with a watch on the node's change or deletion.
	GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	// Set writes a node's data if its version is version (-1: any).
	Set(path string, data []byte, version int32) (*zk.Stat, error)
	// Children lists a node's children (in no particular order).
	Children(path string) ([]string, *zk.Stat, error)
	// ChildrenW is Children with a watch on the children.
	ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error)
	// Sync makes the connection's server catch up with the leader: a read
	// after it sees every write committed before it. It returns path.
	Sync(path string) (string, error)
	// SessionID is the session's id (0: none).
	SessionID() int64
	// State is the session's state (zk.StateHasSession when connected).
	State() zk.State
}

var (
	_ ZooKeeper = (*zk.Conn)(nil)
	_ ZooKeeper = (*zookeeper.Conn)(nil)
)

// ZooKeeperLock is a user's lock over ZooKeeper.
type ZooKeeperLock struct {
	Spec
	// New makes the lock of one client from its environment and its
	// connection (in the simulator a zookeeper.Conn, live a *zk.Conn).
	New func(env Env, conn ZooKeeper) Lock
	// LockPath is the node whose children contend for the lock of the
	// workload's key (default "/locks/<key>"): the servers' record of
	// grants, the ground truth, says the holder of key is the owner of the
	// lowest sequential child of LockPath(key). The lock's leases should
	// name that child (Lease.Owner = the path Create returned), so that a
	// verdict and the record speak of the same owners.
	LockPath func(key string) string
}

func (l ZooKeeperLock) lockPath() func(string) string {
	return keyOr(l.LockPath, func(key string) string { return "/locks/" + key })
}

// RegisterZooKeeper registers a user's ZooKeeper lock as a system: in the
// simulator over the ensemble the built-in zookeeper system deploys
// (options: zookeeper.ServerOptions: servers, session-timeout, tick,
// election-timeout), each client with a zookeeper.Conn. A call of the
// connection from a goroutine of the lock's own is refused and judged by
// lock-conduct. Its live form (`locklab run --live`: the ensemble the
// built-in zookeeper system starts live, each client with its own
// go-zookeeper *zk.Conn) is registered by userlock/live's
// RegisterZooKeeper, which calls this one.
func RegisterZooKeeper(l ZooKeeperLock) {
	l.sessions = true
	l.registerOver("ZooKeeper", l.New != nil, func() system.System {
		return l.System("zookeeper", zookeeper.ServerOptions, l.deploy)
	})
}

// PathOf is the node whose children contend for the lock of the workload's
// key: LockPath(key), or "/locks/<key>" when LockPath is nil.
func (l ZooKeeperLock) PathOf(key string) string { return l.lockPath()(key) }

// deploy deploys the simulated ensemble for one run, each client with a
// zookeeper.Conn whose calls from other goroutines c judges.
func (l ZooKeeperLock) deploy(w *sim.World, opts map[string]string, c *Conduct) (system.Deployment, error) {
	return zookeeper.DeployUser(w, opts, zookeeper.UserLock{
		LockPath:   l.lockPath(),
		New:        func(p *sim.Proc, conn *zookeeper.Conn) lockapi.Lock { return l.New(p, conn) },
		Misconduct: func(client, call, what string) { c.Report(client, call, 0, "%s", what) },
	})
}

// WaitEvent waits at most d for the event of a watch channel (ExistsW,
// GetW, ChildrenW); ok is false when d passed first. Live it blocks on the
// channel; in the simulator, where a client cannot block on a Go channel,
// it looks at the channel every millisecond of the client's clock (the
// event is seen up to 1 ms after it came).
func WaitEvent(env Env, ch <-chan zk.Event, d time.Duration) (ev zk.Event, ok bool) {
	if _, simulated := env.(*sim.Proc); !simulated {
		t := time.NewTimer(d) // determinism:ok live only
		defer t.Stop()
		select { // determinism:ok live only
		case ev, ok = <-ch:
			return ev, ok
		case <-t.C:
			return zk.Event{}, false
		}
	}
	deadline := env.Mono() + d
	for {
		select { // determinism:ok the channel is filled by the simulated connection, never blocked on
		case ev, ok = <-ch:
			return ev, ok
		default:
		}
		left := deadline - env.Mono()
		if left <= 0 {
			return zk.Event{}, false
		}
		env.Sleep(min(time.Millisecond, left))
	}
}
