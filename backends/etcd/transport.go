package etcd

import (
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Transport carries a lock client's requests to an etcd cluster: the part of
// clientv3 the lock recipe (Lock) stands on. The simulated transport is the
// KVClient over the kernel's messages; the live one is clientv3 itself
// (backends/etcd/live). Finding the leader, retrying across members and
// keeping a lease alive on the library's own are the transport's; the
// recipe's requests, their order and what their outcomes mean are Lock's.
// Every method takes the routine (env) on whose behalf it waits: the
// client's main routine or one it started with Go.
type Transport interface {
	// Txn runs t through the leader's log or, serializable, as a read that
	// one member answers from what it has applied. It reports ErrLeaseGone
	// (the Response carries the refusal) when t names a lease that no longer
	// exists, lockapi.ErrUnknown when t may have taken effect without an
	// answer and ErrNoLeader when it certainly did not. Response.Retried says
	// that an attempt that timed out may have applied t as well.
	Txn(env lockapi.Env, t Txn, serializable bool) (Response, error)
	// Grant creates a lease of at least ttl (the server's minimum, the
	// library's rounding); the Result carries its id and the TTL granted.
	Grant(env lockapi.Env, ttl time.Duration) (Result, error)
	// KeepAliveOnce renews lease at the leader: its TTL, or 0 when the lease
	// is gone; an error (lockapi.ErrUnknown) when no answer came.
	KeepAliveOnce(env lockapi.Env, lease int64) (time.Duration, error)
	// WaitDelete waits until key is deleted at a revision >= rev, until env's
	// monotonic clock reaches until; it reports whether the deletion was seen.
	WaitDelete(env lockapi.Env, key string, rev int64, until time.Duration) bool
	// Ended reports whether the client library ended lease's session on its
	// own (clientv3's keep-alive stream closed); a transport without such a
	// session says false.
	Ended(lease int64) bool
	// Go starts fn as a background routine of the client, named name (the
	// session's keep-alive, a late unlock): a process of the client's node in
	// the simulator, a goroutine live.
	Go(name string, fn func(env lockapi.Env))
}

// simTransport is the simulated Transport: the KVClient of the client's
// main process p, whose background routines are processes p spawns. The env
// of each call is a process of p's node.
type simTransport struct {
	kv *KVClient
	p  *sim.Proc
}

var _ Transport = simTransport{}

func (t simTransport) Txn(env lockapi.Env, x Txn, serializable bool) (Response, error) {
	return t.kv.Do(env.(*sim.Proc), Command{Type: CmdTxn, Txn: x}, serializable)
}

func (t simTransport) Grant(env lockapi.Env, ttl time.Duration) (Result, error) {
	return t.kv.Grant(env.(*sim.Proc), ttl)
}

func (t simTransport) KeepAliveOnce(env lockapi.Env, lease int64) (time.Duration, error) {
	return t.kv.KeepAliveOnce(env.(*sim.Proc), lease)
}

func (t simTransport) WaitDelete(env lockapi.Env, key string, rev int64, until time.Duration) bool {
	return t.kv.WaitDelete(env.(*sim.Proc), key, rev, until)
}

// Ended is false: the simulated client keeps its leases alive only through
// Lock's keep-alive routine.
func (simTransport) Ended(int64) bool { return false }

func (t simTransport) Go(name string, fn func(env lockapi.Env)) {
	t.p.Spawn(name, func(w *sim.Proc) { fn(w) })
}
