package userlive

import (
	goredis "github.com/redis/go-redis/v9"

	redlocklive "github.com/locklab/locklab/backends/redlock/live"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/userlock"
)

// RegisterRedlock registers a user's lock over independent Redis instances
// in both worlds: as userlock.RegisterRedlock does (the system over
// simulated instances, with its staged scenarios) and its live form: the
// lock, guarded (a panic becomes an error), over one real *redis.Client per
// instance against as many real redis-servers. It panics on a spec without
// a name or without New.
func RegisterRedlock(l userlock.RedlockLock) {
	userlock.RegisterRedlock(l)
	liveform.Register(l.Name, redlockLockForm(redlockLock{
		Options: userlock.RedlockTable,
		Servers: liveServers(userlock.RedlockTable, func(o userlock.RedlockOptions) redlocklive.LockServers {
			return redlocklive.LockServers{Instances: o.Instances, LockServers: o.RedisOptions}
		}),
		Tokens: l.Tokens,
		NewLock: func(env lockapi.Env, instances []*goredis.Client) lockapi.Lock {
			return userlock.Guard(l.New(env, userlock.AsRedis(instances)), env, l.Spec, nil)
		},
	}))
}
