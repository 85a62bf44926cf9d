package userlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/userlock"
)

// setexLock takes the lock with SET NX and a TTL (one command) and releases
// it with a script that deletes the key only if it is still ours: a correct
// lease lock, without fencing tokens.
type setexLock struct {
	env userlock.Env
	rdb userlock.Redis
}

const exampleTTL = 10 * time.Second

var exampleRelease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('UNLINK', KEYS[1]) end return 0`)

func (l *setexLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	owner := fmt.Sprintf("%s-%x", l.env.Name(), l.env.Rand().Uint64())
	deadline := l.env.Mono() + wait
	for {
		start := l.env.Mono()
		ok, err := l.rdb.SetNX(ctx, key, owner, exampleTTL).Result()
		switch {
		case err != nil:
			return userlock.Lease{}, fmt.Errorf("SET NX %s: %w: %w", key, err, userlock.ErrUnknown)
		case ok:
			return userlock.Lease{Key: key, Owner: owner, Deadline: start + exampleTTL}, nil
		case l.env.Mono() >= deadline:
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

func (l *setexLock) Release(le userlock.Lease) error {
	n, err := exampleRelease.Run(context.Background(), l.rdb, []string{le.Key}, le.Owner).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("release %s: %w: %w", le.Key, err, userlock.ErrUnknown)
	case n == 0:
		return fmt.Errorf("%s: %w", le.Key, userlock.ErrNotHeld)
	}
	return nil
}

// ExampleRegisterRedis registers a lock of one's own over Redis, as a main
// package does before cli.Main, and runs the GC-pause variant of the
// scenario locklab stages against it (`locklab repro examplelock --variant
// gc-pause`): a correct lease lock without fencing still loses an update
// when its holder pauses past the lease.
func ExampleRegisterRedis() {
	userlock.RegisterRedis(userlock.RedisLock{
		Spec: userlock.Spec{Name: "examplelock", Doc: "SET NX PX, release by a script that checks the owner"},
		New:  func(env userlock.Env, rdb userlock.Redis) userlock.Lock { return &setexLock{env: env, rdb: rdb} },
	})
	s, _ := scenario.Find("examplelock")
	v, _ := s.FindVariant("gc-pause")
	r, err := harness.Run(v.ReproTest())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, vd := range r.Verdicts {
		fmt.Println(vd.Check, vd.Result)
	}
	// Output:
	// critical-sections invalid
	// mutual-exclusion invalid
	// lease valid
	// liveness valid
	// lock-conduct valid
}
