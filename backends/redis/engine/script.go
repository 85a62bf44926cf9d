package engine

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// sha1hex is a script's name in the script cache.
func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func cmdEval(db *DB, now int64, args []string, _ string) Reply {
	body := args[0]
	sha := sha1hex(body)
	r, compiled := db.eval(now, sha, body, args[1:])
	if compiled {
		db.scripts[sha] = body
	}
	return r
}

func cmdEvalSHA(db *DB, now int64, args []string, _ string) Reply {
	sha := strings.ToLower(args[0])
	body, ok := db.scripts[sha]
	if !ok {
		return errNoScript
	}
	r, _ := db.eval(now, sha, body, args[1:])
	return r
}

// readOnly runs a script command as EVAL_RO and EVALSHA_RO do: the
// script's write commands are refused.
func readOnly(run func(db *DB, now int64, args []string, sha string) Reply) func(db *DB, now int64, args []string, sha string) Reply {
	return func(db *DB, now int64, args []string, sha string) Reply {
		db.readOnly = true
		defer func() { db.readOnly = false }()
		return run(db, now, args, sha)
	}
}

func cmdScript(db *DB, _ int64, args []string, _ string) Reply {
	switch sub := strings.ToLower(args[0]); {
	case sub == "load" && len(args) == 2:
		if _, err := compile(args[1]); err != nil {
			return errorf("ERR Error compiling script (new function): " + err.Error())
		}
		sha := sha1hex(args[1])
		db.scripts[sha] = args[1]
		return sha
	case sub == "exists" && len(args) >= 2:
		out := make([]Reply, 0, len(args)-1)
		for _, s := range args[1:] {
			if _, ok := db.scripts[strings.ToLower(s)]; ok {
				out = append(out, int64(1))
			} else {
				out = append(out, int64(0))
			}
		}
		return out
	case sub == "flush" && len(args) <= 2:
		db.scripts = map[string]string{}
		return Status("OK")
	}
	return errorf("ERR unknown subcommand or wrong number of arguments for '" + args[0] + "'. Try SCRIPT HELP.")
}

// compile parses and compiles a script body as redis-server names it
// (user_script).
func compile(body string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(body), "user_script")
	if err != nil {
		return nil, err
	}
	return lua.Compile(chunk, "user_script")
}

// scriptError is an error raised in a script: by redis.call (a command's
// error), by error({err=...}) or by the Lua runtime.
type scriptError struct {
	msg  string
	line int
}

var lineOf = regexp.MustCompile(`user_script:(\d+):`)

// eval runs body with KEYS and ARGV from args (numkeys first); compiled
// reports whether the body compiled (only then is it cached).
func (db *DB) eval(now int64, sha, body string, args []string) (Reply, bool) {
	nkeys, ok := parseInt(args[0])
	switch {
	case !ok:
		return errNotInteger, false
	case nkeys < 0:
		return errorf("ERR Number of keys can't be negative"), false
	case nkeys > int64(len(args)-1):
		return errorf("ERR Number of keys can't be greater than number of args"), false
	}
	proto, err := compile(body)
	if err != nil {
		return errorf("ERR Error compiling script (new function): " + err.Error()), false
	}
	L := db.newState(now, sha)
	defer L.Close()
	keys, argv := L.NewTable(), L.NewTable()
	for i, k := range args[1 : 1+nkeys] {
		keys.RawSetInt(i+1, lua.LString(k))
	}
	for i, a := range args[1+nkeys:] {
		argv.RawSetInt(i+1, lua.LString(a))
	}
	L.SetGlobal("KEYS", keys)
	L.SetGlobal("ARGV", argv)
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 1, nil); err != nil {
		return db.raised(sha, err), true
	}
	return toReply(L, L.Get(-1)), true
}

// raised is the error reply of a script that raised err, as redis-server
// words it: "<code> <message> script: <sha>, on @user_script:<line>.".
func (db *DB) raised(sha string, err error) Reply {
	msg, line := err.Error(), 1
	if ae, ok := err.(*lua.ApiError); ok {
		if t, ok := ae.Object.(*lua.LTable); ok {
			if e := t.RawGetString("err"); e.Type() == lua.LTString {
				msg = e.String()
				if l, ok := t.RawGetString("line").(lua.LNumber); ok {
					line = int(l)
				}
				return errorf(fmt.Sprintf("%s script: %s, on @user_script:%d.", msg, sha, line))
			}
		}
		if s, ok := ae.Object.(lua.LString); ok {
			msg = string(s)
		}
	}
	if m := lineOf.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
		msg = msg[:i]
	}
	return errorf(fmt.Sprintf("ERR %s script: %s, on @user_script:%d.", msg, sha, line))
}

// newState is a Lua state with the libraries redis-server opens (base,
// table, string, math; no os, io or package) and the redis table.
func (db *DB) newState(now int64, sha string) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	// Scripts must not load code or reach the machine.
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module", "collectgarbage"} {
		L.SetGlobal(name, lua.LNil)
	}
	db.seedMath(L)
	redis := L.NewTable()
	call := func(raise bool) lua.LGFunction {
		return func(L *lua.LState) int { return db.luaCall(L, now, sha, raise) }
	}
	redis.RawSetString("call", L.NewFunction(call(true)))
	redis.RawSetString("pcall", L.NewFunction(call(false)))
	redis.RawSetString("error_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		t.RawSetString("err", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	redis.RawSetString("status_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	redis.RawSetString("sha1hex", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(sha1hex(L.CheckString(1))))
		return 1
	}))
	redis.RawSetString("log", L.NewFunction(func(*lua.LState) int { return 0 }))
	for name, level := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3} { // determinism:ok: setting constants
		redis.RawSetString(name, lua.LNumber(level))
	}
	L.SetGlobal("redis", redis)
	L.SetGlobal("server", redis)
	return L
}

// seedMath makes math.random and math.randomseed draw from the data set's
// own stream, not Go's global one.
func (db *DB) seedMath(L *lua.LState) {
	math := L.GetGlobal("math").(*lua.LTable)
	math.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		r := float64(db.next()>>11) / (1 << 53)
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(r))
		case 1:
			L.Push(lua.LNumber(1 + int64(r*float64(L.CheckInt64(1)))))
		default:
			lo, hi := L.CheckInt64(1), L.CheckInt64(2)
			L.Push(lua.LNumber(lo + int64(r*float64(hi-lo+1))))
		}
		return 1
	}))
	math.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		db.rand = uint64(L.CheckInt64(1)) | 1
		return 0
	}))
}

// luaCall is redis.call (raise: an error reply raises a Lua error, with the
// script's line) and redis.pcall (an error reply is returned as a table):
// the command in the arguments on L's stack, run on db at now.
func (db *DB) luaCall(L *lua.LState, now int64, sha string, raise bool) int {
	fail := func(msg string) int {
		if raise {
			t := L.NewTable()
			t.RawSetString("err", lua.LString(msg))
			if m := lineOf.FindStringSubmatch(L.Where(1)); m != nil {
				n, _ := strconv.Atoi(m[1])
				t.RawSetString("line", lua.LNumber(n))
			}
			L.Error(t, 0)
			return 0
		}
		t := L.NewTable()
		t.RawSetString("err", lua.LString(msg))
		L.Push(t)
		return 1
	}
	n := L.GetTop()
	if n == 0 {
		return fail("ERR Please specify at least one argument for this redis lib call")
	}
	args := make([]string, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args[i-1] = string(v)
		case lua.LNumber:
			args[i-1] = formatNumber(v)
		default:
			return fail("ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	if c, ok := commands[strings.ToLower(args[0])]; ok &&
		((c.arity > 0 && n != c.arity) || (c.arity < 0 && n < -c.arity)) {
		return fail("ERR Wrong number of args calling Redis command from script")
	}
	r := db.do(now, args, sha)
	if e, ok := r.(*Error); ok {
		return fail(e.Msg)
	}
	L.Push(toLua(L, r))
	return 1
}

// next is math.random's next draw (xorshift64*).
func (db *DB) next() uint64 {
	x := db.rand
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	db.rand = x
	return x * 2685821657736338717
}

// formatNumber is a Lua number as an argument of redis.call: Lua's "%.17g".
func formatNumber(v lua.LNumber) string {
	f := float64(v)
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// toLua converts a reply for the script, as redis-server does: an integer
// to a number, a bulk string to a string, nil to false, a status to {ok=},
// an array to a table.
func toLua(L *lua.LState, r Reply) lua.LValue {
	switch v := r.(type) {
	case nil:
		return lua.LFalse
	case int64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case Status:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(v))
		return t
	case []Reply:
		t := L.NewTable()
		for i, e := range v {
			t.RawSetInt(i+1, toLua(L, e))
		}
		return t
	case *Error:
		t := L.NewTable()
		t.RawSetString("err", lua.LString(v.Msg))
		return t
	}
	panic(fmt.Sprintf("engine: a reply of type %T", r))
}

// toReply converts a script's return value, as redis-server does: a number
// to an integer (truncated), a string to a bulk string, true to 1, false and
// nil to nil, {err=} to an error, {ok=} to a status, a table to an array up
// to its first nil.
func toReply(L *lua.LState, v lua.LValue) Reply {
	switch v := v.(type) {
	case lua.LNumber:
		return int64(v)
	case lua.LString:
		return string(v)
	case lua.LBool:
		if v {
			return int64(1)
		}
		return nil
	case *lua.LTable:
		if e := v.RawGetString("err"); e.Type() == lua.LTString {
			return errorf(e.String())
		}
		if s := v.RawGetString("ok"); s.Type() == lua.LTString {
			return Status(s.String())
		}
		out := []Reply{}
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				return out
			}
			out = append(out, toReply(L, e))
		}
	}
	return nil
}
