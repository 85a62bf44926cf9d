// Package fixed is the homemade Redis lock with its three mistakes
// corrected:
//
//  1. The value and the TTL are set by one command, SET key value NX PX ttl,
//     in a script that also takes a fencing token: INCR of a counter key.
//  2. Release is a Lua compare-and-delete: the key is deleted only if it
//     still holds our value, atomically.
//  3. Every lease carries the token; the storage refuses a write whose
//     token is older than one it has seen (locklab's fenced storage).
//
// It is written against userlock.Redis, the go-redis shape: the same code
// runs against locklab's simulated Redis and, live, a *redis.Client.
package fixed

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/userlock"
)

// TTL is the lock's time to live.
const TTL = 5 * time.Second

// acquire sets the lock key if absent, with its TTL, and returns a new
// fencing token; 0 when the key was held.
var acquire = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`)

// release deletes the lock key only if it holds our value.
var release = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// Lock is one client's lock.
type Lock struct {
	env userlock.Env
	rdb userlock.Redis
}

// New returns the lock of the client env, talking to Redis through rdb.
func New(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &Lock{env: env, rdb: rdb} }

// Acquire runs the acquire script until it grants the lock or wait runs out.
func (l *Lock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		token, err := acquire.Run(ctx, l.rdb, []string{key, key + ":fence"}, owner, TTL.Milliseconds()).Int64()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("acquire %s: %w: %w", key, err, userlock.ErrUnknown)
		}
		if token > 0 {
			return userlock.Lease{Key: key, Owner: owner, Token: uint64(token), HasToken: true, Deadline: start + TTL}, nil
		}
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

// Release deletes the key if it still holds our value.
func (l *Lock) Release(le userlock.Lease) error {
	n, err := release.Run(context.Background(), l.rdb, []string{le.Key}, le.Owner).Int64()
	if err != nil {
		return fmt.Errorf("release %s: %w: %w", le.Key, err, userlock.ErrUnknown)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", le.Key, userlock.ErrNotHeld)
	}
	return nil
}
