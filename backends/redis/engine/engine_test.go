package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTTLsFollowTheClockGiven(t *testing.T) {
	db := New()
	assert.Equal(t, Status("OK"), db.Do(1000, "SET", "lock", "c1", "NX", "PX", "500"))
	assert.Nil(t, db.Do(1400, "SET", "lock", "c2", "NX", "PX", "500"), "held until 1500")
	assert.Equal(t, int64(100), db.Do(1400, "PTTL", "lock"))
	assert.Equal(t, "c1", db.Do(1500, "GET", "lock"), "expired only after its time (now > expire)")
	assert.Nil(t, db.Do(1501, "GET", "lock"))
	assert.Equal(t, Status("OK"), db.Do(1501, "SET", "lock", "c2", "NX", "PX", "500"))
	assert.Equal(t, int64(-2), db.Do(1501, "PTTL", "gone"))
}

func TestAUsersReleaseScriptRunsAtomically(t *testing.T) {
	db := New()
	require.Equal(t, Status("OK"), db.Do(0, "SET", "lock", "me", "PX", "1000"))
	assert.Equal(t, int64(0), db.Do(1, "EVAL", releaseScript, "1", "lock", "someone-else"))
	assert.Equal(t, "me", db.Do(1, "GET", "lock"))
	assert.Equal(t, int64(1), db.Do(2, "EVAL", releaseScript, "1", "lock", "me"))
	assert.Nil(t, db.Do(2, "GET", "lock"))
	sha := sha1hex(releaseScript)
	assert.Equal(t, int64(0), db.Do(3, "EVALSHA", sha, "1", "lock", "me"), "cached by EVAL")
}

func TestScriptsAreDeterministic(t *testing.T) {
	run := func() []Reply {
		db := New()
		var out []Reply
		for i := 0; i < 3; i++ {
			out = append(out, db.Do(0, "EVAL", "return {math.random(100), math.random(5, 9), tostring(math.random())}", "0"))
		}
		return out
	}
	assert.Equal(t, run(), run())
}

func TestScriptsCannotReachTheMachine(t *testing.T) {
	db := New()
	for _, body := range []string{"return os.time()", "return io.read()", "return require('os')", "return loadstring('return 1')()", "return dofile('/etc/passwd')"} {
		r := db.Do(0, "EVAL", body, "0")
		e, ok := r.(*Error)
		require.True(t, ok, "%s answered %#v", body, r)
		assert.True(t, strings.HasPrefix(e.Msg, "ERR "), e.Msg)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	db := New()
	db.Do(0, "SET", "a", "1")
	db.Do(0, "HSET", "h", "f", "1")
	db.Do(0, "RPUSH", "l", "a")
	db.Do(0, "ZADD", "z", "1", "a")
	c := db.Clone()
	db.Do(0, "SET", "a", "2")
	db.Do(0, "HSET", "h", "f", "2", "g", "3")
	db.Do(0, "RPUSH", "l", "b")
	db.Do(0, "ZADD", "z", "0", "b", "5", "a")
	assert.Equal(t, "1", c.Do(0, "GET", "a"))
	assert.Equal(t, "1", c.Do(0, "HGET", "h", "f"))
	assert.Equal(t, []Reply{"f"}, c.Do(0, "HKEYS", "h"))
	assert.Equal(t, []Reply{"a"}, c.Do(0, "LRANGE", "l", "0", "-1"))
	assert.Equal(t, []Reply{"a", "1"}, c.Do(0, "ZRANGE", "z", "0", "-1", "WITHSCORES"))
	assert.Equal(t, 4, c.Len())
}

func TestAbsoluteExpiriesFollowTheClockGiven(t *testing.T) {
	db := New()
	require.Equal(t, Status("OK"), db.Do(1000, "SET", "lock", "c1", "PX", "500"))
	assert.Equal(t, int64(1), db.Do(1100, "PEXPIREAT", "lock", "3000"))
	assert.Equal(t, int64(1900), db.Do(1100, "PTTL", "lock"))
	assert.Equal(t, int64(0), db.Do(1100, "PEXPIREAT", "lock", "2000", "GT"), "GT refuses an earlier deadline")
	assert.Equal(t, int64(1), db.Do(1100, "EXPIREAT", "lock", "2", "LT"))
	assert.Equal(t, "c1", db.Do(2000, "GET", "lock"))
	assert.Nil(t, db.Do(2001, "GET", "lock"))
	require.Equal(t, Status("OK"), db.Do(3000, "SET", "lock", "c2"))
	assert.Equal(t, int64(1), db.Do(3000, "PEXPIREAT", "lock", "3000"), "a deadline not after now deletes")
	assert.Equal(t, int64(0), db.Do(3000, "EXISTS", "lock"))
}

func TestCollectionsExpireAndVanishWhenEmptied(t *testing.T) {
	db := New()
	db.Do(0, "RPUSH", "q", "t1", "t2")
	db.Do(0, "ZADD", "t", "5", "t1")
	db.Do(0, "PEXPIRE", "q", "100")
	assert.Equal(t, []Reply{"t1", "t2"}, db.Do(100, "LRANGE", "q", "0", "-1"))
	assert.Equal(t, []Reply{}, db.Do(101, "LRANGE", "q", "0", "-1"))
	assert.Equal(t, int64(1), db.Do(101, "ZREM", "t", "t1"))
	assert.Equal(t, 0, db.Len(), "the expired list and the emptied sorted set are gone")
}

func TestPeekShowsCollections(t *testing.T) {
	db := New()
	db.Do(0, "HSET", "h", "b", "1", "a", "2")
	db.Do(0, "RPUSH", "l", "x", "y")
	db.Do(0, "ZADD", "z", "2", "m", "1", "n")
	for key, want := range map[string]string{"h": "a,b", "l": "x,y", "z": "n,m"} { // determinism:ok: independent checks
		v, _, ok := db.Peek(key, 0)
		require.True(t, ok, key)
		assert.Equal(t, want, v, key)
	}
}

// FuzzDo feeds the engine any command line: it must answer with one of the
// reply shapes and never panic.
func FuzzDo(f *testing.F) {
	for _, seed := range []string{"SET k v NX PX 100", "EVAL return 1 0", "HINCRBY h f 9223372036854775807", "PEXPIRE k 5 GT LT", "EVAL", "SET k v GET KEEPTTL EX 1",
		"GETRANGE k -9223372036854775808 9223372036854775807", "PEXPIREAT k 9223372036854775807 GT", "EXPIREAT k -9223372036854775808",
		"LPOP l 9223372036854775807", "LREM l -9223372036854775808 a", "LRANGE l -9223372036854775808 9223372036854775807",
		"ZADD z INCR -inf a", "ZINCRBY z 1e308 a", "ZRANGE z 0 -1 REV WITHSCORES", "ZRANGE z 0 1 BYSCORE", "HKEYS h", "HEXISTS h f",
		"EVAL return{redis.call('zadd','z',0/0,'m')} 0", "PUBLISH c m"} {
		f.Add(seed, int64(1000))
	}
	f.Fuzz(func(t *testing.T, line string, now int64) {
		if now < 0 {
			now = -now
		}
		db := New()
		db.Do(now, "SET", "k", "v")
		db.Do(now, "HSET", "h", "f", "1")
		db.Do(now, "RPUSH", "l", "a", "b", "a")
		db.Do(now, "ZADD", "z", "1", "a", "inf", "b")
		var check func(r Reply)
		check = func(r Reply) {
			switch v := r.(type) {
			case nil, string, Status, int64, *Error:
			case []Reply:
				for _, e := range v {
					check(e)
				}
			default:
				t.Fatalf("%q answered a %T", line, r)
			}
		}
		check(db.Do(now, strings.Fields(line)...))
	})
}
