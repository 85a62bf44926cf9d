package userlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/userlock"
)

// setnxLock is the lock a user writes from the docs: SETNX, then EXPIRE in a
// second command; GET, then DEL; no token. A client cut off between its
// SETNX and its EXPIRE (or whose SETNX reply is lost) leaves a key without
// a TTL that nothing will ever delete.
type setnxLock struct {
	env userlock.Env
	rdb userlock.Redis
}

const setnxTTL = 5 * time.Second

func (l *setnxLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		ok, err := l.rdb.SetNX(ctx, key, owner, 0).Result()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("SETNX %s: %v: %w", key, err, userlock.ErrUnknown)
		}
		if ok {
			l.rdb.Expire(ctx, key, setnxTTL) // its error is not looked at
			return userlock.Lease{Key: key, Owner: owner, Deadline: start + setnxTTL}, nil
		}
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

func (l *setnxLock) Release(le userlock.Lease) error {
	ctx := context.Background()
	v, err := l.rdb.Get(ctx, le.Key).Result()
	if errors.Is(err, goredis.Nil) || (err == nil && v != le.Owner) {
		return userlock.ErrNotHeld
	}
	if err != nil {
		return fmt.Errorf("GET %s: %v: %w", le.Key, err, userlock.ErrUnknown)
	}
	if err := l.rdb.Del(ctx, le.Key).Err(); err != nil {
		return fmt.Errorf("DEL %s: %v: %w", le.Key, err, userlock.ErrUnknown)
	}
	return nil
}

// setnxNXPXLock is the same lock corrected: SET NX PX sets the value and
// its TTL in one command.
type setnxNXPXLock struct{ setnxLock }

func (l *setnxNXPXLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		ok, err := l.rdb.SetNX(ctx, key, owner, setnxTTL).Result()
		if err != nil {
			return userlock.Lease{}, fmt.Errorf("SET NX PX %s: %v: %w", key, err, userlock.ErrUnknown)
		}
		if ok {
			return userlock.Lease{Key: key, Owner: owner, Deadline: start + setnxTTL}, nil
		}
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

var (
	setnxRedisLock = userlock.RedisLock{Spec: userlock.Spec{Name: "test-redis-setnx-expire"},
		New: func(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &setnxLock{env: env, rdb: rdb} }}
	nxpxRedisLock = userlock.RedisLock{Spec: userlock.Spec{Name: "test-redis-set-nx-px"},
		New: func(env userlock.Env, rdb userlock.Redis) userlock.Lock {
			return &setnxNXPXLock{setnxLock{env: env, rdb: rdb}}
		}}
)

// standing are the grants of the record without a TTL that never ended,
// made at least by (a grant made in the run's last seconds may have its
// EXPIRE still on the way: the liveness check gives a lock the stall limit,
// models.DefaultStallMax, to be taken again).
func standing(gs []lockapi.Grant, by time.Duration) []lockapi.Grant {
	var out []lockapi.Grant
	for _, g := range gs {
		if g.Until == 0 && g.Released == 0 && g.RemovedBy == "" && g.At <= by {
			out = append(out, g)
		}
	}
	return out
}

// TestAWedgedLockIsALivenessFailureWhateverFaultsOverlap: under random
// partitions (seeds 1-30), every run whose servers' record holds a grant
// without a TTL that never ended is liveness INVALID, "wedged by" that
// grant, its client, its time and the fault that left it (a grant made in
// the last 10 s, the stall limit, is not judged); the same lock
// corrected (SET NX PX) is liveness VALID on every seed.
func TestAWedgedLockIsALivenessFailureWhateverFaultsOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 60 runs of a minute")
	}
	registerRedis(t, setnxRedisLock)
	registerRedis(t, nxpxRedisLock)
	wedged := 0
	var seeds []uint64
	for seed := uint64(1); seed <= 30; seed++ {
		test := scenario.Test{System: setnxRedisLock.Name, Nemesis: "partition", Seed: seed, Time: time.Minute}
		r, grants := runWithGrants(t, test)
		v := verdict(r, "liveness")
		stand := standing(grants.Grants(), test.Time-models.DefaultStallMax)
		t.Logf("seed %d: %d standing grant(s); liveness %s: %s", seed, len(stand), v.Result, v.Reason)
		if len(stand) == 0 {
			continue
		}
		wedged++
		seeds = append(seeds, seed)
		g := stand[0]
		require.Equal(t, models.Invalid, v.Result, "seed %d: the record shows %+v standing: %s", seed, g, v.Reason)
		assert.Contains(t, v.Reason, fmt.Sprintf("wedged by the grant of %q to %s", g.Key, g.Client), "seed %d", seed)
		assert.True(t, strings.Contains(v.Reason, "fault from") || strings.Contains(v.Reason, "no fault to blame"), "seed %d: %s", seed, v.Reason)

		fixed := test
		fixed.System = nxpxRedisLock.Name
		rf, fixedGrants := runWithGrants(t, fixed)
		fv := verdict(rf, "liveness")
		assert.Empty(t, standing(fixedGrants.Grants(), fixed.Time), "seed %d: SET NX PX leaves no grant without a TTL", seed)
		assert.Equal(t, models.Valid, fv.Result, "seed %d (SET NX PX): %s", seed, fv.Reason)
	}
	t.Logf("%d of 30 runs wedged (seeds %v), each liveness INVALID; SET NX PX VALID on each", wedged, seeds)
	assert.GreaterOrEqual(t, wedged, 10, "the partitions wedge the lock in many of the 30 runs")
}

// TestTheSimulatorTellsALateWriteAsLiveDoes: in the delayed-write scenario
// client 1's write lands 15 s late, after its client gave up on it; the
// simulated storage says so in the run's notes, in the words of a live run
// (storage.LateWriteNotes).
func TestTheSimulatorTellsALateWriteAsLiveDoes(t *testing.T) {
	registerRedis(t, brokenRedisLock)
	r, _ := runWithGrants(t, redisVariant(t, brokenRedisLock, "delayed-write"))
	var late []string
	for _, n := range r.Notes {
		if strings.Contains(n, "given up on by its client, reached the storage at") {
			late = append(late, n)
		}
	}
	require.Len(t, late, 1, "%q", r.Notes)
	t.Log(late[0])
	assert.Regexp(t, `^c1's write of \d+ to "k", sent at \d+\.\d{3}s and given up on by its client, reached the storage at \d+\.\d{3}s \(15\.\d+s after it was sent\) and was `, late[0])
}
