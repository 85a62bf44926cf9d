package engine

import "maps"

// Scripts in the shapes the common lock libraries use: the same commands
// with the same kinds of arguments (Lua numbers as offsets and scores, a
// command name passed in ARGV), written for this test.
const (
	// A token-prefix obtain: SET NX PX, else GETRANGE of the held value's
	// prefix with Lua-number offsets and a SET PX when it matches.
	prefixObtain = `local n = tonumber(ARGV[2])
if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[3]) then return redis.status_reply("OK") end
local held = redis.call("getrange", KEYS[1], 0, n - 1)
if held == string.sub(ARGV[1], 1, n) then return redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[3]) end
return false`
	// An extension to an absolute deadline, then a read of the key.
	deadlineExtend = `if redis.call("GET", KEYS[1]) == ARGV[1] then
local r = redis.call("PEXPIREAT", KEYS[1], ARGV[2])
redis.call("GET", KEYS[1])
return r end
return 0`
	// A reentrant hash lock: counter per owner, PTTL answered when held by
	// another, a message published on release through a command named in ARGV.
	hashAcquire = `if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return nil end
return redis.call('pttl', KEYS[1])`
	hashRelease = `if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then redis.call('pexpire', KEYS[1], ARGV[2]); return 0 end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
return 1`
	// A fair lock's queue: a list of waiters and a sorted set of their
	// deadlines (ARGV: lease, owner, wait, now).
	fairAcquire = `local first = redis.call('lindex', KEYS[2], 0)
if redis.call('exists', KEYS[1]) == 0 and (first == false or first == ARGV[2]) then
redis.call('lpop', KEYS[2]); redis.call('zrem', KEYS[3], ARGV[2])
local ws = redis.call('zrange', KEYS[3], 0, -1)
for i = 1, #ws do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), ws[i]) end
redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil end
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine ~= false then return tonumber(mine) - tonumber(ARGV[3]) - tonumber(ARGV[4]) end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else ttl = redis.call('pttl', KEYS[1]) end
local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4])
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]) end
return ttl`
	fairCancel = `redis.call('lrem', KEYS[1], 0, ARGV[1]); return redis.call('zrem', KEYS[2], ARGV[1])`
	fairState  = `return {redis.call('lrange', KEYS[1], 0, -1), redis.call('zrange', KEYS[2], 0, -1, 'WITHSCORES')}`
	// A read lock: mode and per-reader counters in one hash, a timeout key
	// per hold.
	readAcquire = `local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
redis.call('hset', KEYS[1], 'mode', 'read'); redis.call('hset', KEYS[1], ARGV[2], 1)
redis.call('set', KEYS[2] .. ':1', 1); redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[1]); return nil end
if mode == 'read' then
local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
local k = KEYS[2] .. ':' .. n
redis.call('set', k, 1); redis.call('pexpire', k, ARGV[1])
local r = redis.call('pttl', KEYS[1])
redis.call('pexpire', KEYS[1], math.max(r, tonumber(ARGV[1]))); return nil end
return redis.call('pttl', KEYS[1])`
	readState   = `return {redis.call('hlen', KEYS[1]), redis.call('hkeys', KEYS[1]), redis.call('hget', KEYS[1], 'mode')}`
	readRelease = `redis.call('hdel', KEYS[1], ARGV[1]); if redis.call('hlen', KEYS[1]) == 1 then redis.call('del', KEYS[1]); return 1 end; return 0`
)

// libraryDifferential are the calls, run against the engine and a real
// redis-server, of the commands the common lock libraries send or call
// from their scripts beyond SET/GET/DEL/PEXPIRE (see doc.go's table).
var libraryDifferential = map[string][]step{
	"getrange": {s("SET", "k", "hello world"), s("GETRANGE", "k", "0", "4"), s("GETRANGE", "k", "0", "-1"),
		s("GETRANGE", "k", "-5", "-1"), s("GETRANGE", "k", "-1", "-5"), s("GETRANGE", "k", "5", "3"),
		s("GETRANGE", "k", "100", "200"), s("GETRANGE", "k", "-100", "100"), s("GETRANGE", "k", "0", "0"),
		s("GETRANGE", "k", "-100", "-50"), s("GETRANGE", "k", "3", "-100"), s("GETRANGE", "missing", "0", "5"),
		s("GETRANGE", "k", "x", "1"), s("GETRANGE", "missing", "x", "1"), s("GETRANGE", "k", "0", "9223372036854775807"),
		s("GETRANGE", "k", "-9223372036854775808", "2"), s("GETRANGE", "k", "0"), s("SUBSTR", "k", "1", "3"),
		s("SET", "n", "12345"), s("GETRANGE", "n", "1", "2"), s("SET", "e", ""), s("GETRANGE", "e", "0", "-1"),
		s("HSET", "h", "f", "v"), s("GETRANGE", "h", "0", "1"), s("GETRANGE", "h", "x", "1")},
	"pexpireat and expireat": {s("PEXPIREAT", "k", "4102444800000"), s("SET", "k", "v"), s("PEXPIREAT", "k", "4102444800000"),
		{args: []string{"PTTL", "k"}, ttl: true}, s("PEXPIREAT", "k", "4102444900000", "NX"), s("PEXPIREAT", "k", "4102444900000", "GT"),
		{args: []string{"PTTL", "k"}, ttl: true}, s("PEXPIREAT", "k", "4102444800000", "GT"), s("EXPIREAT", "k", "4102444700", "LT"),
		{args: []string{"TTL", "k"}, ttl: true}, s("EXPIREAT", "k", "4102444800", "XX"), {args: []string{"PTTL", "k"}, ttl: true},
		s("PEXPIREAT", "k", "x"), s("PEXPIREAT", "k", "1", "ZZ"), s("PEXPIREAT", "k", "x", "ZZ"), s("PEXPIRE", "k", "x", "ZZ"),
		s("PEXPIREAT", "k", "1", "NX", "XX"), s("EXPIREAT", "k", "9223372036854775807"), s("PEXPIREAT", "k", "9223372036854775807"),
		{args: []string{"PTTL", "k"}, ttl: true}, s("PEXPIREAT", "k", "1000"), s("EXISTS", "k"), s("SET", "k", "v"),
		s("EXPIREAT", "k", "-1"), s("GET", "k"), s("SET", "k", "v"), s("PEXPIREAT", "k", "0", "LT"), s("EXISTS", "k"), s("PEXPIREAT", "k")},
	"hash reads": {s("HSET", "h", "a", "1", "b", "2", "c", "3"), s("HEXISTS", "h", "a"), s("HEXISTS", "h", "z"),
		s("HEXISTS", "none", "a"), s("HLEN", "h"), s("HLEN", "none"), s("HKEYS", "h"), s("HDEL", "h", "b"),
		s("HSET", "h", "b", "4", "d", "5", "a", "9"), s("HKEYS", "h"), s("HINCRBY", "h", "e", "1"), s("HKEYS", "h"),
		s("HKEYS", "none"), s("SET", "s", "v"), s("HEXISTS", "s", "a"), s("HLEN", "s"), s("HKEYS", "s"), s("HEXISTS", "h"),
		s("HLEN"), s("HKEYS", "h", "x")},
	"lists": {s("RPUSH", "q", "a", "b", "c", "a", "b"), s("LRANGE", "q", "0", "-1"), s("LRANGE", "q", "-2", "-1"),
		s("LRANGE", "q", "3", "1"), s("LRANGE", "q", "10", "20"), s("LRANGE", "q", "-100", "100"), s("LRANGE", "q", "0", "-100"),
		s("LINDEX", "q", "0"), s("LINDEX", "q", "-1"), s("LINDEX", "q", "5"), s("LINDEX", "q", "-6"), s("LINDEX", "q", "x"),
		s("LINDEX", "none", "x"), s("LREM", "q", "1", "a"), s("LRANGE", "q", "0", "-1"), s("LREM", "q", "-1", "b"),
		s("LRANGE", "q", "0", "-1"), s("LREM", "q", "0", "c"), s("LREM", "q", "0", "zz"), s("RPUSH", "q", "x", "y", "z"),
		s("LPOP", "q"), s("LPOP", "q", "0"), s("LPOP", "q", "2"), s("LPOP", "q", "9"), s("EXISTS", "q"), s("LPOP", "q"),
		s("LPOP", "q", "2"), s("LPOP", "q", "-1"), s("LPOP", "q", "x"), s("LPOP", "q", "1", "2"), s("RPUSH", "r", "a", "a", "b", "a"),
		s("LREM", "r", "-2", "a"), s("LRANGE", "r", "0", "-1"), s("LREM", "r", "-9223372036854775808", "a"), s("LRANGE", "r", "0", "-1"),
		s("LREM", "r", "x", "a"), s("LRANGE", "r", "x", "1"), s("LREM", "none", "1", "a"), s("SET", "s", "v"), s("RPUSH", "s", "a"),
		s("LPOP", "s"), s("LINDEX", "s", "0"), s("LRANGE", "s", "0", "1"), s("LREM", "s", "0", "a"), s("RPUSH", "q"), s("LRANGE", "q", "0")},
	"sorted sets": {s("ZADD", "z", "1", "a", "2", "b"), s("ZADD", "z", "1.5", "c"), s("ZRANGE", "z", "0", "-1"),
		s("ZRANGE", "z", "0", "-1", "WITHSCORES"), s("ZRANGE", "z", "0", "-1", "REV"), s("ZRANGE", "z", "0", "1", "REV", "WITHSCORES"),
		s("ZSCORE", "z", "c"), s("ZSCORE", "z", "none"), s("ZSCORE", "none", "a"), s("ZINCRBY", "z", "10", "a"),
		s("ZINCRBY", "z", "-0.1", "b"), s("ZSCORE", "z", "b"), s("ZINCRBY", "z", "1", "new"), s("ZADD", "z", "1", "b", "1", "a"),
		s("ZRANGE", "z", "0", "-1", "WITHSCORES"), s("ZADD", "z", "NX", "5", "a", "6", "e"), s("ZADD", "z", "XX", "7", "a", "8", "f"),
		s("ZADD", "z", "XX", "CH", "7", "a", "9", "b"), s("ZADD", "z", "GT", "1", "a"), s("ZADD", "z", "LT", "CH", "0", "a"),
		s("ZADD", "z", "GT", "CH", "1", "g"), s("ZADD", "z", "INCR", "2", "a"), s("ZADD", "z", "INCR", "NX", "2", "a"),
		s("ZADD", "z", "NX", "XX", "1", "a"), s("ZADD", "z", "GT", "LT", "1", "a"), s("ZADD", "z", "NX", "GT", "1", "a"),
		s("ZADD", "z", "INCR", "1", "a", "2", "b"), s("ZADD", "z", "1"), s("ZADD", "z", "x", "a"), s("ZADD", "z", "1", "a", "x", "b"),
		s("ZADD", "z", "inf", "i", "-inf", "j"), s("ZADD", "z", "0.1", "p", "1e-3", "r", "-0", "m"), s("ZADD", "z", "INCR", "-0", "mz"), s("ZSCORE", "z", "mz"),
		s("ZRANGE", "z", "0", "-1", "WITHSCORES"), s("ZINCRBY", "z", "-inf", "i"), s("ZINCRBY", "z", "x", "a"),
		s("ZADD", "z", "1e400", "q"), s("ZADD", "z", " 1", "q"), s("ZADD", "z", "nan", "q"), s("ZADD", "z", "1.5e3", "q"),
		s("ZADD", "xx", "XX", "1", "a"), s("EXISTS", "xx"), s("ZADD", "xx", "XX", "INCR", "1", "a"),
		s("ZREM", "z", "a", "none", "b"), s("ZREM", "none", "a"), s("ZRANGE", "z", "1", "0"), s("ZRANGE", "z", "-100", "100"),
		s("ZRANGE", "z", "0", "1", "LIMIT", "0", "1"), s("ZRANGE", "z", "0", "1", "LIMIT", "0", "-1"),
		s("ZRANGE", "z", "0", "1", "BYLEX", "WITHSCORES"), s("ZRANGE", "z", "0", "1", "REV", "REV"), s("ZRANGE", "z", "0", "1", "LIMIT", "0"),
		s("ZRANGE", "z", "x", "1"), s("ZRANGE", "none", "0", "-1"), s("ZRANGE", "z", "0"), s("ZREM", "z"),
		s("SET", "s", "v"), s("ZADD", "s", "1", "a"), s("ZSCORE", "s", "a"), s("ZRANGE", "s", "0", "-1"), s("ZINCRBY", "s", "1", "a"),
		s("ZREM", "s", "a"), s("ZADD", "y", "1", "a"), s("ZREM", "y", "a"), s("EXISTS", "y")},
	"publish": {s("PUBLISH", "ch", "msg"), s("SPUBLISH", "ch", "msg"), s("EVAL", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "ch", "m"),
		s("EVAL", "return redis.call(ARGV[2], KEYS[1], ARGV[1])", "1", "ch", "m", "spublish"),
		s("EVAL_RO", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "ch", "m"), s("PUBLISH", "ch")},
	"a token-prefix obtain": {s("EVAL", prefixObtain, "1", "lock", "tok1-a", "4", "30000"), s("EVAL", prefixObtain, "1", "lock", "tok1-b", "4", "60000"),
		s("GET", "lock"), {args: []string{"PTTL", "lock"}, ttl: true}, s("EVAL", prefixObtain, "1", "lock", "tok2-c", "4", "60000"),
		s("GET", "lock"), s("HSET", "h", "f", "v"), s("EVAL", prefixObtain, "1", "h", "tok1-a", "4", "30000"),
		{args: []string{"EVAL", prefixObtain, "1", "lock", "tok1-a", "x", "30000"}, codeOnly: true}},
	"a deadline extension": {s("SET", "lock", "me", "NX", "PX", "30000"), s("EVAL", deadlineExtend, "1", "lock", "you", "4102444800000"),
		s("EVAL", deadlineExtend, "1", "lock", "me", "4102444800000"), {args: []string{"PTTL", "lock"}, ttl: true},
		s("EVAL", deadlineExtend, "1", "lock", "me", "1000"), s("EXISTS", "lock"), s("SET", "lock", "me"),
		s("EVAL", deadlineExtend, "1", "lock", "me", "soon")},
	"a reentrant hash lock": {s("EVAL", hashAcquire, "1", "lock", "30000", "c1:t1"), s("EVAL", hashAcquire, "1", "lock", "30000", "c1:t1"),
		s("HGET", "lock", "c1:t1"), {args: []string{"EVAL", hashAcquire, "1", "lock", "30000", "c2:t1"}, ttl: true},
		s("EVAL", hashRelease, "2", "lock", "lock:channel", "0", "30000", "c2:t1", "publish"),
		s("EVAL", hashRelease, "2", "lock", "lock:channel", "0", "30000", "c1:t1", "publish"),
		s("HEXISTS", "lock", "c1:t1"), s("EVAL", hashRelease, "2", "lock", "lock:channel", "0", "30000", "c1:t1", "publish"),
		s("EXISTS", "lock"), s("EVAL", hashAcquire, "1", "lock", "30000", "c2:t1"), s("HKEYS", "lock"),
		s("EVAL", hashRelease, "2", "lock", "lock:channel", "0", "30000", "c2:t1", "nosuchcommand")},
	"a fair lock's queue": {s("HSET", "lock", "t0", "1"), s("EVAL", fairAcquire, "3", "lock", "q", "t", "30000", "t1", "30000", "1000"),
		s("EVAL", fairAcquire, "3", "lock", "q", "t", "30000", "t2", "30000", "1000"),
		s("EVAL", fairAcquire, "3", "lock", "q", "t", "30000", "t1", "30000", "1000"),
		s("EVAL", fairAcquire, "3", "lock", "q", "t", "30000", "t3", "30000", "1000"), s("EVAL", fairState, "2", "q", "t"),
		s("DEL", "lock"), s("EVAL", fairAcquire, "3", "lock", "q", "t", "30000", "t2", "30000", "1000"),
		s("EVAL", fairAcquire, "3", "lock", "q", "t", "30000", "t1", "30000", "1000"), s("EVAL", fairState, "2", "q", "t"),
		s("HKEYS", "lock"), s("EVAL", fairCancel, "2", "q", "t", "t3"), s("EVAL", fairState, "2", "q", "t"),
		s("EVAL", "return redis.call('zadd', KEYS[1], 0.5 + 0.25, ARGV[1])", "1", "t", "frac"), s("ZSCORE", "t", "frac"),
		s("EVAL", "return redis.call('zscore', KEYS[1], ARGV[1])", "1", "lock", "t2")},
	"a read lock": {s("EVAL", readAcquire, "2", "rw", "rw:timeout", "30000", "c1:t1"), s("EVAL", readAcquire, "2", "rw", "rw:timeout", "30000", "c2:t1"),
		s("EVAL", readAcquire, "2", "rw", "rw:timeout", "30000", "c1:t1"), s("EVAL", readState, "1", "rw"), s("GET", "rw:timeout:2"),
		s("EVAL", readRelease, "1", "rw", "c1:t1"), s("EVAL", readState, "1", "rw"), s("EVAL", readRelease, "1", "rw", "c2:t1"),
		s("EXISTS", "rw"), s("HSET", "rw", "mode", "write"), {args: []string{"EVAL", readAcquire, "2", "rw", "rw:timeout", "30000", "c3:t1"}, ttl: true}},
	"script errors of the new commands": {s("HSET", "h", "f", "v"), s("EVAL", "return redis.call('getrange', KEYS[1], 0, 1)", "1", "h"),
		s("EVAL", "return redis.pcall('zscore', KEYS[1], 'm')", "1", "h"), s("EVAL", "return redis.call('lpop', KEYS[1], 1, 2)", "1", "h"),
		s("EVAL", "return redis.call('zadd', KEYS[1], 'x', 'm')", "1", "z"), s("EVAL", "return redis.call('getrange', KEYS[1], 0)", "1", "h"),
		s("EVAL_RO", "return redis.call('rpush', KEYS[1], 'a')", "1", "l"), s("EVAL_RO", "return redis.call('lrange', KEYS[1], 0, -1)", "1", "l"),
		s("EVAL_RO", "return redis.call('zincrby', KEYS[1], 1, 'a')", "1", "z"), s("EVAL_RO", "return redis.call('pexpireat', KEYS[1], 1)", "1", "h")},
}

func init() { maps.Copy(differential, libraryDifferential) }
