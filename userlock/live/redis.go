package userlive

import (
	goredis "github.com/redis/go-redis/v9"

	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// redisLock describes a user's Redis lock to its live form.
type redisLock struct {
	// Options is the lock's option table and Servers reads a run's options
	// into the servers' and go-redis's.
	Options opt.Spec
	Servers func(opts map[string]string) (redislive.LockServers, error)
	// Tokens is the lock's claim of fencing tokens.
	Tokens bool
	// NewLock makes the lock of one client over a real go-redis client.
	NewLock func(env lockapi.Env, rdb *goredis.Client) lockapi.Lock
}

// redisLockForm is the live form of a user's Redis lock: redis-server (with
// replicas, redis-sentinel too) as the redis system's live form starts it,
// and a *goredis.Client per client (a FailoverClient when replicated).
func redisLockForm(r redisLock) liveform.Form {
	return redisForm("redis-server, redis-sentinel; your lock over go-redis", r.Options, r.Tokens, r.Servers,
		redislive.DescribeLock, func(d liveform.Deployment, s redislive.LockServers) (*liveform.Deployed, error) {
			return redislive.DeployLock(d, s, func(lc liveform.Client, rdb *goredis.Client) lockapi.Lock {
				return r.NewLock(lc.Env, rdb)
			})
		})
}

// redisForm is the live form of a user's lock over the redis-servers that
// describe and deploy start for the servers S a run's options ask for
// (servers reads them), its leases' tokens as the lock claims.
func redisForm[S any](note string, options opt.Spec, tokens bool, servers func(opts map[string]string) (S, error),
	describe func(scenario.Test, S) (liveform.Description, error),
	deploy func(liveform.Deployment, S) (*liveform.Deployed, error)) liveform.Form {
	return liveform.Form{
		Note:    note,
		Options: options,
		Describe: func(t scenario.Test) (liveform.Description, error) {
			s, err := servers(t.SystemOptions)
			if err != nil {
				return liveform.Description{}, err
			}
			return describe(t, s)
		},
		Deploy: liveform.RetryDeploy(func(d liveform.Deployment) (*liveform.Deployed, error) {
			s, err := servers(d.Test.SystemOptions)
			if err != nil {
				return nil, err
			}
			sys, err := deploy(d, s)
			if err != nil {
				return nil, err
			}
			sys.Tokens = tokens
			return sys, nil
		}),
	}
}
