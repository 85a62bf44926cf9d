// Package engine executes Redis commands the way redis-server 7.0 does, on a
// data set held in memory, with the wall clock given by the caller: the
// commands the common lock libraries send or call from their scripts (the
// table below) and scripts (EVAL, EVALSHA, their read-only forms EVAL_RO
// and EVALSHA_RO, SCRIPT LOAD/EXISTS/FLUSH) run atomically by a real Lua 5.1
// interpreter, gopher-lua, with redis.call, redis.pcall, redis.error_reply,
// redis.status_reply and redis.sha1hex, as miniredis runs them. A user's own
// release script is what runs.
//
// Replies have redis-server's shapes (see Reply) and errors its texts ("ERR
// syntax error", "WRONGTYPE Operation against a key holding the wrong kind
// of value"); a differential test (engine_diff_test.go,
// engine_diff_libs_test.go) runs the same calls against a real
// redis-server and compares. Errors raised inside a script carry the code
// and message of their cause; the suffix redis-server adds ("script: <sha>,
// on @user_script:1.") is reproduced for errors of redis.call, while the
// wording of a Lua runtime error is gopher-lua's, not Lua 5.1's (the code,
// ERR, is the same).
//
// # Commands of the lock libraries
//
// Read from bsm/redislock v0.9.4 (redislock.go), go-redsync/redsync v4.18,
// the version the live Redlock runs (mutex.go, scripts.go, redis/*/),
// Redisson's locks after 4.7.0 (RedissonLock, RedissonFairLock,
// RedissonReadLock, RedissonWriteLock, RedissonSpinLock, RedissonFencedLock,
// the renewal tasks) and rueidislock of rueidis v1.0.x
// (rueidislock/lock.go). "script" means called from the library's Lua,
// "sent" means sent by the client. Every command below is in the
// differential test against redis-server 7.0.
//
//	command            libraries                                                         engine
//	EVAL, EVALSHA      sent: redislock, redsync, Redisson, rueidislock                     implemented
//	SCRIPT LOAD        sent: redsync (Conn), Redisson (script cache), rueidis (option)      implemented
//	SET NX PX          sent: redsync; script: redislock, redsync, rueidislock               implemented
//	SET PX / PXAT      script: redislock (PX), rueidislock (PX, NX PXAT, PXAT), Redisson    implemented
//	GET                sent: redsync, Redisson (fenced token); script: all four             implemented
//	GETRANGE           script: redislock (obtain: the held token's prefix)                  implemented
//	DEL                sent: Redisson; script: redislock, redsync, rueidislock, Redisson    implemented
//	PEXPIRE            script: redislock, redsync, Redisson                                 implemented
//	PEXPIREAT          script: rueidislock (extend)                                         implemented
//	PTTL               sent: redsync (Conn), Redisson; script: redislock, Redisson          implemented
//	EXISTS             sent: Redisson (isLocked); script: Redisson                          implemented
//	INCR               script: Redisson (fenced lock's token)                               implemented
//	HSET, HGET, HDEL   sent: Redisson (HGET mode); script: Redisson                         implemented
//	HINCRBY, HEXISTS   sent: Redisson (HEXISTS); script: Redisson                           implemented
//	HLEN, HKEYS        script: Redisson (read-write lock)                                   implemented
//	RPUSH, LPOP        script: Redisson (fair lock's queue)                                 implemented
//	LINDEX, LRANGE     script: Redisson (fair lock's queue)                                 implemented
//	LREM               script: Redisson (fair lock's queue)                                 implemented
//	ZADD, ZSCORE       script: Redisson (fair lock's timeouts)                              implemented
//	ZINCRBY, ZREM      script: Redisson (fair lock's timeouts)                              implemented
//	ZRANGE             script: Redisson (fair lock, by rank)                                implemented by rank; BYSCORE, BYLEX answer an error saying so
//	PUBLISH, SPUBLISH  script: Redisson (unlock message, named in ARGV)                     implemented: answers 0, nobody subscribes to the engine
//	SUBSCRIBE etc.     sent: Redisson (waiters wait for the unlock message)                 not here: connections, not data
//	WAIT, WAITAOF      sent: Redisson (synced scripts, with replicas)                       not here: the server's replication model (package redis) has WAIT
//	HELLO, CLIENT ...  sent: go-redis, rueidis (CLIENT TRACKING for rueidislock), Redisson  not here: connection set-up and client-side caching
//
// Also implemented: SETNX, SETEX, PSETEX, GETSET, UNLINK (the forms a
// user's lock calls through go-redis), EXPIRE, EXPIREAT, TTL, SUBSTR and
// PING. The
// expiry commands take NX, XX, GT and LT; ZADD takes NX, XX, GT, LT, CH and
// INCR; LPOP takes a count. HKEYS answers in the order fields were added,
// which is redis-server's order for a hash it keeps as a listpack (up to
// 128 fields of up to 64 bytes); a larger hash's order is its hash table's
// there and is not reproduced. Scores are written as redis-server 7.0
// writes a double ("%.17g", "inf", "-inf"); a stored -0 reads back as 0.
//
// The engine is deterministic: no clock (every call takes the time), no
// goroutines, math.random drawn from a stream of its own seeded by the data
// set; scripts cannot reach os or io.
package engine
