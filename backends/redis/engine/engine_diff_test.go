package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one call, with how to compare its replies.
type step struct {
	args []string
	// ttl: an integer within 50 (ms, or 1 for TTL) of the real one (the
	// real server's clock moves between calls).
	ttl bool
	// codeOnly: an error whose code and script suffix must agree, not its
	// wording (a Lua runtime or compile error: gopher-lua words it).
	codeOnly bool
	// sleep before the call (real time; the engine's clock reads it too).
	sleep time.Duration
}

func s(args ...string) step { return step{args: args} }

const (
	releaseScript = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`
	renewScript   = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`
	fencedAcquire = `if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return redis.call("INCR", KEYS[2]) else return 0 end`
	reentrant     = `if redis.call("EXISTS", KEYS[1]) == 0 or redis.call("HEXISTS", KEYS[1], ARGV[1]) == 1 then return 1 end return 0`
)

// differential are the calls run against the engine and a real redis-server.
var differential = map[string][]step{
	"set-nx-px and get": {s("SET", "k", "a", "NX", "PX", "10000"), s("SET", "k", "b", "NX", "PX", "10000"), s("GET", "k"),
		{args: []string{"PTTL", "k"}, ttl: true}, {args: []string{"TTL", "k"}, ttl: true}, s("GET", "missing")},
	"set options": {s("SET", "k", "a", "XX"), s("SET", "k", "a"), s("SET", "k", "b", "XX", "GET"), s("SET", "k", "c", "NX", "GET"),
		s("SET", "n", "x", "NX", "GET"), s("GET", "n"), s("SET", "k", "d", "EX", "100"), s("SET", "k", "e", "KEEPTTL"),
		{args: []string{"PTTL", "k"}, ttl: true}, s("SET", "k", "f"), s("PTTL", "k")},
	"set errors": {s("SET", "k", "v", "NX", "XX"), s("SET", "k", "v", "PX", "0"), s("SET", "k", "v", "EX", "-1"),
		s("SET", "k", "v", "PX", "abc"), s("SET", "k", "v", "PX"), s("SET", "k", "v", "EX", "1", "PX", "1"),
		s("SET", "k", "v", "KEEPTTL", "PX", "5"), s("SET", "k", "v", "BOGUS"), s("SET", "k"), s("SET", "k", "v", "PX", "01"),
		s("SET", "k", "v", "PX", "9223372036854775807"), s("SET", "k", "v", "EX", "9223372036854775")},
	"set pxat in the past": {s("SET", "k", "v", "PXAT", "1000"), s("GET", "k"), s("EXISTS", "k")},
	"expiry": {s("SET", "k", "v", "PX", "100"), {args: []string{"GET", "k"}, sleep: 150 * time.Millisecond},
		s("PTTL", "k"), s("DEL", "k"), s("SET", "k", "v"), s("PEXPIRE", "k", "100"),
		{args: []string{"EXISTS", "k"}, sleep: 150 * time.Millisecond}},
	"pexpire": {s("PEXPIRE", "k", "100"), s("SET", "k", "v"), s("PEXPIRE", "k", "5000", "XX"), s("PEXPIRE", "k", "5000", "NX"),
		{args: []string{"PTTL", "k"}, ttl: true}, s("PEXPIRE", "k", "9000", "NX"), s("PEXPIRE", "k", "1000", "GT"),
		s("PEXPIRE", "k", "9000", "GT"), s("PEXPIRE", "k", "20000", "LT"), s("PEXPIRE", "k", "1000", "LT"),
		{args: []string{"PTTL", "k"}, ttl: true}, s("PEXPIRE", "k", "1", "NX", "XX"), s("PEXPIRE", "k", "1", "GT", "LT"),
		s("PEXPIRE", "k", "1", "ZZ"), s("PEXPIRE", "k", "x"), s("PEXPIRE", "k", "0"), s("EXISTS", "k"),
		s("SET", "k", "v"), s("PEXPIRE", "k", "-5"), s("GET", "k"), s("EXPIRE", "nokey", "10"),
		s("PEXPIRE", "k", "9223372036854775807")},
	"del and exists": {s("SET", "a", "1"), s("SET", "b", "2"), s("EXISTS", "a", "a", "b", "c"), s("DEL", "a", "c", "a"),
		s("EXISTS", "a", "b"), s("DEL")},
	"incr": {s("INCR", "t"), s("INCR", "t"), s("SET", "t", "9223372036854775806"), s("INCR", "t"), s("INCR", "t"),
		s("SET", "t", "x"), s("INCR", "t"), s("SET", "t", " 1"), s("INCR", "t"), s("SET", "t", "-0"), s("INCR", "t"),
		s("SET", "t", "5", "PX", "100000"), s("INCR", "t"), {args: []string{"PTTL", "t"}, ttl: true}},
	"hashes": {s("HSET", "h", "owner", "c1"), s("HSET", "h", "owner", "c2", "count", "1"), s("HGET", "h", "owner"),
		s("HGET", "h", "none"), s("HGET", "nohash", "f"), s("HINCRBY", "h", "count", "2"), s("HINCRBY", "h", "owner", "1"),
		s("HINCRBY", "h", "count", "x"), s("HINCRBY", "h", "count", "9223372036854775807"), s("HDEL", "h", "owner", "none"),
		s("HDEL", "h", "count"), s("EXISTS", "h"), s("HSET", "h", "f"), s("HINCRBY", "new", "c", "-3"), s("HDEL", "nohash", "f")},
	"wrong types": {s("SET", "s", "v"), s("HSET", "h", "f", "v"), s("GET", "h"), s("INCR", "h"), s("HGET", "s", "f"),
		s("HSET", "s", "f", "v"), s("HINCRBY", "s", "f", "1"), s("HDEL", "s", "f"), s("SET", "h", "x", "GET"), s("SET", "h", "x"), s("GET", "h")},
	"unknown and arity": {s("NOSUCH", "a", "b"), s("GET"), s("GET", "a", "b"), s("PTTL"), s("HGET", "h"), s("INCR"),
		s("PING"), s("PING", "hello"), s("get", "a"), s("gEt", "a")},
	"a lock's scripts": {s("EVAL", fencedAcquire, "2", "lock", "lock:fence", "owner-1", "30000"),
		s("EVAL", fencedAcquire, "2", "lock", "lock:fence", "owner-2", "30000"),
		s("EVAL", renewScript, "1", "lock", "owner-2", "60000"), s("EVAL", renewScript, "1", "lock", "owner-1", "60000"),
		{args: []string{"PTTL", "lock"}, ttl: true},
		s("EVAL", releaseScript, "1", "lock", "owner-2"), s("EVAL", releaseScript, "1", "lock", "owner-1"), s("GET", "lock"),
		s("GET", "lock:fence"), s("EVAL", fencedAcquire, "2", "lock", "lock:fence", "owner-3", "30000")},
	"setnx": {s("SETNX", "k", "a"), s("SETNX", "k", "b"), s("GET", "k"), s("PTTL", "k"), s("SETNX", "k"), s("HSET", "h", "f", "v"),
		s("SETNX", "h", "x")},
	"read-only scripts": {s("SET", "k", "v"), s("EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "k"),
		s("EVAL_RO", "return redis.call('SET', KEYS[1], 'w')", "1", "k"), s("EVAL_RO", "return redis.pcall('DEL', KEYS[1])", "1", "k"),
		s("EVAL_RO", "return redis.call('SETNX', 'n', '1')", "0"), s("EVAL_RO", "return redis.call('EVAL', 'return 1', 0)", "0"),
		s("GET", "k"), s("EVALSHA_RO", sha1hex("return 1"), "0"), s("SCRIPT", "LOAD", "return 1"), s("EVALSHA_RO", sha1hex("return 1"), "0"),
		s("EVAL", "return redis.call('SETNX', 'n', '1')", "0")},
	"evalsha and script": {s("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
		s("SCRIPT", "LOAD", "return 1"), s("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
		s("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"),
		s("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "nope"), s("EVAL", "return 2", "0"),
		s("SCRIPT", "EXISTS", sha1hex("return 2")), s("SCRIPT", "FLUSH"), s("SCRIPT", "EXISTS", sha1hex("return 2"))},
	"script conversions": {s("EVAL", "return {1,2,nil,3}", "0"), s("EVAL", "return 3.9", "0"), s("EVAL", "return -3.9", "0"),
		s("EVAL", "return true", "0"), s("EVAL", "return false", "0"), s("EVAL", "return nil", "0"),
		s("EVAL", "return redis.status_reply('FINE')", "0"), s("EVAL", "return redis.error_reply('MY bad')", "0"),
		s("EVAL", "return {err='oops'}", "0"), s("EVAL", "return {ok='fine'}", "0"),
		s("EVAL", "return redis.call('SET','x','1')", "0"), s("EVAL", "return redis.call('GET','nokey')", "0"),
		s("EVAL", "return {redis.call('INCR','c'), 'a', {1, 'b'}}", "0"), s("EVAL", "return KEYS[2] .. ARGV[1]", "2", "k1", "k2", "a1"),
		s("EVAL", "return redis.call('SET', KEYS[1], 3.5)", "1", "f"), s("GET", "f"),
		s("EVAL", "return redis.sha1hex('')", "0"), s("EVAL", "return type(redis.call('GET','nokey'))", "0"),
		s("EVAL", "return redis.call('PING')", "0"), s("EVAL", "return redis.pcall('PING').ok", "0")},
	"script errors": {s("HSET", "hh", "f", "v"), s("EVAL", "return redis.call('GET', KEYS[1])", "1", "hh"),
		s("EVAL", "return redis.pcall('GET', KEYS[1])", "1", "hh"),
		s("EVAL", "\n\nreturn redis.call('INCR', 'hh')", "0"),
		s("EVAL", "return redis.call('nosuch')", "0"), s("EVAL", "return redis.call()", "0"),
		s("EVAL", "return redis.call('SET', 'a', {})", "0"), s("EVAL", "return redis.call('get', 'h', 'x')", "0"),
		s("EVAL", "return redis.pcall('get', 'h', 'x')", "0"), s("EVAL", "return redis.call('EVAL','return 1',0)", "0"),
		s("EVAL", "error({err='XX boom'})", "0"), s("EVAL", "return 1", "-1"), s("EVAL", "return 1", "2", "a"),
		s("EVAL", "return 1", "x"), s("EVAL", "return 1"),
		{args: []string{"EVAL", "return foo()", "0"}, codeOnly: true}, {args: []string{"EVAL", "error('boom')", "0"}, codeOnly: true},
		{args: []string{"EVAL", "retur", "0"}, codeOnly: true}, {args: []string{"EVAL", "return os.time()", "0"}, codeOnly: true}},
}

// startRedis starts a redis-server of its own for the test.
func startRedis(t *testing.T) *goredis.Client {
	t.Helper()
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
	c := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2, DisableIndentity: true})
	t.Cleanup(func() { _ = c.Close() })
	for i := 0; ; i++ {
		if c.Ping(context.Background()).Err() == nil {
			return c
		}
		require.Less(t, i, 100, "redis-server did not answer")
		time.Sleep(50 * time.Millisecond)
	}
}

// fromGoRedis is what go-redis returned, in the engine's shapes (a status
// and a bulk string both arrive as string).
func fromGoRedis(v any, err error) Reply {
	var re goredis.Error
	switch {
	case errors.Is(err, goredis.Nil):
		return nil
	case errors.As(err, &re):
		return &Error{Msg: re.Error()}
	case err != nil:
		return fmt.Sprintf("transport error: %v", err)
	}
	if a, ok := v.([]any); ok {
		out := make([]Reply, len(a))
		for i, e := range a {
			out[i] = fromGoRedis(e, nil)
		}
		return out
	}
	return v
}

// flat is a reply as go-redis would show it (statuses as strings).
func flat(r Reply) Reply {
	switch v := r.(type) {
	case Status:
		return string(v)
	case []Reply:
		out := make([]Reply, len(v))
		for i, e := range v {
			out[i] = flat(e)
		}
		return out
	}
	return r
}

var suffix = regexpMust(`script: [0-9a-f]{40}, on @user_script:\d+\.$`)

// TestTheEngineAnswersAsRedisServerDoes runs every call of differential
// against the engine and a real redis-server and compares the replies.
func TestTheEngineAnswersAsRedisServerDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real redis-server")
	}
	c := startRedis(t)
	ctx := context.Background()
	names := make([]string, 0, len(differential))
	for name := range differential {
		names = append(names, name)
	}
	sortStrings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, c.FlushAll(ctx).Err())
			require.NoError(t, c.ScriptFlush(ctx).Err())
			db := New()
			for i, st := range differential[name] {
				if st.sleep > 0 {
					time.Sleep(st.sleep)
				}
				args := make([]any, len(st.args))
				for j, a := range st.args {
					args[j] = a
				}
				real := fromGoRedis(c.Do(ctx, args...).Result())
				got := flat(db.Do(time.Now().UnixMilli(), st.args...))
				where := fmt.Sprintf("step %d: %s", i+1, strings.Join(st.args, " "))
				switch {
				case st.ttl:
					require.IsType(t, int64(0), real, where)
					require.IsType(t, int64(0), got, where)
					assert.InDelta(t, real.(int64), got.(int64), 50, where)
				case st.codeOnly:
					re, ok := real.(*Error)
					require.True(t, ok, "%s: redis-server answered %#v", where, real)
					ge, ok := got.(*Error)
					require.True(t, ok, "%s: the engine answered %#v", where, got)
					assert.Equal(t, strings.Fields(re.Msg)[0], strings.Fields(ge.Msg)[0], "%s: error code (%q vs %q)", where, re.Msg, ge.Msg)
					assert.Equal(t, suffix.MatchString(re.Msg), suffix.MatchString(ge.Msg), "%s: script suffix (%q vs %q)", where, re.Msg, ge.Msg)
				default:
					assert.Equal(t, real, got, where)
				}
			}
		})
	}
}
