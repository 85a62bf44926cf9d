// Package careless is the homemade lock as it is often first written for
// production, with the machine's clock, sleep, a goroutine and global
// randomness: code the simulator cannot run deterministically. `locklab vet
// ./careless` names each; the homemade package is the same lock written
// against the client's Env, which vet passes.
package careless

import (
	"context"
	"fmt"
	"math/rand"
	"time"

	"github.com/locklab/locklab/userlock"
)

// TTL is the lock's time to live.
const TTL = 5 * time.Second

// Lock is one client's lock.
type Lock struct{ rdb userlock.Redis }

// Acquire polls SETNX, then sets the TTL in the background.
func (l *Lock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("owner-%d", rand.Int63()) // global randomness
	deadline := time.Now().Add(wait)               // the machine's clock
	for {
		ok, err := l.rdb.SetNX(ctx, key, owner, 0).Result()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("SETNX %s: %w: %w", key, err, userlock.ErrUnknown)
		}
		if ok {
			go l.rdb.PExpire(ctx, key, TTL) // a goroutine of its own
			return userlock.Lease{Key: key, Owner: owner}, nil
		}
		if time.Now().After(deadline) {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		time.Sleep(50 * time.Millisecond) // sleeps on the machine's clock
	}
}

// Release deletes the key.
func (l *Lock) Release(le userlock.Lease) error {
	return l.rdb.Del(context.Background(), le.Key).Err()
}
