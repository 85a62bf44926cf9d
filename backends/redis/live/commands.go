package redislive

import (
	"errors"
	"fmt"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis"
)

// The Lua scripts of the commands that are scripts in Redis (commands.go of
// backends/redis says what each does); each runs atomically on the server.
var (
	acquireFenced = goredis.NewScript(`if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return redis.call("INCR", KEYS[2]) else return 0 end`)
	// releaseLua deletes the key if it holds ARGV[1], else returns the value
	// it holds (nil: none), as DelIfValue answers.
	releaseLua = goredis.NewScript(`local v = redis.call("GET", KEYS[1]) if v == ARGV[1] then return redis.call("DEL", KEYS[1]) end return v`)
	renewLua   = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

// liveCommand is a command of backends/redis as go-redis sends it: the
// arguments of Do, or a script with its keys and arguments; reply reads what
// go-redis returned (a value, or goredis.Nil for a nil reply) as the
// simulated server's Reply to the same command.
type liveCommand struct {
	args   []any
	script *goredis.Script
	keys   []string
	reply  func(v any, err error) (redis.Reply, error)
	// acquire: a WAIT may follow on the same connection; wait: it is that WAIT
	acquire, wait bool
}

// command is cmd as go-redis sends it; a command with no live form is an
// error naming it (the options that send one are refused by CheckOptions).
func command(cmd any) (liveCommand, error) {
	switch c := cmd.(type) {
	case redis.SetNX:
		return liveCommand{args: []any{"SET", c.Key, c.Value, "NX", "PX", c.TTL.Milliseconds()}, reply: setReply, acquire: true}, nil
	case redis.SetNXFence:
		return liveCommand{script: acquireFenced, keys: []string{c.Key, c.FenceKey}, args: []any{c.Value, c.TTL.Milliseconds()},
			reply: positiveReply, acquire: true}, nil
	case redis.Get:
		return liveCommand{args: []any{"GET", c.Key}, reply: getReply}, nil
	case redis.Del:
		return liveCommand{args: []any{"DEL", c.Key}, reply: positiveReply}, nil
	case redis.DelIfValue:
		return liveCommand{script: releaseLua, keys: []string{c.Key}, args: []any{c.Value}, reply: delIfValueReply}, nil
	case redis.ExpireIfValue:
		return liveCommand{script: renewLua, keys: []string{c.Key}, args: []any{c.Value, c.TTL.Milliseconds()}, reply: positiveReply}, nil
	case redis.Incr:
		return liveCommand{args: []any{"INCR", c.Key}, reply: positiveReply}, nil
	case redis.Wait:
		n := int64(c.N)
		return liveCommand{args: []any{"WAIT", c.N, c.Timeout.Milliseconds()}, wait: true,
			reply: func(v any, err error) (redis.Reply, error) {
				acked, err := integer(v, err)
				return redis.Reply{OK: acked >= n, Int: acked}, err
			}}, nil
	}
	return liveCommand{}, fmt.Errorf("command %T has no live form", cmd)
}

// setReply: SET NX answers OK when it set the key, nil when the key exists.
func setReply(v any, err error) (redis.Reply, error) {
	if errors.Is(err, goredis.Nil) {
		return redis.Reply{}, nil
	}
	if s, ok := v.(string); !ok || s != "OK" {
		return redis.Reply{}, fmt.Errorf("SET answered %v, not OK", v)
	}
	return redis.Reply{OK: true}, nil
}

// positiveReply: an integer, OK when positive (a token, keys deleted, a
// timeout set, a counter).
func positiveReply(v any, err error) (redis.Reply, error) {
	n, err := integer(v, err)
	return redis.Reply{OK: n > 0, Int: n}, err
}

// getReply: GET answers the value, nil when there is no key.
func getReply(v any, err error) (redis.Reply, error) {
	if errors.Is(err, goredis.Nil) {
		return redis.Reply{}, nil
	}
	s, ok := v.(string)
	if !ok {
		return redis.Reply{}, fmt.Errorf("GET answered %T, not a string", v)
	}
	return redis.Reply{OK: true, Value: s}, nil
}

// delIfValueReply: the release script answers 1 when it deleted our key, the
// value the key holds instead, or nil when there is no key.
func delIfValueReply(v any, err error) (redis.Reply, error) {
	switch x := v.(type) {
	case string:
		return redis.Reply{Value: x}, nil
	case int64:
		return redis.Reply{OK: x > 0, Int: x}, nil
	}
	if errors.Is(err, goredis.Nil) {
		return redis.Reply{}, nil
	}
	return redis.Reply{}, fmt.Errorf("the release script answered %T", v)
}

// integer is an integer reply (nil counts as 0).
func integer(v any, err error) (int64, error) {
	if errors.Is(err, goredis.Nil) {
		return 0, nil
	}
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("answered %T, not an integer", v)
}
