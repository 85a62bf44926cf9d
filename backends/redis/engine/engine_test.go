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
	c := db.Clone()
	db.Do(0, "SET", "a", "2")
	db.Do(0, "HSET", "h", "f", "2")
	assert.Equal(t, "1", c.Do(0, "GET", "a"))
	assert.Equal(t, "1", c.Do(0, "HGET", "h", "f"))
	assert.Equal(t, 2, c.Len())
}

// FuzzDo feeds the engine any command line: it must answer with one of the
// reply shapes and never panic.
func FuzzDo(f *testing.F) {
	for _, seed := range []string{"SET k v NX PX 100", "EVAL return 1 0", "HINCRBY h f 9223372036854775807", "PEXPIRE k 5 GT LT", "EVAL", "SET k v GET KEEPTTL EX 1"} {
		f.Add(seed, int64(1000))
	}
	f.Fuzz(func(t *testing.T, line string, now int64) {
		if now < 0 {
			now = -now
		}
		db := New()
		db.Do(now, "SET", "k", "v")
		db.Do(now, "HSET", "h", "f", "1")
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
