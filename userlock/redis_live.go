package userlock

import (
	goredis "github.com/redis/go-redis/v9"

	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	userlive "github.com/locklab/locklab/userlock/live"
)

// registerRedisLive registers the live form of a user's Redis lock: the
// lock, guarded (a panic becomes an error), over a real *goredis.Client.
func registerRedisLive(l RedisLock) {
	liveform.Register(l.Name, userlive.RedisForm(userlive.Redis{
		Options: RedisTable,
		Servers: liveServers(RedisTable, RedisOptions.liveServers),
		Tokens:  l.Tokens,
		NewLock: func(env lockapi.Env, rdb *goredis.Client) lockapi.Lock {
			return Guard(l.New(env, rdb), env, l.Spec, nil)
		},
	}))
}

// liveServers are the live servers' and go-redis's options of o.
func (o RedisOptions) liveServers() redislive.LockServers {
	return redislive.LockServers{Replicas: o.Replicas, DownAfter: o.DownAfter, Persistence: o.Persistence,
		ExpiryClock: o.ExpiryClock, RestartDelay: o.RestartDelay, ReadTimeout: o.ReadTimeout, MaxRetries: o.MaxRetries}
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
