package userlock

import (
	goredis "github.com/redis/go-redis/v9"

	redlocklive "github.com/locklab/locklab/backends/redlock/live"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	userlive "github.com/locklab/locklab/userlock/live"
)

// registerRedlockLive registers the live form of a user's Redlock: the
// lock, guarded (a panic becomes an error), over one real *goredis.Client
// per instance.
func registerRedlockLive(l RedlockLock) {
	liveform.Register(l.Name, userlive.RedlockForm(userlive.Redlock{
		Options: RedlockTable,
		Servers: liveServers(RedlockTable, func(o RedlockOptions) redlocklive.LockServers {
			return redlocklive.LockServers{Instances: o.Instances, LockServers: o.RedisOptions}
		}),
		Tokens: l.Tokens,
		NewLock: func(env lockapi.Env, instances []*goredis.Client) lockapi.Lock {
			return Guard(l.New(env, asRedis(instances)), env, l.Spec, nil)
		},
	}))
}
