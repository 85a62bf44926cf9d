package redislive

import (
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/redis"
)

// TestCommandsAsGoRedisSendsThem: each command of the recipe goes out as the
// Redis command or script it stands for, and go-redis's answer reads as the
// simulated server's Reply to it.
func TestCommandsAsGoRedisSendsThem(t *testing.T) {
	ttl := 10 * time.Second
	tests := []struct {
		name   string
		cmd    any
		args   []any
		script *goredis.Script
		answer any
		err    error
		want   redis.Reply
	}{
		{"SET NX PX granted", redis.SetNX{Key: "k", Value: "c1-1", TTL: ttl}, []any{"SET", "k", "c1-1", "NX", "PX", int64(10000)}, nil,
			"OK", nil, redis.Reply{OK: true}},
		{"SET NX PX on a held key", redis.SetNX{Key: "k", Value: "c1-1", TTL: ttl}, []any{"SET", "k", "c1-1", "NX", "PX", int64(10000)}, nil,
			nil, goredis.Nil, redis.Reply{}},
		{"the fenced acquire's token", redis.SetNXFence{Key: "k", Value: "v", FenceKey: "k:fence", TTL: ttl}, []any{"v", int64(10000)}, acquireFenced,
			int64(7), nil, redis.Reply{OK: true, Int: 7}},
		{"the fenced acquire on a held key", redis.SetNXFence{Key: "k", Value: "v", FenceKey: "k:fence", TTL: ttl}, []any{"v", int64(10000)}, acquireFenced,
			int64(0), nil, redis.Reply{}},
		{"GET of a value", redis.Get{Key: "k"}, []any{"GET", "k"}, nil, "c2-1", nil, redis.Reply{OK: true, Value: "c2-1"}},
		{"GET of no key", redis.Get{Key: "k"}, []any{"GET", "k"}, nil, nil, goredis.Nil, redis.Reply{}},
		{"DEL of a key", redis.Del{Key: "k"}, []any{"DEL", "k"}, nil, int64(1), nil, redis.Reply{OK: true, Int: 1}},
		{"DEL of no key", redis.Del{Key: "k"}, []any{"DEL", "k"}, nil, int64(0), nil, redis.Reply{}},
		{"release of our key", redis.DelIfValue{Key: "k", Value: "v"}, []any{"v"}, releaseLua, int64(1), nil, redis.Reply{OK: true, Int: 1}},
		{"release of another's key names its value", redis.DelIfValue{Key: "k", Value: "v"}, []any{"v"}, releaseLua, "w", nil, redis.Reply{Value: "w"}},
		{"release of no key", redis.DelIfValue{Key: "k", Value: "v"}, []any{"v"}, releaseLua, nil, goredis.Nil, redis.Reply{}},
		{"renewal of our key", redis.ExpireIfValue{Key: "k", Value: "v", TTL: ttl}, []any{"v", int64(10000)}, renewLua, int64(1), nil, redis.Reply{OK: true, Int: 1}},
		{"renewal of a lost key", redis.ExpireIfValue{Key: "k", Value: "v", TTL: ttl}, []any{"v", int64(10000)}, renewLua, int64(0), nil, redis.Reply{}},
		{"INCR", redis.Incr{Key: "k:fence"}, []any{"INCR", "k:fence"}, nil, int64(3), nil, redis.Reply{OK: true, Int: 3}},
		{"WAIT satisfied", redis.Wait{N: 2, Timeout: time.Second}, []any{"WAIT", 2, int64(1000)}, nil, int64(2), nil, redis.Reply{OK: true, Int: 2}},
		{"WAIT short", redis.Wait{N: 2, Timeout: time.Second}, []any{"WAIT", 2, int64(1000)}, nil, int64(1), nil, redis.Reply{Int: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := command(tc.cmd)
			require.NoError(t, err)
			assert.Equal(t, tc.args, c.args)
			assert.Same(t, tc.script, c.script)
			got, err := c.reply(tc.answer, tc.err)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCommandsWithoutALiveFormAreNamed(t *testing.T) {
	_, err := command(redis.HoldLock{Key: "k"})
	assert.ErrorContains(t, err, "command redis.HoldLock has no live form")
	c, err := command(redis.SetNX{Key: "k"})
	require.NoError(t, err)
	_, err = c.reply(int64(1), nil)
	assert.Error(t, err, "an answer of the wrong kind is an error, not a grant")
	assert.False(t, errors.Is(err, goredis.Nil))
}
