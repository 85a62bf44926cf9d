package userlive

import (
	goredis "github.com/redis/go-redis/v9"

	redlocklive "github.com/locklab/locklab/backends/redlock/live"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
)

// redlockLock describes a user's lock over independent Redis instances to its
// live form.
type redlockLock struct {
	// Options is the lock's option table and Servers reads a run's options
	// into the instances' and go-redis's (no replicas).
	Options opt.Spec
	Servers func(opts map[string]string) (redlocklive.LockServers, error)
	// Tokens is the lock's claim of fencing tokens.
	Tokens bool
	// NewLock makes the lock of one client over one real go-redis client
	// per instance, in the instances' order.
	NewLock func(env lockapi.Env, instances []*goredis.Client) lockapi.Lock
}

// redlockLockForm is the live form of a user's lock over independent Redis
// instances: the redis-servers redis-a, redis-b, ... the redlock system's
// live form starts, and one *goredis.Client per instance per client.
func redlockLockForm(r redlockLock) liveform.Form {
	return redisForm("redis-server ×N; your lock over go-redis", r.Options, r.Tokens, r.Servers, redlocklive.DescribeLock,
		func(d liveform.Deployment, s redlocklive.LockServers) (*liveform.Deployed, error) {
			return redlocklive.DeployLock(d, s, func(lc liveform.Client, rdbs []*goredis.Client) lockapi.Lock {
				return r.NewLock(lc.Env, rdbs)
			})
		})
}
