// Package redislockexample tests bsm/redislock, unmodified and with its
// default options, in library mode: the user's code below names the
// library's acquire (Client.Obtain) and release (Lock.Release); the test
// runs it in virtual time against the simulated Redis and finds
// Kleppmann's lost update under a GC pause, then shows that a fencing
// token (INCR after the grant, checked by the storage) keeps the data safe.
package redislockexample

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/lockapi"
)

// Lock is the user's code: redislock over one go-redis client, with an
// optional fencing token.
type Lock struct {
	RDB     *redis.Client
	Locks   *redislock.Client
	TTL     time.Duration
	Options *redislock.Options // nil: redislock's defaults (no retry)
	// Fence takes a fencing token after each grant: INCR of the key
	// "<key>:fence" on the same instance.
	Fence bool
}

// New builds the lock of one client of a run.
func New(c *libmode.Client, ttl time.Duration, fence bool) *Lock {
	rdb := redis.NewClient(c.RedisOptions(0))
	return &Lock{RDB: rdb, Locks: redislock.New(rdb), TTL: ttl, Fence: fence}
}

// Acquire is redislock's Obtain.
func (l *Lock) Acquire(ctx context.Context, key string) (libmode.Lease, error) {
	lk, err := l.Locks.Obtain(ctx, key, l.TTL, l.Options)
	if errors.Is(err, redislock.ErrNotObtained) {
		return libmode.Lease{}, fmt.Errorf("%w: %w", lockapi.ErrNotAcquired, err)
	}
	if err != nil {
		return libmode.Lease{}, err
	}
	lease := libmode.Lease{Owner: lk.Token() + lk.Metadata(), Valid: l.TTL, Handle: lk}
	if l.Fence {
		tok, err := l.RDB.Incr(ctx, key+":fence").Result()
		if err != nil {
			return libmode.Lease{}, fmt.Errorf("fencing token: %w", err)
		}
		lease.Token, lease.HasToken = uint64(tok), true
	}
	return lease, nil
}

// Release is redislock's Release.
func (l *Lock) Release(ctx context.Context, lease libmode.Lease) error {
	err := lease.Handle.(*redislock.Lock).Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fmt.Errorf("%w: %w", lockapi.ErrNotHeld, err)
	}
	return err
}

// Close closes the go-redis client.
func (l *Lock) Close() error { return l.RDB.Close() }
