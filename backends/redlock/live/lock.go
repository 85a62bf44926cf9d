package redlocklive

import (
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/backends/redlock"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// LockServers are the servers of a lock written against go-redis over
// independent instances (a user's own Redlock): Instances redis-servers,
// with the options of LockServers (Replicas must be 0: the instances have
// none; ReadTimeout and MaxRetries are each client's).
type LockServers struct {
	Instances int
	redislive.LockServers
}

// lockOptions are the redlock options that start the servers of s: the
// instances alone (no sequencer).
func lockOptions(s LockServers) (redlock.Options, error) {
	if s.Replicas > 0 {
		return redlock.Options{}, fmt.Errorf("redlock lock: %d replicas: a Redlock's instances have none", s.Replicas)
	}
	o := redlock.DefaultOptions()
	o.Instances, o.Persistence, o.ExpiryClock, o.RestartDelay = s.Instances, s.Persistence, s.ExpiryClock, s.RestartDelay
	if err := CheckOptions(o); err != nil {
		return o, liveform.NotLive(err)
	}
	return o, nil
}

// DescribeLock describes the servers DeployLock starts for s.
func DescribeLock(_ scenario.Test, s LockServers) (liveform.Description, error) {
	if _, err := lockOptions(s); err != nil {
		return liveform.Description{}, err
	}
	return describeInstances(s.Instances), nil
}

// DeployLock starts the instances the redlock live form starts for s and
// makes each client's lock with
// newLock, given one real *goredis.Client per instance, in the instances'
// order, each reaching its instance through the client's own proxy (so
// that a partition of the client cuts its links alone).
func DeployLock(d liveform.Deployment, s LockServers, newLock func(lc liveform.Client, instances []*goredis.Client) lockapi.Lock) (*liveform.Deployed, error) {
	o, err := lockOptions(s)
	if err != nil {
		return nil, err
	}
	return serve(d, o, func(c *redislive.Cluster, lc liveform.Client, instances []string, own map[string]string) lockapi.Lock {
		rdbs := make([]*goredis.Client, len(instances))
		for i, inst := range instances {
			rdb := goredis.NewClient(&goredis.Options{Addr: own[inst], ReadTimeout: s.ReadTimeout, MaxRetries: s.MaxRetries, DisableIdentity: true})
			c.OnClose(func() { _ = rdb.Close() })
			rdbs[i] = rdb
		}
		return newLock(lc, rdbs)
	})
}
