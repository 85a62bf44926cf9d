// Package homemade is the Redis lock many teams write first, with the three
// classic mistakes:
//
//  1. SETNX then PEXPIRE as two commands: a client that dies, pauses or
//     loses the connection between them leaves a lock without a TTL, held
//     for ever.
//  2. Release by GET, compare, then DEL: a client paused between its GET
//     and its DEL deletes the next holder's lock.
//  3. No fencing token: a holder paused past its TTL writes after another
//     client was granted the lock, and the storage cannot tell.
//
// It is written against userlock.Redis, the go-redis shape: the same code
// runs against locklab's simulated Redis and, live, a *redis.Client.
package homemade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/userlock"
)

// TTL is the lock's time to live.
const TTL = 5 * time.Second

// Lock is one client's lock.
type Lock struct {
	env userlock.Env
	rdb userlock.Redis
}

// New returns the lock of the client env, talking to Redis through rdb.
func New(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &Lock{env: env, rdb: rdb} }

// Acquire tries SETNX until it succeeds or wait runs out, then sets the TTL.
func (l *Lock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		ok, err := l.rdb.SetNX(ctx, key, owner, 0).Result()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("SETNX %s: %w: %w", key, err, userlock.ErrUnknown)
		}
		if ok {
			// Mistake 1: a second command. If it never arrives, the key
			// has no TTL.
			l.rdb.PExpire(ctx, key, TTL)
			return userlock.Lease{Key: key, Owner: owner, Deadline: start + TTL}, nil
		}
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

// Release checks that the key still holds our value, then deletes it.
func (l *Lock) Release(le userlock.Lease) error {
	ctx := context.Background()
	v, err := l.rdb.Get(ctx, le.Key).Result()
	if errors.Is(err, redis.Nil) || (err == nil && v != le.Owner) {
		return fmt.Errorf("%s: %w", le.Key, userlock.ErrNotHeld)
	}
	if err != nil {
		return fmt.Errorf("GET %s: %w: %w", le.Key, err, userlock.ErrUnknown)
	}
	// Mistake 2: between the GET and the DEL the key may expire and be
	// taken by another client, whose lock this DEL deletes.
	if err := l.rdb.Del(ctx, le.Key).Err(); err != nil {
		return fmt.Errorf("DEL %s: %w: %w", le.Key, err, userlock.ErrUnknown)
	}
	return nil
}
