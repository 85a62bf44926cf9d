package redis

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

const releaseScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`

// goClient runs body on a new client node with a go-redis-shaped client.
func (w *world) goClient(name string, o GoRedisOptions, body func(p *sim.Proc, c *GoRedisClient)) *sim.Node {
	n := w.w.AddNode(name, sim.NodeOptions{})
	n.Spawn(name, func(p *sim.Proc) { body(p, NewGoRedisClient(p, Topology{Primary: w.srv.ID()}, o)) })
	return n
}

func TestTheGoRedisClientAnswersAsGoRedisDoes(t *testing.T) {
	w := newWorld(PersistNone)
	ctx := context.Background()
	ran := false
	w.goClient("c1", DefaultGoRedisOptions(), func(p *sim.Proc, c *GoRedisClient) {
		ok, err := c.SetNX(ctx, "k", "v1", 10*time.Second).Result()
		require.NoError(t, err)
		assert.True(t, ok, "SET NX of an absent key")
		ok, err = c.SetNX(ctx, "k", "v2", 10*time.Second).Result()
		assert.NoError(t, err, "SET NX of a held key: nil, which go-redis reads as false")
		assert.False(t, ok)
		v, err := c.Get(ctx, "k").Result()
		assert.Equal(t, "v1", v)
		assert.NoError(t, err)
		_, err = c.Get(ctx, "missing").Result()
		assert.ErrorIs(t, err, goredis.Nil)
		ttl, err := c.PTTL(ctx, "k").Result()
		require.NoError(t, err)
		assert.Equal(t, 9992*time.Millisecond, ttl, "four round trips of 2 ms after the SET")
		assert.Equal(t, time.Duration(-2), c.PTTL(ctx, "missing").Val())

		script := goredis.NewScript(releaseScript)
		n, err := script.Run(ctx, c, []string{"k"}, "v2").Int64()
		assert.NoError(t, err)
		assert.Zero(t, n, "another owner's release deletes nothing")
		n, err = script.Run(ctx, c, []string{"k"}, "v1").Int64()
		assert.NoError(t, err)
		assert.Equal(t, int64(1), n)
		assert.Equal(t, []bool{true}, c.ScriptExists(ctx, script.Hash()).Val(), "Run fell back to EVAL, which cached it")

		assert.Equal(t, int64(1), c.HSet(ctx, "h", "owner", "c1").Val())
		err = c.Incr(ctx, "h").Err()
		var re goredis.Error
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "WRONGTYPE Operation against a key holding the wrong kind of value", err.Error())
		assert.Equal(t, int64(3), c.HIncrBy(ctx, "h", "n", 3).Val())
		assert.Equal(t, "OK", c.Set(ctx, "s", 42, 0).Val())
		assert.Equal(t, int64(43), c.Incr(ctx, "s").Val())
		assert.Equal(t, []any{int64(1), "a"}, c.Eval(ctx, "return {1, 'a', nil, 'b'}", nil).Val(), "an array stops at its first nil, as Lua's length does")
		_, err = c.EvalSha(ctx, "0000000000000000000000000000000000000000", nil).Result()
		assert.Equal(t, goredis.ErrNoScript, err)
		ran = true
	})
	w.w.Run(time.Minute)
	require.True(t, ran)
}

func TestATimedOutCommandIsRetriedAsGoRedisRetriesIt(t *testing.T) {
	w := newWorld(PersistNone)
	ctx := context.Background()
	var err error
	var at time.Duration
	w.goClient("c1", GoRedisOptions{ReadTimeout: time.Second, MaxRetries: 2, MinRetryBackoff: 8 * time.Millisecond,
		MaxRetryBackoff: 512 * time.Millisecond}, func(p *sim.Proc, c *GoRedisClient) {
		w.srv.Crash()
		err = c.Set(ctx, "k", "v", 0).Err()
		at = p.World().Now()
	})
	w.w.Run(time.Minute)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	assert.Equal(t, "read tcp c1->redis: i/o timeout", err.Error())
	assert.Greater(t, at, 3*time.Second, "three attempts of a second each, and two back-offs")
}

func TestTheServerRecordsTheGrantsOfLockKeys(t *testing.T) {
	w := newWorld(PersistNone)
	grants := lockapi.NewGrantLog(1)
	w.rs.RecordGrants(grants, "redis")
	w.rs.WatchLockKeys(func(key string) bool { return key == "lock" })
	ctx := context.Background()
	w.goClient("c1", DefaultGoRedisOptions(), func(p *sim.Proc, c *GoRedisClient) {
		require.True(t, c.SetNX(ctx, "lock", "a", time.Second).Val())
		require.NoError(t, c.Incr(ctx, "lock:fence").Err(), "not a lock key: not recorded")
		p.Sleep(500 * time.Millisecond)
		require.True(t, c.PExpire(ctx, "lock", time.Second).Val())
		p.Sleep(2 * time.Second)
		// a, expired, is gone; c2 holds it; c1 deletes c2's lock
		require.Equal(t, int64(1), c.Del(ctx, "lock").Val())
	})
	w.goClient("c2", DefaultGoRedisOptions(), func(p *sim.Proc, c *GoRedisClient) {
		p.Sleep(2 * time.Second)
		require.True(t, c.SetNX(ctx, "lock", "b", 0).Val())
	})
	w.w.Run(time.Minute)
	gs := grants.Grants()
	require.Len(t, gs, 2)
	assert.Equal(t, "a", gs[0].Owner)
	assert.Equal(t, "c1", gs[0].Client)
	assert.Equal(t, 1505*time.Millisecond, gs[0].Until, "renewed at 0.505 s (SET, INCR, a sleep, PEXPIRE) for a second")
	assert.Equal(t, "b", gs[1].Owner)
	assert.Zero(t, gs[1].Until, "no TTL: a grant without a lease")
	assert.Equal(t, "c1", gs[1].RemovedBy)
	require.Len(t, grants.Breaches(), 1)
}

func TestACallFromAnotherGoroutineIsRefused(t *testing.T) {
	w := newWorld(PersistNone)
	ctx := context.Background()
	var err error
	var strays []string
	w.goClient("c1", DefaultGoRedisOptions(), func(p *sim.Proc, c *GoRedisClient) {
		done := make(chan struct{})
		go func() { //nolint // the misconduct under test
			err = c.Get(ctx, "k").Err()
			close(done)
		}()
		<-done
		strays = c.Strays()
	})
	w.w.Run(time.Minute)
	assert.True(t, errors.Is(err, ErrStrayCall))
	assert.Equal(t, []string{`GET("k")`}, strays)
	assert.Zero(t, w.rs.Commands, "nothing reached the server")
}

func TestCommandsSurviveACrashAsPersistenceSays(t *testing.T) {
	for _, tc := range []struct {
		persistence Persistence
		kept        bool
	}{{PersistNone, false}, {PersistAlways, true}} {
		t.Run(string(tc.persistence), func(t *testing.T) {
			w := newWorld(tc.persistence)
			ctx := context.Background()
			var err error
			w.goClient("c1", DefaultGoRedisOptions(), func(p *sim.Proc, c *GoRedisClient) {
				require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
				w.srv.Crash()
				w.srv.Restart()
				err = c.Get(ctx, "k").Err()
			})
			w.w.Run(time.Minute)
			if tc.kept {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, goredis.Nil)
			}
		})
	}
}
