package redis

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/sim"
)

// seen is what a user's code sees of a Cmder: its value and its error.
func seen(c goredis.Cmder) string {
	var v any
	switch c := c.(type) {
	case *goredis.Cmd:
		v = c.Val()
	case *goredis.StatusCmd:
		v = c.Val()
	case *goredis.StringCmd:
		v = c.Val()
	case *goredis.IntCmd:
		v = c.Val()
	case *goredis.BoolCmd:
		v = c.Val()
	case *goredis.DurationCmd:
		v = c.Val()
	case *goredis.BoolSliceCmd:
		v = c.Val()
	}
	return fmt.Sprintf("%#v / %v / redis.Error %v", v, c.Err(), isRedisError(c.Err()))
}

func isRedisError(err error) bool {
	_, ok := err.(goredis.Error)
	return ok
}

var ctx0 = context.Background()

func TestTheSimulatedClientAnswersAsGoRedisOnRedisServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real redis-server")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found: install the Debian package redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	real := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), DisableIdentity: true})
	t.Cleanup(func() { _ = real.Close() })
	for i := 0; real.Ping(ctx0).Err() != nil; i++ {
		require.Less(t, i, 100, "redis-server did not answer")
		time.Sleep(50 * time.Millisecond)
	}

	script := goredis.NewScript(releaseScript)
	calls := []struct {
		name string
		run  func(c Redis) goredis.Cmder
		ttl  bool
	}{
		{"SetNX with a lease", func(c Redis) goredis.Cmder { return c.SetNX(ctx0, "lock", "a", 10*time.Second) }, false},
		{"SetNX of a held key", func(c Redis) goredis.Cmder { return c.SetNX(ctx0, "lock", "b", 1500*time.Millisecond) }, false},
		{"SetNX without a lease", func(c Redis) goredis.Cmder { return c.SetNX(ctx0, "plain", "a", 0) }, false},
		{"Get", func(c Redis) goredis.Cmder { return c.Get(ctx0, "lock") }, false},
		{"Get of nothing", func(c Redis) goredis.Cmder { return c.Get(ctx0, "none") }, false},
		{"PTTL", func(c Redis) goredis.Cmder { return c.PTTL(ctx0, "lock") }, true},
		{"PTTL without expiry", func(c Redis) goredis.Cmder { return c.PTTL(ctx0, "plain") }, false},
		{"PTTL of nothing", func(c Redis) goredis.Cmder { return c.PTTL(ctx0, "none") }, false},
		{"PExpire", func(c Redis) goredis.Cmder { return c.PExpire(ctx0, "plain", 20*time.Second) }, false},
		{"PExpire of nothing", func(c Redis) goredis.Cmder { return c.PExpire(ctx0, "none", time.Second) }, false},
		{"release by another owner", func(c Redis) goredis.Cmder { return script.Run(ctx0, c, []string{"lock"}, "b") }, false},
		{"release by the owner", func(c Redis) goredis.Cmder { return script.Run(ctx0, c, []string{"lock"}, "a") }, false},
		{"ScriptExists", func(c Redis) goredis.Cmder { return c.ScriptExists(ctx0, script.Hash(), "0000") }, false},
		{"ScriptLoad", func(c Redis) goredis.Cmder { return c.ScriptLoad(ctx0, "return KEYS[1]") }, false},
		{"EvalSha", func(c Redis) goredis.Cmder { return c.EvalSha(ctx0, sha1hex("return KEYS[1]"), []string{"x"}) }, false},
		{"EvalSha NOSCRIPT", func(c Redis) goredis.Cmder { return c.EvalSha(ctx0, sha1hex("return 7"), nil) }, false},
		{"EvalRO write", func(c Redis) goredis.Cmder {
			return c.EvalRO(ctx0, "return redis.call('DEL', KEYS[1])", []string{"plain"})
		}, false},
		{"EvalShaRO", func(c Redis) goredis.Cmder { return c.EvalShaRO(ctx0, sha1hex("return KEYS[1]"), []string{"y"}) }, false},
		{"Eval array", func(c Redis) goredis.Cmder {
			return c.Eval(ctx0, "return {1, 'two', redis.status_reply('OK'), {3}}", nil)
		}, false},
		{"Eval error reply", func(c Redis) goredis.Cmder { return c.Eval(ctx0, "return redis.error_reply('MY bad')", nil) }, false},
		{"Eval WRONGTYPE", func(c Redis) goredis.Cmder {
			return c.Eval(ctx0, "redis.call('HSET', 'h', 'f', 'v'); return redis.call('GET', 'h')", nil)
		}, false},
		{"Eval args", func(c Redis) goredis.Cmder {
			return c.Eval(ctx0, "return ARGV[1] .. ARGV[2] .. ARGV[3]", nil, 5, 2.5, true)
		}, false},
		{"Set KeepTTL", func(c Redis) goredis.Cmder { return c.Set(ctx0, "plain", "b", goredis.KeepTTL) }, false},
		{"PTTL kept", func(c Redis) goredis.Cmder { return c.PTTL(ctx0, "plain") }, true},
		{"Set whole seconds", func(c Redis) goredis.Cmder { return c.Set(ctx0, "s", "v", 3*time.Second) }, false},
		{"SetArgs NX GET", func(c Redis) goredis.Cmder {
			return c.SetArgs(ctx0, "s", "w", goredis.SetArgs{Mode: "NX", Get: true, TTL: time.Second})
		}, false},
		{"SetArgs XX GET", func(c Redis) goredis.Cmder { return c.SetArgs(ctx0, "s", "w", goredis.SetArgs{Mode: "XX", Get: true}) }, false},
		{"Incr", func(c Redis) goredis.Cmder { return c.Incr(ctx0, "lock:fence") }, false},
		{"Incr not a number", func(c Redis) goredis.Cmder { return c.Incr(ctx0, "s") }, false},
		{"Incr of a hash", func(c Redis) goredis.Cmder { return c.Incr(ctx0, "h") }, false},
		{"Exists", func(c Redis) goredis.Cmder { return c.Exists(ctx0, "s", "h", "none", "s") }, false},
		{"HSet", func(c Redis) goredis.Cmder { return c.HSet(ctx0, "hl", "owner", "c1", "count", 1) }, false},
		{"HSet map", func(c Redis) goredis.Cmder { return c.HSet(ctx0, "hm", map[string]string{"a": "1", "b": "2"}) }, false},
		{"HGet", func(c Redis) goredis.Cmder { return c.HGet(ctx0, "hl", "owner") }, false},
		{"HGet of nothing", func(c Redis) goredis.Cmder { return c.HGet(ctx0, "hl", "none") }, false},
		{"HIncrBy", func(c Redis) goredis.Cmder { return c.HIncrBy(ctx0, "hl", "count", 2) }, false},
		{"HIncrBy not a number", func(c Redis) goredis.Cmder { return c.HIncrBy(ctx0, "hl", "owner", 1) }, false},
		{"HDel", func(c Redis) goredis.Cmder { return c.HDel(ctx0, "hl", "owner", "none") }, false},
		{"Del", func(c Redis) goredis.Cmder { return c.Del(ctx0, "s", "none", "hl") }, false},
		{"SetEx", func(c Redis) goredis.Cmder { return c.SetEx(ctx0, "ex", "v", 30*time.Second) }, false},
		{"TTL", func(c Redis) goredis.Cmder { return c.TTL(ctx0, "ex") }, true},
		{"TTL of nothing", func(c Redis) goredis.Cmder { return c.TTL(ctx0, "none") }, false},
		{"Expire", func(c Redis) goredis.Cmder { return c.Expire(ctx0, "ex", 40*time.Second) }, false},
		{"Expire of nothing", func(c Redis) goredis.Cmder { return c.Expire(ctx0, "none", time.Second) }, false},
		{"GetSet", func(c Redis) goredis.Cmder { return c.GetSet(ctx0, "ex", "w") }, false},
		{"TTL after GetSet", func(c Redis) goredis.Cmder { return c.TTL(ctx0, "ex") }, false},
		{"GetSet of nothing", func(c Redis) goredis.Cmder { return c.GetSet(ctx0, "gs", "1") }, false},
		{"PExpireAt in the past", func(c Redis) goredis.Cmder { return c.PExpireAt(ctx0, "gs", time.UnixMilli(1000)) }, false},
		{"gone", func(c Redis) goredis.Cmder { return c.Exists(ctx0, "gs") }, false},
		{"PExpireAt of nothing", func(c Redis) goredis.Cmder { return c.PExpireAt(ctx0, "none", time.UnixMilli(1000)) }, false},
		{"Unlink", func(c Redis) goredis.Cmder { return c.Unlink(ctx0, "ex", "none") }, false},
		{"SetEx zero", func(c Redis) goredis.Cmder { return c.Do(ctx0, "SETEX", "z", 0, "v") }, false},
		{"script calls", func(c Redis) goredis.Cmder {
			return c.Eval(ctx0, "redis.call('SETEX', KEYS[1], 9, 'a'); redis.call('EXPIRE', KEYS[1], 20); "+
				"local old = redis.call('GETSET', KEYS[1], 'b'); return {old, redis.call('TTL', KEYS[1]), redis.call('UNLINK', KEYS[1])}", []string{"sc"})
		}, false},
		{"Do SETNX", func(c Redis) goredis.Cmder { return c.Do(ctx0, "SETNX", "n", 1) }, false},
		{"Do syntax error", func(c Redis) goredis.Cmder { return c.Do(ctx0, "SET", "n", 1, "PX", 0) }, false},
		{"Do unknown", func(c Redis) goredis.Cmder { return c.Do(ctx0, "NOSUCH", "a") }, false},
		{"Do arity", func(c Redis) goredis.Cmder { return c.Do(ctx0, "GET") }, false},
		{"Do a slice", func(c Redis) goredis.Cmder { return c.Do(ctx0, "DEL", []string{"a"}) }, false},
	}

	// The simulated replies, from one process on a simulated Redis.
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	srv := w.AddNode("redis", sim.NodeOptions{Handler: NewServer(PersistNone)})
	simulated := make([]goredis.Cmder, len(calls))
	w.AddNode("c1", sim.NodeOptions{}).Spawn("c1", func(p *sim.Proc) {
		c := NewGoRedisClient(p, Topology{Primary: srv.ID()}, DefaultGoRedisOptions())
		for i, cl := range calls {
			simulated[i] = cl.run(c)
		}
	})
	w.Run(time.Minute)

	require.NoError(t, real.FlushAll(ctx0).Err())
	require.NoError(t, real.ScriptFlush(ctx0).Err())
	for i, cl := range calls {
		got := cl.run(real)
		if cl.ttl {
			assert.InDelta(t, got.(*goredis.DurationCmd).Val(), simulated[i].(*goredis.DurationCmd).Val(), float64(50*time.Millisecond), cl.name)
			continue
		}
		assert.Equal(t, seen(got), seen(simulated[i]), cl.name)
	}
}

// Redis is the go-redis shape as userlock declares it (the same method
// set), for the differential test.
type Redis interface {
	Do(ctx context.Context, args ...any) *goredis.Cmd
	goredis.Scripter
	Set(ctx context.Context, key string, value any, expiration time.Duration) *goredis.StatusCmd
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *goredis.BoolCmd
	SetArgs(ctx context.Context, key string, value any, a goredis.SetArgs) *goredis.StatusCmd
	Get(ctx context.Context, key string) *goredis.StringCmd
	Del(ctx context.Context, keys ...string) *goredis.IntCmd
	Exists(ctx context.Context, keys ...string) *goredis.IntCmd
	Incr(ctx context.Context, key string) *goredis.IntCmd
	Expire(ctx context.Context, key string, expiration time.Duration) *goredis.BoolCmd
	PExpire(ctx context.Context, key string, expiration time.Duration) *goredis.BoolCmd
	PExpireAt(ctx context.Context, key string, tm time.Time) *goredis.BoolCmd
	SetEx(ctx context.Context, key string, value any, expiration time.Duration) *goredis.StatusCmd
	GetSet(ctx context.Context, key string, value any) *goredis.StringCmd
	Unlink(ctx context.Context, keys ...string) *goredis.IntCmd
	TTL(ctx context.Context, key string) *goredis.DurationCmd
	PTTL(ctx context.Context, key string) *goredis.DurationCmd
	HSet(ctx context.Context, key string, values ...any) *goredis.IntCmd
	HGet(ctx context.Context, key, field string) *goredis.StringCmd
	HIncrBy(ctx context.Context, key, field string, incr int64) *goredis.IntCmd
	HDel(ctx context.Context, key string, fields ...string) *goredis.IntCmd
}

// sha1hex is a script's name in the script cache.
func sha1hex(s string) string { return goredis.NewScript(s).Hash() }
