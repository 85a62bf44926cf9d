package redlock

import "github.com/locklab/locklab/backends/redis"

// MessageTypes returns one value of every message type Redlock's clients and
// instances send: the lock commands, the fence's INCR and the replies.
func MessageTypes() []any {
	return []any{redis.SetNX{}, redis.SetNXFence{}, redis.DelIfValue{}, redis.Incr{}, redis.Reply{}}
}
