// Package redsyncexample tests go-redsync/redsync v4 (Redlock), unmodified
// and with its default options, in library mode over five simulated Redis
// instances: the user's code below names the library's acquire
// (Mutex.LockContext) and release (Mutex.UnlockContext). The tests find
// Kleppmann's lost update under a GC pause, and the clock-jump
// counterexample: one instance's clock jumps while two clients' quorums
// meet only on it.
package redsyncexample

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/lockapi"
)

// Lock is the user's code: one redsync over a go-redis client per
// instance, a new Mutex per acquisition, default options.
type Lock struct {
	Clients []*goredislib.Client
	RS      *redsync.Redsync
}

// New builds the lock of one client of a run, over every instance.
func New(c *libmode.Client) *Lock {
	var rdbs []*goredislib.Client
	for i := range c.Addrs() {
		rdbs = append(rdbs, goredislib.NewClient(c.RedisOptions(i)))
	}
	return newOver(rdbs)
}

// newOver builds the lock over go-redis clients, one per instance.
func newOver(rdbs []*goredislib.Client) *Lock {
	l := &Lock{Clients: rdbs}
	var pools []redis.Pool
	for _, rdb := range rdbs {
		pools = append(pools, goredis.NewPool(rdb))
	}
	l.RS = redsync.New(pools...)
	return l
}

// Acquire is redsync's LockContext.
func (l *Lock) Acquire(ctx context.Context, key string) (libmode.Lease, error) {
	m := l.RS.NewMutex(key)
	err := m.LockContext(ctx)
	var taken *redsync.ErrTaken
	if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
		return libmode.Lease{}, fmt.Errorf("%w: %w", lockapi.ErrNotAcquired, err)
	}
	if err != nil {
		return libmode.Lease{}, err
	}
	return libmode.Lease{Owner: m.Value(), Until: m.Until(), Handle: m}, nil
}

// Release is redsync's UnlockContext: ok false means fewer than a quorum
// of instances released it.
func (l *Lock) Release(ctx context.Context, lease libmode.Lease) error {
	ok, err := lease.Handle.(*redsync.Mutex).UnlockContext(ctx)
	if ok {
		return nil
	}
	// Certainly not held only when every instance that answered said so
	// (expired, or taken by another value); an error of an instance leaves
	// the outcome unknown.
	var redisErr *redsync.RedisError
	if err != nil && !errors.As(err, &redisErr) {
		return fmt.Errorf("%w: %w", lockapi.ErrNotHeld, err)
	}
	return fmt.Errorf("released on fewer than a quorum of instances: %w", err)
}

// Close closes the go-redis clients.
func (l *Lock) Close() error {
	var errs []error
	for _, c := range l.Clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
