// Package engine executes Redis commands the way redis-server 7.0 does, on a
// data set held in memory, with the wall clock given by the caller: the
// command set a lock written against Redis uses (SET with NX, XX, GET, EX,
// PX, EXAT, PXAT and KEEPTTL; SETNX, SETEX, PSETEX, GET, GETSET, DEL,
// UNLINK, EXISTS, INCR, PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT, PTTL, TTL,
// HSET, HGET, HINCRBY, HDEL, PING) and scripts (EVAL, EVALSHA, their read-only forms EVAL_RO and EVALSHA_RO,
// SCRIPT LOAD/EXISTS/FLUSH) run atomically by a real Lua 5.1 interpreter,
// gopher-lua, with redis.call, redis.pcall, redis.error_reply,
// redis.status_reply and redis.sha1hex, as miniredis runs them. A user's own
// release script is what runs.
//
// Replies have redis-server's shapes (see Reply) and errors its texts ("ERR
// syntax error", "WRONGTYPE Operation against a key holding the wrong kind
// of value"); a differential test runs the same calls against a real
// redis-server and compares. Errors raised inside a script carry the code
// and message of their cause; the suffix redis-server adds ("script: <sha>,
// on @user_script:1.") is reproduced for errors of redis.call, while the
// wording of a Lua runtime error is gopher-lua's, not Lua 5.1's (the code,
// ERR, is the same).
//
// The engine is deterministic: no clock (every call takes the time), no
// goroutines, math.random drawn from a stream of its own seeded by the data
// set; scripts cannot reach os or io.
package engine
