// Package txnlock is an etcd lock written directly against the KV API, not
// clientv3's concurrency.Mutex, the way many services do it:
//
//   - a lease of TTL seconds, renewed with KeepAliveOnce when the client
//     takes the lock again;
//   - Txn(If CreateRevision(key) == 0, Then Put(key, owner, WithLease)) to
//     take the lock; a waiter polls;
//   - the key's create revision as the fencing token (it increases with
//     every grant);
//   - release by a plain Delete(key).
//
// The plain Delete is its bug: a holder whose lease expired while it was
// paused deletes the next holder's key when it resumes and releases, and a
// third client takes the lock while the second still holds it. The
// guarded release is Txn(If ModRevision(key) == token, Then Delete(key)).
// Without fencing, the paused holder's writes also land after its lease
// ran out.
//
// It is written against useretcd.Etcd, the clientv3 shape: the same code
// runs against locklab's simulated cluster and, live, a *clientv3.Client.
package txnlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/useretcd"
)

// TTL is the lease's time to live, in seconds.
const TTL = 5

// Lock is one client's lock.
type Lock struct {
	env   userlock.Env
	cli   useretcd.Etcd
	lease clientv3.LeaseID
	// Guarded makes Release compare the key's mod revision with the token
	// before deleting it (the fix).
	Guarded bool
}

// New returns the lock of the client env over cli, with the plain Delete.
func New(env userlock.Env, cli useretcd.Etcd) userlock.Lock { return &Lock{env: env, cli: cli} }

// NewGuarded returns the lock with the guarded release.
func NewGuarded(env userlock.Env, cli useretcd.Etcd) userlock.Lock {
	return &Lock{env: env, cli: cli, Guarded: true}
}

// session renews the client's lease or grants a new one; it returns the
// moment before the request, where the lease's deadline counts from.
func (l *Lock) session(ctx context.Context) (time.Duration, error) {
	sent := l.env.Mono()
	if l.lease != 0 {
		_, err := l.cli.KeepAliveOnce(ctx, l.lease)
		if err == nil {
			return sent, nil
		}
		if !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return 0, err
		}
	}
	g, err := l.cli.Grant(ctx, TTL)
	if err != nil {
		return 0, err
	}
	l.lease = g.ID
	return sent, nil
}

// failed classifies a failed request: a timeout may have taken effect.
func failed(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", err, userlock.ErrUnknown)
	}
	return fmt.Errorf("%w: %w", err, userlock.ErrNotAcquired)
}

// Acquire puts the key under the client's lease if nobody holds it, polling
// until wait runs out.
func (l *Lock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	until := l.env.Mono() + wait
	for {
		sent, err := l.session(ctx)
		if err != nil {
			return userlock.Lease{}, failed(err)
		}
		owner := fmt.Sprintf("%s/%x", l.env.Name(), int64(l.lease))
		r, err := l.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, owner, clientv3.WithLease(l.lease))).
			Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return userlock.Lease{}, failed(err)
		}
		lease := userlock.Lease{Key: key, Owner: owner, HasToken: true, Deadline: sent + TTL*time.Second}
		if r.Succeeded {
			lease.Token = uint64(r.Header.Revision)
			return lease, nil
		}
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 && string(kvs[0].Value) == owner {
			lease.Token = uint64(kvs[0].CreateRevision) // our own put, whose reply was lost
			return lease, nil
		}
		if l.env.Mono() >= until {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

// Release deletes the key: plainly, or (Guarded) only if it is still ours.
func (l *Lock) Release(lease userlock.Lease) error {
	ctx := context.Background()
	if !l.Guarded {
		r, err := l.cli.Delete(ctx, lease.Key)
		switch {
		case err != nil:
			return fmt.Errorf("delete %s: %w: %w", lease.Key, err, userlock.ErrUnknown)
		case r.Deleted == 0:
			return fmt.Errorf("%s: %w", lease.Key, userlock.ErrNotHeld)
		}
		return nil
	}
	r, err := l.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(lease.Key), "=", int64(lease.Token))).
		Then(clientv3.OpDelete(lease.Key)).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("release %s: %w: %w", lease.Key, err, userlock.ErrUnknown)
	case !r.Succeeded:
		return fmt.Errorf("release %s: the key is no longer ours: %w", lease.Key, userlock.ErrNotHeld)
	}
	return nil
}
