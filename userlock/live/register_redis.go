package userlive

import (
	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/userlock"
)

// RegisterRedis registers a user's lock over Redis in both worlds: as
// userlock.RegisterRedis does (the system over the simulated Redis, with
// its staged scenarios) and its live form, `locklab run --live`: the lock,
// guarded (a panic becomes an error), over a real *redis.Client against
// the redis-servers the built-in redis system starts live. It panics on a
// spec without a name or without New.
func RegisterRedis(l userlock.RedisLock) {
	userlock.RegisterRedis(l)
	liveform.Register(l.Name, redisLockForm(redisLock{
		Options: userlock.RedisTable,
		Servers: userlock.RedisTable.Parse,
		Tokens:  l.Tokens,
		NewLock: func(env lockapi.Env, rdb *goredis.Client) lockapi.Lock {
			return userlock.Guard(l.New(env, rdb), env, l.Spec, nil)
		},
	}))
}

// liveServers reads a run's options with table and makes the live servers'
// options of them with servers.
func liveServers[O, S any](table opt.Table[O], servers func(O) S) func(opts map[string]string) (S, error) {
	return func(opts map[string]string) (S, error) {
		o, err := table.Parse(opts)
		if err != nil {
			var none S
			return none, err
		}
		return servers(o), nil
	}
}
