package redis

import (
	"context"
	"encoding"
	"fmt"
	"net"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis/engine"
	"github.com/locklab/locklab/sim"
)

// GoRedisOptions are the options of a GoRedisClient that go-redis's
// Options has too, with go-redis's defaults (DefaultGoRedisOptions).
type GoRedisOptions struct {
	// ReadTimeout bounds the wait for each reply (go-redis: 3 s). It is the
	// only timeout: a context's deadline is not honoured in the simulator
	// (see GoRedisClient).
	ReadTimeout time.Duration
	// MaxRetries is how many times a command that timed out, or that an
	// instance refused with READONLY, TRYAGAIN, LOADING or MASTERDOWN, is
	// sent again (go-redis: 3; -1: never).
	MaxRetries int
	// MinRetryBackoff and MaxRetryBackoff bound the random back-off before a
	// retry (go-redis: 8 ms and 512 ms).
	MinRetryBackoff, MaxRetryBackoff time.Duration
}

// DefaultGoRedisOptions are go-redis's defaults.
func DefaultGoRedisOptions() GoRedisOptions {
	return GoRedisOptions{ReadTimeout: 3 * time.Second, MaxRetries: 3, MinRetryBackoff: 8 * time.Millisecond,
		MaxRetryBackoff: 512 * time.Millisecond}
}

// GoRedisClient is a simulated client of the go-redis shape: the methods a
// lock written against *goredis.Client calls (Do, Eval, EvalSha, EvalRO,
// EvalShaRO, ScriptExists, ScriptLoad, Set, SetNX, SetArgs, Get, Del,
// Exists, Incr, PExpire, PTTL, HSet, HGet, HIncrBy, HDel), with go-redis's
// signatures and go-redis's own result types, so that the same code runs on
// it and on a real *goredis.Client. It sends each call as a Command from
// the client's process and waits for the reply.
//
// What the user's code sees is what go-redis gives: arguments formatted as
// go-redis writes them, a nil reply as goredis.Nil, an error reply as an
// error of go-redis's own type (goredis.Error, with Redis's text), a
// timeout as a net.Error whose Timeout() is true and whose text ends in
// "i/o timeout", and go-redis's retries: a command that timed out or was
// refused (READONLY, TRYAGAIN) is sent again up to MaxRetries times after a
// random back-off, so a SET NX whose first reply was lost may answer that
// the key exists. With a monitor (replicas), a timeout or a READONLY
// refusal makes the next attempt ask the monitor for the primary, as a
// go-redis FailoverClient asks Sentinel.
//
// What it cannot do: honour a context's deadline or cancellation (the
// simulator's time is not the machine's; ReadTimeout is the timeout),
// pipelines, transactions and Pub/Sub (not in the interface). A typed
// READONLY error is go-redis's plain error type with READONLY's text
// (goredis.IsReadOnlyError holds for both). A call from a goroutine other
// than the process that made the client (a goroutine the lock started)
// touches nothing: it returns an error saying so, and Strays reports it.
type GoRedisClient struct {
	p     *sim.Proc
	r     *route
	opts  GoRedisOptions
	owner *sim.Owner[string] // the process's goroutine, and the calls from others
}

// NewGoRedisClient returns the go-redis-shaped client of process p, finding
// Redis through t. It must be called from p's own coroutine: calls from any
// other goroutine are refused.
func NewGoRedisClient(p *sim.Proc, t Topology, o GoRedisOptions) *GoRedisClient {
	c := &GoRedisClient{p: p, opts: o, owner: sim.NewOwner[string]()}
	c.r = &route{topo: t, primary: t.Primary, timeout: o.ReadTimeout}
	return c
}

// Strays returns, and forgets, the calls made from a goroutine other than
// the client's process since the last call of Strays ("Get(\"k\")"): the
// caller reports them from the process, where the simulator can be read.
func (c *GoRedisClient) Strays() []string { return c.owner.Strays() }

// ErrStrayCall is the error of a call made from a goroutine other than the
// client's process.
var ErrStrayCall = fmt.Errorf("called from a goroutine other than the client's process: " +
	"in the simulator a lock calls Redis only from the goroutine that calls Acquire and Release (no goroutines of its own)")

// redisError is an error reply as go-redis returns it: its own error type
// (that of goredis.Nil), with Redis's text.
func redisError(msg string) error {
	return reflect.ValueOf(msg).Convert(reflect.TypeOf(goredis.Nil)).Interface().(error)
}

// simAddr names a node as a net.Addr, for timeout errors.
type simAddr string

func (a simAddr) Network() string { return "tcp" }
func (a simAddr) String() string  { return string(a) }

// do runs one call: args formatted, sent with go-redis's retries; it returns
// the engine's reply or an error (a transport error, or an error reply).
func (c *GoRedisClient) do(args []any) (engine.Reply, error) {
	if !c.owner.Mine() {
		c.owner.Note(describeCall(args))
		return nil, fmt.Errorf("redis %s: %w", describeCall(args), ErrStrayCall)
	}
	cmd := make([]string, len(args))
	for i, a := range args {
		s, err := formatArg(a)
		if err != nil {
			return nil, err
		}
		cmd[i] = s
	}
	var err error
	for attempt := 0; attempt <= max(c.opts.MaxRetries, 0); attempt++ {
		if attempt > 0 {
			c.p.Sleep(c.backoff(attempt))
		}
		var r engine.Reply
		r, err = c.roundTrip(cmd)
		if err == nil {
			if e, ok := r.(*engine.Error); ok {
				if retryable(e.Msg) {
					err = redisError(e.Msg)
					continue
				}
				return nil, redisError(e.Msg)
			}
			return r, nil
		}
	}
	return nil, err
}

// retryable reports whether go-redis sends a command again after this
// error reply.
func retryable(msg string) bool {
	for _, p := range []string{"READONLY ", "LOADING ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "NOREPLICAS "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return msg == "ERR max number of clients reached"
}

// backoff is go-redis's RetryBackoff, drawn from the process's stream.
func (c *GoRedisClient) backoff(attempt int) time.Duration {
	lo, hi := c.opts.MinRetryBackoff, c.opts.MaxRetryBackoff
	if lo == 0 {
		return 0
	}
	d := lo << uint(attempt)
	if d < lo {
		return hi
	}
	d = lo + time.Duration(c.p.Rand().Int64N(int64(d)))
	if d > hi || d < lo {
		d = hi
	}
	return d
}

// roundTrip sends cmd to the primary once. A timeout is a net.Error; a
// refusal is the refusal's error reply.
func (c *GoRedisClient) roundTrip(cmd []string) (engine.Reply, error) {
	r := c.r
	if r.stale && r.topo.HasMonitor {
		if m, err := c.p.Call(r.topo.Monitor, GetPrimary{}, r.timeout); err == nil {
			r.primary, r.stale = m.(PrimaryIs).Node, false
		}
	}
	body, err := c.p.Call(r.primary, Command{Args: cmd}, c.opts.ReadTimeout)
	if err != nil {
		r.stale = true
		nodes := c.p.World().Nodes()
		return nil, &net.OpError{Op: "read", Net: "tcp", Source: simAddr(c.p.Node().Name()),
			Addr: simAddr(nodes[r.primary].Name()), Err: os.ErrDeadlineExceeded}
	}
	switch b := body.(type) {
	case CommandReply:
		return b.Reply, nil
	case Reply:
		if strings.HasPrefix(b.Err, "READONLY ") {
			r.stale = true // go-redis drops the connection: the next one asks Sentinel
		}
		return &engine.Error{Msg: b.Err}, nil
	}
	return nil, fmt.Errorf("redis: unexpected reply %T", body)
}

// describeCall is a call as a report names it: GET("k").
func describeCall(args []any) string {
	if len(args) == 0 {
		return "Do()"
	}
	parts := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		s, err := formatArg(a)
		if err != nil {
			s = fmt.Sprintf("%T", a)
		}
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		parts = append(parts, strconv.Quote(s))
	}
	name, _ := formatArg(args[0])
	return strings.ToUpper(name) + "(" + strings.Join(parts, ", ") + ")"
}

// formatArg is an argument as go-redis writes it (proto.Writer.WriteArg).
func formatArg(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case *string:
		if v == nil {
			return "", nil
		}
		return *v, nil
	case []byte:
		return string(v), nil
	case int, int8, int16, int32, int64:
		return strconv.FormatInt(reflect.ValueOf(v).Int(), 10), nil
	case uint, uint8, uint16, uint32, uint64:
		return strconv.FormatUint(reflect.ValueOf(v).Uint(), 10), nil
	case float32, float64:
		return strconv.FormatFloat(reflect.ValueOf(v).Float(), 'f', -1, 64), nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	case time.Duration:
		return strconv.FormatInt(v.Nanoseconds(), 10), nil
	case encoding.BinaryMarshaler:
		b, err := v.MarshalBinary()
		return string(b), err
	case net.IP:
		return string(v), nil
	}
	return "", fmt.Errorf("redis: can't marshal %T (implement encoding.BinaryMarshaler)", v)
}

// appendArgs is go-redis's appendArgs: a single argument that is a slice or
// a map is spread (a map's pairs in key order here, so that runs repeat;
// go-redis spreads them in map order), others are kept as they are.
func appendArgs(dst, src []any) []any {
	if len(src) != 1 {
		return append(dst, src...)
	}
	switch a := src[0].(type) {
	case []string:
		for _, s := range a {
			dst = append(dst, s)
		}
		return dst
	case []any:
		return append(dst, a...)
	case map[string]any:
		for _, k := range slices.Sorted(mapKeys(a)) {
			dst = append(dst, k, a[k])
		}
		return dst
	case map[string]string:
		for _, k := range slices.Sorted(mapKeys(a)) {
			dst = append(dst, k, a[k])
		}
		return dst
	case nil:
		return dst
	}
	return append(dst, src[0])
}

// mapKeys yields m's keys (in map order: callers sort them).
func mapKeys[V any](m map[string]V) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m { // determinism:ok: sorted by every caller
			if !yield(k) {
				return
			}
		}
	}
}

// goValue is a reply as go-redis's Cmd holds it: statuses and bulk strings
// as string, integers as int64, arrays as []any (a nil element as nil, an
// error element as go-redis's error).
func goValue(r engine.Reply) any {
	switch v := r.(type) {
	case engine.Status:
		return string(v)
	case *engine.Error:
		return redisError(v.Msg)
	case []engine.Reply:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = goValue(e)
		}
		return out
	}
	return r
}

// text is a reply read as go-redis's ReadString reads it.
func text(r engine.Reply) (string, error) {
	switch v := r.(type) {
	case nil:
		return "", goredis.Nil
	case engine.Status:
		return string(v), nil
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	}
	return "", fmt.Errorf("redis: can't parse reply=%v reading string", r)
}

// integer is a reply read as go-redis's ReadInt reads it.
func integer(r engine.Reply) (int64, error) {
	switch v := r.(type) {
	case nil:
		return 0, goredis.Nil
	case int64:
		return v, nil
	case engine.Status:
		return strconv.ParseInt(string(v), 10, 64)
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("redis: can't parse int reply: %v", r)
}

// boolean is a reply read as go-redis's BoolCmd reads it (nil is false).
func boolean(r engine.Reply) (bool, error) {
	if r == nil {
		return false, nil
	}
	s, err := text(r)
	return s == "OK" || s == "1" || s == "true", err
}

// Do sends any command, as go-redis's Do.
func (c *GoRedisClient) Do(ctx context.Context, args ...any) *goredis.Cmd {
	cmd := goredis.NewCmd(ctx, args...)
	c.fillCmd(cmd, args)
	return cmd
}

func (c *GoRedisClient) fillCmd(cmd *goredis.Cmd, args []any) {
	r, err := c.do(args)
	switch {
	case err != nil:
		cmd.SetErr(err)
	case r == nil:
		cmd.SetErr(goredis.Nil)
	default:
		cmd.SetVal(goValue(r))
	}
}

func (c *GoRedisClient) eval(ctx context.Context, name, payload string, keys []string, args []any) *goredis.Cmd {
	cmdArgs := appendArgs(withStrings(keys, name, payload, len(keys)), args)
	cmd := goredis.NewCmd(ctx, cmdArgs...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	c.fillCmd(cmd, cmdArgs)
	return cmd
}

// Eval runs a script (EVAL).
func (c *GoRedisClient) Eval(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd {
	return c.eval(ctx, "eval", script, keys, args)
}

// EvalSha runs a cached script (EVALSHA); NOSCRIPT is goredis.ErrNoScript.
func (c *GoRedisClient) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd {
	return c.eval(ctx, "evalsha", sha1, keys, args)
}

// EvalRO runs a read-only script (EVAL_RO).
func (c *GoRedisClient) EvalRO(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd {
	return c.eval(ctx, "eval_ro", script, keys, args)
}

// EvalShaRO runs a cached read-only script (EVALSHA_RO).
func (c *GoRedisClient) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd {
	return c.eval(ctx, "evalsha_ro", sha1, keys, args)
}

// ScriptExists is SCRIPT EXISTS.
func (c *GoRedisClient) ScriptExists(ctx context.Context, hashes ...string) *goredis.BoolSliceCmd {
	args := withStrings(hashes, "script", "exists")
	cmd := goredis.NewBoolSliceCmd(ctx, args...)
	r, err := c.do(args)
	if err != nil {
		cmd.SetErr(err)
		return cmd
	}
	a, ok := r.([]engine.Reply)
	if !ok {
		cmd.SetErr(fmt.Errorf("redis: can't parse array reply: %v", r))
		return cmd
	}
	val := make([]bool, len(a))
	for i, e := range a {
		if val[i], err = boolean(e); err != nil {
			cmd.SetErr(err)
			return cmd
		}
	}
	cmd.SetVal(val)
	return cmd
}

// ScriptLoad is SCRIPT LOAD.
func (c *GoRedisClient) ScriptLoad(ctx context.Context, script string) *goredis.StringCmd {
	return typed(c, goredis.NewStringCmd(ctx, "script", "load", script), text)
}

// valueCmd is a go-redis command whose value is a T (StatusCmd, StringCmd,
// IntCmd, BoolCmd, DurationCmd).
type valueCmd[T any] interface {
	Args() []any
	SetVal(T)
	SetErr(error)
}

// typed runs cmd (its arguments) and sets its value, as read reads it from
// the reply, and its error (the call's, or the reading's).
func typed[C valueCmd[T], T any](c *GoRedisClient, cmd C, read func(engine.Reply) (T, error)) C {
	r, err := c.do(cmd.Args())
	if err == nil {
		var v T
		v, err = read(r)
		cmd.SetVal(v)
	}
	cmd.SetErr(err)
	return cmd
}

// withStrings is head followed by each of tail (go-redis's argument lists of
// keys, hashes or fields).
func withStrings(tail []string, head ...any) []any {
	args := make([]any, len(head), len(head)+len(tail))
	copy(args, head)
	for _, s := range tail {
		args = append(args, s)
	}
	return args
}

// usePrecise, formatMs and formatSec are go-redis's: an expiration is sent
// in seconds when it is whole seconds, else in milliseconds (at least 1).
func usePrecise(d time.Duration) bool { return d < time.Second || d%time.Second != 0 }

func formatMs(d time.Duration) int64 {
	if d > 0 && d < time.Millisecond {
		return 1
	}
	return int64(d / time.Millisecond)
}

func formatSec(d time.Duration) int64 {
	if d > 0 && d < time.Second {
		return 1
	}
	return int64(d / time.Second)
}

// Set is SET key value [PX ms | EX s | KEEPTTL] as go-redis sends it
// (expiration 0: none; goredis.KeepTTL: KEEPTTL).
func (c *GoRedisClient) Set(ctx context.Context, key string, value any, expiration time.Duration) *goredis.StatusCmd {
	args := []any{"set", key, value}
	if expiration > 0 {
		if usePrecise(expiration) {
			args = append(args, "px", formatMs(expiration))
		} else {
			args = append(args, "ex", formatSec(expiration))
		}
	} else if expiration == goredis.KeepTTL {
		args = append(args, "keepttl")
	}
	return typed(c, goredis.NewStatusCmd(ctx, args...), text)
}

// SetNX is SET key value NX [PX | EX | KEEPTTL]: true when it set the key.
func (c *GoRedisClient) SetNX(ctx context.Context, key string, value any, expiration time.Duration) *goredis.BoolCmd {
	switch {
	case expiration == 0:
		return typed(c, goredis.NewBoolCmd(ctx, "set", key, value, "nx"), boolean)
	case expiration == goredis.KeepTTL:
		return typed(c, goredis.NewBoolCmd(ctx, "set", key, value, "keepttl", "nx"), boolean)
	case usePrecise(expiration):
		return typed(c, goredis.NewBoolCmd(ctx, "set", key, value, "px", formatMs(expiration), "nx"), boolean)
	}
	return typed(c, goredis.NewBoolCmd(ctx, "set", key, value, "ex", formatSec(expiration), "nx"), boolean)
}

// SetArgs is SET with every option of goredis.SetArgs that the simulated
// Redis (7.0) knows: KEEPTTL, EXAT/PXAT, EX/PX, NX/XX and GET (a mode it
// does not know, IFEQ and the like, is answered "ERR syntax error" as
// redis-server 7.0 answers it).
func (c *GoRedisClient) SetArgs(ctx context.Context, key string, value any, a goredis.SetArgs) *goredis.StatusCmd {
	args := []any{"set", key, value}
	if a.KeepTTL {
		args = append(args, "keepttl")
	}
	if !a.ExpireAt.IsZero() {
		if a.ExpireAt.Nanosecond() >= int(time.Millisecond) {
			args = append(args, "pxat", a.ExpireAt.UnixMilli())
		} else {
			args = append(args, "exat", a.ExpireAt.Unix())
		}
	}
	if a.TTL > 0 {
		if usePrecise(a.TTL) {
			args = append(args, "px", formatMs(a.TTL))
		} else {
			args = append(args, "ex", formatSec(a.TTL))
		}
	}
	if a.Mode != "" {
		args = append(args, a.Mode)
		switch a.Mode {
		case "ifeq", "IFEQ", "ifne", "IFNE":
			if a.MatchValue != nil {
				args = append(args, a.MatchValue)
			}
		case "ifdeq", "IFDEQ", "ifdne", "IFDNE":
			if a.MatchDigest != 0 {
				args = append(args, fmt.Sprintf("%016x", a.MatchDigest))
			}
		}
	}
	if a.Get {
		args = append(args, "get")
	}
	return typed(c, goredis.NewStatusCmd(ctx, args...), text)
}

// Get is GET key (goredis.Nil when absent).
func (c *GoRedisClient) Get(ctx context.Context, key string) *goredis.StringCmd {
	return typed(c, goredis.NewStringCmd(ctx, "get", key), text)
}

// Del is DEL key...: how many it deleted.
func (c *GoRedisClient) Del(ctx context.Context, keys ...string) *goredis.IntCmd {
	return typed(c, goredis.NewIntCmd(ctx, withStrings(keys, "del")...), integer)
}

// Exists is EXISTS key...: how many exist.
func (c *GoRedisClient) Exists(ctx context.Context, keys ...string) *goredis.IntCmd {
	return typed(c, goredis.NewIntCmd(ctx, withStrings(keys, "exists")...), integer)
}

// Incr is INCR key.
func (c *GoRedisClient) Incr(ctx context.Context, key string) *goredis.IntCmd {
	return typed(c, goredis.NewIntCmd(ctx, "incr", key), integer)
}

// PExpire is PEXPIRE key ms: true when the key exists.
func (c *GoRedisClient) PExpire(ctx context.Context, key string, expiration time.Duration) *goredis.BoolCmd {
	return typed(c, goredis.NewBoolCmd(ctx, "pexpire", key, formatMs(expiration)), boolean)
}

// Expire is EXPIRE key seconds, as go-redis sends it (whole seconds, at
// least 1): true when the key exists and got the expiry.
func (c *GoRedisClient) Expire(ctx context.Context, key string, expiration time.Duration) *goredis.BoolCmd {
	return typed(c, goredis.NewBoolCmd(ctx, "expire", key, formatSec(expiration)), boolean)
}

// PExpireAt is PEXPIREAT key unix-ms: the key expires when the server's
// expiry clock reaches tm (a time from the client's Env.Wall in the
// simulator, the real clock live).
func (c *GoRedisClient) PExpireAt(ctx context.Context, key string, tm time.Time) *goredis.BoolCmd {
	return typed(c, goredis.NewBoolCmd(ctx, "pexpireat", key, tm.UnixNano()/int64(time.Millisecond)), boolean)
}

// SetEx is SETEX key seconds value, as go-redis sends it.
func (c *GoRedisClient) SetEx(ctx context.Context, key string, value any, expiration time.Duration) *goredis.StatusCmd {
	return typed(c, goredis.NewStatusCmd(ctx, "setex", key, formatSec(expiration), value), text)
}

// GetSet is GETSET key value: the old value (goredis.Nil when there was
// none); the key loses its expiry.
func (c *GoRedisClient) GetSet(ctx context.Context, key string, value any) *goredis.StringCmd {
	return typed(c, goredis.NewStringCmd(ctx, "getset", key, value), text)
}

// Unlink is UNLINK key...: DEL, as far as a client can tell.
func (c *GoRedisClient) Unlink(ctx context.Context, keys ...string) *goredis.IntCmd {
	return typed(c, goredis.NewIntCmd(ctx, withStrings(keys, "unlink")...), integer)
}

// TTL is TTL key as a duration in whole seconds (-2: no key, -1: no
// expiry, as go-redis gives them: -2 ns and -1 ns).
func (c *GoRedisClient) TTL(ctx context.Context, key string) *goredis.DurationCmd {
	return typed(c, goredis.NewDurationCmd(ctx, time.Second, "ttl", key), func(r engine.Reply) (time.Duration, error) {
		n, err := integer(r)
		if err != nil || n == -1 || n == -2 {
			return time.Duration(n), err
		}
		return time.Duration(n) * time.Second, nil
	})
}

// PTTL is PTTL key as a duration (-2: no key, -1: no expiry, as go-redis
// gives them: -2 ns and -1 ns).
func (c *GoRedisClient) PTTL(ctx context.Context, key string) *goredis.DurationCmd {
	return typed(c, goredis.NewDurationCmd(ctx, time.Millisecond, "pttl", key), func(r engine.Reply) (time.Duration, error) {
		n, err := integer(r)
		if err != nil || n == -1 || n == -2 {
			return time.Duration(n), err
		}
		return time.Duration(n) * time.Millisecond, nil
	})
}

// HSet is HSET key field value...: how many fields it added.
func (c *GoRedisClient) HSet(ctx context.Context, key string, values ...any) *goredis.IntCmd {
	args := appendArgs([]any{"hset", key}, values)
	return typed(c, goredis.NewIntCmd(ctx, args...), integer)
}

// HGet is HGET key field (goredis.Nil when absent).
func (c *GoRedisClient) HGet(ctx context.Context, key, field string) *goredis.StringCmd {
	return typed(c, goredis.NewStringCmd(ctx, "hget", key, field), text)
}

// HIncrBy is HINCRBY key field incr.
func (c *GoRedisClient) HIncrBy(ctx context.Context, key, field string, incr int64) *goredis.IntCmd {
	return typed(c, goredis.NewIntCmd(ctx, "hincrby", key, field, incr), integer)
}

// HDel is HDEL key field...: how many it deleted.
func (c *GoRedisClient) HDel(ctx context.Context, key string, fields ...string) *goredis.IntCmd {
	return typed(c, goredis.NewIntCmd(ctx, withStrings(fields, "hdel", key)...), integer)
}

var _ goredis.Scripter = (*GoRedisClient)(nil)
