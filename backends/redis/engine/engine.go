package engine

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Reply is a command's answer, in redis-server's shapes: string (a bulk
// string), Status (a simple string such as "OK"), int64 (an integer), nil
// (a nil bulk or nil array), []Reply (an array) or *Error (an error reply).
type Reply = any

// Status is a simple string reply ("OK", "PONG").
type Status string

// Error is an error reply: its text starts with the error code ("ERR",
// "WRONGTYPE", "NOSCRIPT").
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// RedisError marks it as an error Redis returned (go-redis's redis.Error).
func (e *Error) RedisError() {}

func errorf(msg string) *Error { return &Error{Msg: msg} }

// The errors redis-server 7.0 answers with.
var (
	errSyntax     = errorf("ERR syntax error")
	errNotInteger = errorf("ERR value is not an integer or out of range")
	errWrongType  = errorf("WRONGTYPE Operation against a key holding the wrong kind of value")
	errOverflow   = errorf("ERR increment or decrement would overflow")
	errHashNotInt = errorf("ERR hash value is not an integer")
	errNoScript   = errorf("NOSCRIPT No matching script. Please use EVAL.")
)

func arityError(name string) *Error {
	return errorf("ERR wrong number of arguments for '" + name + "' command")
}

// kind is what a key holds.
type kind uint8

const (
	kindString kind = iota
	kindHash
	kindList
	kindZSet
)

// item is one key's value and expiry.
type item struct {
	kind kind
	str  string
	hash map[string]string
	// order is a hash's fields in the order they were added: the order in
	// which redis-server answers HKEYS for a small (listpack) hash.
	order    []string
	list     []string
	zset     *zset
	expireAt int64 // Unix milliseconds on the server's wall clock; 0: no expiry
}

// DB is one Redis instance's data set and script cache.
type DB struct {
	keys    map[string]*item
	scripts map[string]string // sha1 -> body
	rand    uint64            // math.random's state in scripts
	// readOnly is set while an EVAL_RO or EVALSHA_RO script runs: its
	// write commands are refused.
	readOnly bool
}

// New returns an empty data set.
func New() *DB {
	return &DB{keys: map[string]*item{}, scripts: map[string]string{}, rand: 0x2545F4914F6CDD1D}
}

// Clone copies the data set (a snapshot for persistence or replication).
func (db *DB) Clone() *DB {
	c := &DB{keys: make(map[string]*item, len(db.keys)), scripts: maps.Clone(db.scripts), rand: db.rand}
	for k, it := range db.keys { // determinism:ok: copying, order does not matter
		c.keys[k] = it.clone()
	}
	return c
}

// clone is a deep copy of it.
func (it *item) clone() *item {
	cp := *it
	if it.hash != nil {
		cp.hash = maps.Clone(it.hash)
	}
	cp.order = slices.Clone(it.order)
	cp.list = slices.Clone(it.list)
	if it.zset != nil {
		cp.zset = it.zset.clone()
	}
	return &cp
}

// Len counts the keys, including ones expired but not yet touched.
func (db *DB) Len() int { return len(db.keys) }

// lookup is key's live item at now (deleting it when expired), or nil.
func (db *DB) lookup(key string, now int64) *item {
	it := db.keys[key]
	if it != nil && it.expireAt != 0 && now > it.expireAt {
		delete(db.keys, key)
		return nil
	}
	return it
}

// Do executes one command at now (the server's wall clock in Unix
// milliseconds) and returns its reply.
func (db *DB) Do(now int64, args ...string) Reply {
	return db.do(now, args, "")
}

// do executes args; sha is the script being run ("" outside scripts).
func (db *DB) do(now int64, args []string, sha string) Reply {
	if len(args) == 0 {
		return errorf("ERR empty command")
	}
	c, ok := commands[strings.ToLower(args[0])]
	if !ok {
		if sha != "" {
			return errorf("ERR Unknown Redis command called from script")
		}
		var b strings.Builder
		for _, a := range args[1:] {
			b.WriteString("'" + a + "' ")
		}
		return errorf("ERR unknown command '" + args[0] + "', with args beginning with: " + b.String())
	}
	if (c.arity > 0 && len(args) != c.arity) || (c.arity < 0 && len(args) < -c.arity) {
		return arityError(c.name)
	}
	if sha != "" && c.noScript {
		return errorf("ERR This Redis command is not allowed from script")
	}
	if sha != "" && c.write && db.readOnly {
		return errorf("ERR Write commands are not allowed from read-only scripts.")
	}
	return c.run(db, now, args[1:], sha)
}

// IsRead reports whether name (any case) is a command of the engine that
// never changes the data set (GET, PTTL, HKEYS, LRANGE, ZSCORE, ...); false
// for a write, a script command, PUBLISH and an unknown name.
func IsRead(name string) bool {
	c, ok := commands[strings.ToLower(name)]
	return ok && !c.write && !c.noScript
}

type command struct {
	name     string
	arity    int // as redis-server: n exactly, -n at least n (the name counts)
	noScript bool
	write    bool // refused in a read-only script (a write, or a command that may replicate: PUBLISH)
	run      func(db *DB, now int64, args []string, sha string) Reply
}

var commands map[string]command

func init() {
	commands = map[string]command{}
	for _, c := range []command{
		{name: "ping", arity: -1, run: cmdPing},
		{name: "set", arity: -3, write: true, run: cmdSet},
		{name: "setnx", arity: 3, write: true, run: cmdSetNX},
		{name: "get", arity: 2, run: cmdGet},
		{name: "del", arity: -2, write: true, run: cmdDel},
		{name: "exists", arity: -2, run: cmdExists},
		{name: "incr", arity: 2, write: true, run: cmdIncr},
		{name: "pexpire", arity: -3, write: true, run: func(db *DB, now int64, a []string, _ string) Reply { return db.expire(now, a, 1, false, "pexpire") }},
		{name: "expire", arity: -3, write: true, run: func(db *DB, now int64, a []string, _ string) Reply { return db.expire(now, a, 1000, false, "expire") }},
		{name: "pexpireat", arity: -3, write: true, run: func(db *DB, now int64, a []string, _ string) Reply { return db.expire(now, a, 1, true, "pexpireat") }},
		{name: "expireat", arity: -3, write: true, run: func(db *DB, now int64, a []string, _ string) Reply { return db.expire(now, a, 1000, true, "expireat") }},
		{name: "getrange", arity: 4, run: cmdGetRange},
		{name: "substr", arity: 4, run: cmdGetRange},
		{name: "hexists", arity: 3, run: cmdHExists},
		{name: "hlen", arity: 2, run: cmdHLen},
		{name: "hkeys", arity: 2, run: cmdHKeys},
		{name: "rpush", arity: -3, write: true, run: cmdRPush},
		{name: "lpop", arity: -2, write: true, run: cmdLPop},
		{name: "lindex", arity: 3, run: cmdLIndex},
		{name: "lrange", arity: 4, run: cmdLRange},
		{name: "lrem", arity: 4, write: true, run: cmdLRem},
		{name: "zadd", arity: -4, write: true, run: cmdZAdd},
		{name: "zincrby", arity: 4, write: true, run: cmdZIncrBy},
		{name: "zscore", arity: 3, run: cmdZScore},
		{name: "zrem", arity: -3, write: true, run: cmdZRem},
		{name: "zrange", arity: -4, run: cmdZRange},
		{name: "publish", arity: 3, write: true, run: cmdPublish},
		{name: "spublish", arity: 3, write: true, run: cmdPublish},
		{name: "setex", arity: 4, write: true, run: func(db *DB, now int64, a []string, _ string) Reply { return setEx(db, now, a, "EX", "setex") }},
		{name: "psetex", arity: 4, write: true, run: func(db *DB, now int64, a []string, _ string) Reply { return setEx(db, now, a, "PX", "psetex") }},
		{name: "getset", arity: 3, write: true, run: func(db *DB, now int64, a []string, s string) Reply {
			return cmdSet(db, now, []string{a[0], a[1], "GET"}, s)
		}},
		{name: "unlink", arity: -2, write: true, run: cmdDel},
		{name: "pttl", arity: 2, run: func(db *DB, now int64, a []string, _ string) Reply { return db.ttl(now, a[0], false) }},
		{name: "ttl", arity: 2, run: func(db *DB, now int64, a []string, _ string) Reply { return db.ttl(now, a[0], true) }},
		{name: "hset", arity: -4, write: true, run: cmdHSet},
		{name: "hget", arity: 3, run: cmdHGet},
		{name: "hincrby", arity: 4, write: true, run: cmdHIncrBy},
		{name: "hdel", arity: -3, write: true, run: cmdHDel},
		{name: "eval", arity: -3, noScript: true, run: cmdEval},
		{name: "evalsha", arity: -3, noScript: true, run: cmdEvalSHA},
		{name: "eval_ro", arity: -3, noScript: true, run: readOnly(cmdEval)},
		{name: "evalsha_ro", arity: -3, noScript: true, run: readOnly(cmdEvalSHA)},
		{name: "script", arity: -2, noScript: true, run: cmdScript},
	} {
		commands[c.name] = c
	}
}

func cmdPing(_ *DB, _ int64, args []string, _ string) Reply {
	switch len(args) {
	case 0:
		return Status("PONG")
	case 1:
		return args[0]
	}
	return arityError("ping")
}

// parseInt parses a Redis integer argument (no spaces, no '+', no leading
// zeros, within int64).
func parseInt(s string) (int64, bool) {
	if s == "" || len(s) > 20 || s[0] == '+' || (len(s) > 1 && s[0] == '0') || (len(s) > 1 && s[0] == '-' && s[1] == '0') {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func cmdSet(db *DB, now int64, args []string, _ string) Reply {
	key, value := args[0], args[1]
	var nx, xx, get, keepTTL bool
	unit, expireSet := "", false
	var expire int64
	for i := 2; i < len(args); i++ {
		switch o := strings.ToUpper(args[i]); {
		case o == "NX" && !xx:
			nx = true
		case o == "XX" && !nx:
			xx = true
		case o == "GET":
			get = true
		case o == "KEEPTTL" && !expireSet:
			keepTTL = true
		case (o == "EX" || o == "PX" || o == "EXAT" || o == "PXAT") && !keepTTL && !expireSet && i+1 < len(args):
			unit, expireSet = o, true
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return errNotInteger
			}
			expire = n
		default:
			return errSyntax
		}
	}
	var expireAt int64
	if expireSet {
		bad := func() Reply { return errorf("ERR invalid expire time in 'set' command") }
		if expire <= 0 || ((unit == "EX" || unit == "EXAT") && expire > math.MaxInt64/1000) {
			return bad()
		}
		switch unit {
		case "EX":
			expire *= 1000
			fallthrough
		case "PX":
			if expire > math.MaxInt64-now {
				return bad()
			}
			expireAt = now + expire
		case "EXAT":
			expireAt = expire * 1000
		case "PXAT":
			expireAt = expire
		}
	}
	old := db.lookup(key, now)
	var oldReply Reply
	if get {
		if old != nil {
			if old.kind != kindString {
				return errWrongType
			}
			oldReply = old.str
		}
	}
	if (nx && old != nil) || (xx && old == nil) {
		if get {
			return oldReply
		}
		return nil
	}
	it := &item{kind: kindString, str: value, expireAt: expireAt}
	if keepTTL && old != nil {
		it.expireAt = old.expireAt
	}
	if expireSet && expireAt <= now {
		// An absolute time already past: the key is set and gone at once.
		delete(db.keys, key)
	} else {
		db.keys[key] = it
	}
	if get {
		return oldReply
	}
	return Status("OK")
}

// cmdSetNX is SETNX key value: SET NX without options, answering 1 or 0.
func cmdSetNX(db *DB, now int64, args []string, _ string) Reply {
	if db.lookup(args[0], now) != nil {
		return int64(0)
	}
	db.keys[args[0]] = &item{kind: kindString, str: args[1]}
	return int64(1)
}

func cmdGet(db *DB, now int64, args []string, _ string) Reply {
	it := db.lookup(args[0], now)
	switch {
	case it == nil:
		return nil
	case it.kind != kindString:
		return errWrongType
	}
	return it.str
}

func cmdDel(db *DB, now int64, args []string, _ string) Reply {
	var n int64
	for _, k := range args {
		if db.lookup(k, now) != nil {
			delete(db.keys, k)
			n++
		}
	}
	return n
}

func cmdExists(db *DB, now int64, args []string, _ string) Reply {
	var n int64
	for _, k := range args {
		if db.lookup(k, now) != nil {
			n++
		}
	}
	return n
}

func cmdIncr(db *DB, now int64, args []string, _ string) Reply {
	it := db.lookup(args[0], now)
	var v int64
	if it != nil {
		if it.kind != kindString {
			return errWrongType
		}
		n, ok := parseInt(it.str)
		if !ok {
			return errNotInteger
		}
		v = n
	}
	if v == math.MaxInt64 {
		return errOverflow
	}
	v++
	if it == nil {
		db.keys[args[0]] = &item{kind: kindString, str: strconv.FormatInt(v, 10)}
	} else {
		it.str = strconv.FormatInt(v, 10)
	}
	return v
}

// setEx is SETEX key seconds value (unit "EX") and PSETEX key ms value
// (unit "PX"): SET key value EX|PX n, with the command's own error for a
// time that is not positive.
func setEx(db *DB, now int64, args []string, unit, name string) Reply {
	n, ok := parseInt(args[1])
	switch {
	case !ok:
		return errNotInteger
	case n <= 0:
		return errorf("ERR invalid expire time in '" + name + "' command")
	}
	return cmdSet(db, now, []string{args[0], args[2], unit, args[1]}, "")
}

// expire is PEXPIRE (unit 1) and EXPIRE (unit 1000), or with absolute
// PEXPIREAT and EXPIREAT (a Unix time, not a time from now), with NX, XX,
// GT, LT. As redis-server, it reads the options before the time.
func (db *DB) expire(now int64, args []string, unit int64, absolute bool, name string) Reply {
	key := args[0]
	var nx, xx, gt, lt bool
	for _, a := range args[2:] {
		switch strings.ToUpper(a) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			return errorf("ERR Unsupported option " + a)
		}
	}
	if nx && (xx || gt || lt) {
		return errorf("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if gt && lt {
		return errorf("ERR GT and LT options at the same time are not compatible")
	}
	n, ok := parseInt(args[1])
	if !ok {
		return errNotInteger
	}
	bad := errorf("ERR invalid expire time in '" + name + "' command")
	if unit == 1000 && (n > math.MaxInt64/1000 || n < math.MinInt64/1000) {
		return bad
	}
	n *= unit
	base := now
	if absolute {
		base = 0
	}
	if n > math.MaxInt64-base {
		return bad
	}
	when := base + n
	it := db.lookup(key, now)
	if it == nil {
		return int64(0)
	}
	cur := it.expireAt // 0: none, an infinite TTL for GT and LT
	switch {
	case nx && cur != 0, xx && cur == 0:
		return int64(0)
	case gt && (cur == 0 || when <= cur):
		return int64(0)
	case lt && cur != 0 && when >= cur:
		return int64(0)
	}
	if when <= now {
		delete(db.keys, key)
		return int64(1)
	}
	it.expireAt = when
	return int64(1)
}

// ttl is PTTL (or TTL, in seconds rounded as redis-server rounds).
func (db *DB) ttl(now int64, key string, seconds bool) Reply {
	it := db.lookup(key, now)
	switch {
	case it == nil:
		return int64(-2)
	case it.expireAt == 0:
		return int64(-1)
	}
	left := max(it.expireAt-now, 0)
	if seconds {
		return (left + 500) / 1000
	}
	return left
}

// hashOf is key's hash for a command that reads or writes it (created when
// create), or an error reply.
func (db *DB) hashOf(key string, now int64, create bool) (*item, *Error) {
	it := db.lookup(key, now)
	if it == nil {
		if !create {
			return nil, nil
		}
		it = &item{kind: kindHash, hash: map[string]string{}}
		db.keys[key] = it
	}
	if it.kind != kindHash {
		return nil, errWrongType
	}
	return it, nil
}

func cmdHSet(db *DB, now int64, args []string, _ string) Reply {
	if len(args)%2 != 1 {
		return arityError("hset")
	}
	it, err := db.hashOf(args[0], now, true)
	if err != nil {
		return err
	}
	var added int64
	for i := 1; i < len(args); i += 2 {
		if _, ok := it.hash[args[i]]; !ok {
			added++
			it.order = append(it.order, args[i])
		}
		it.hash[args[i]] = args[i+1]
	}
	return added
}

func cmdHGet(db *DB, now int64, args []string, _ string) Reply {
	return readHash(db, args[0], now, nil, func(it *item) Reply {
		v, ok := it.hash[args[1]]
		if !ok {
			return nil
		}
		return v
	})
}

func cmdHIncrBy(db *DB, now int64, args []string, _ string) Reply {
	by, ok := parseInt(args[2])
	if !ok {
		return errNotInteger
	}
	it, err := db.hashOf(args[0], now, false)
	if err != nil {
		return err
	}
	var v int64
	exists := false
	if it != nil {
		var s string
		if s, exists = it.hash[args[1]]; exists {
			if v, ok = parseInt(s); !ok {
				return errHashNotInt
			}
		}
	}
	if (by < 0 && v < 0 && by < math.MinInt64-v) || (by > 0 && v > 0 && by > math.MaxInt64-v) {
		return errOverflow
	}
	if it == nil {
		it, _ = db.hashOf(args[0], now, true)
	}
	v += by
	if !exists {
		it.order = append(it.order, args[1])
	}
	it.hash[args[1]] = strconv.FormatInt(v, 10)
	return v
}

func cmdHDel(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.hashOf(args[0], now, false)
	switch {
	case err != nil:
		return err
	case it == nil:
		return int64(0)
	}
	var n int64
	for _, f := range args[1:] {
		if _, ok := it.hash[f]; ok {
			delete(it.hash, f)
			it.order = slices.DeleteFunc(it.order, func(o string) bool { return o == f })
			n++
		}
	}
	if len(it.hash) == 0 {
		delete(db.keys, args[0])
	}
	return n
}
