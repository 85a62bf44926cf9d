package userlock

import (
	goredis "github.com/redis/go-redis/v9"

	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	userlive "github.com/locklab/locklab/userlock/live"
)

// registerRedisLive registers the live form of a user's Redis lock: the
// lock, guarded (a panic becomes an error), over a real *goredis.Client.
func registerRedisLive(l RedisLock) {
	liveform.Register(l.Name, userlive.RedisForm(userlive.Redis{
		Options: RedisTable,
		Servers: func(opts map[string]string) (redislive.LockServers, error) {
			o, err := RedisTable.Parse(opts)
			if err != nil {
				return redislive.LockServers{}, err
			}
			return redislive.LockServers{Replicas: o.Replicas, DownAfter: o.DownAfter, Persistence: o.Persistence,
				ExpiryClock: o.ExpiryClock, RestartDelay: o.RestartDelay, ReadTimeout: o.ReadTimeout, MaxRetries: o.MaxRetries}, nil
		},
		Tokens: l.Tokens,
		NewLock: func(env lockapi.Env, rdb *goredis.Client) lockapi.Lock {
			return Guard(l.New(env, rdb), env, l.Spec, nil)
		},
	}))
}
