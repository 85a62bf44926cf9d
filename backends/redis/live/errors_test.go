package redislive

import (
	"context"
	"errors"
	"net"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	redis "github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/lockapi"
)

// replyError is an error reply of the server, as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

func TestOutcomesOfFailedRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"a refused connection: the command never left", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false},
		{"an error reply: the server did not run it", replyError("READONLY You can't write against a read only replica."), false},
		{"a timeout: the command may have run", context.DeadlineExceeded, true},
		{"a broken connection after the command went out", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Classify("redis", tc.err)
			assert.Equal(t, tc.unknown, lockapi.Unknown(err), "%v", err)
			assert.Equal(t, !tc.unknown, Refused(err))
			assert.Contains(t, err.Error(), "redis redis")
		})
	}
	assert.NoError(t, Classify("redis", nil))
	var _ goredis.Error = replyError("")
}

func TestOptionsTheLiveClientsCannotHonourAreRefused(t *testing.T) {
	o := redis.DefaultOptions()
	assert.NoError(t, CheckOptions(o))
	o.Reentrancy = redis.ReentrancyClient
	assert.ErrorContains(t, CheckOptions(o), "reentrancy=client has no live form")
}
