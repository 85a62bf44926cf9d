package redislive

import (
	"context"
	"net"
	"strconv"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// LockServers are the server options of a lock written against go-redis (a
// user's own): the servers the redis live form starts for the same
// options, and the options of each client's *goredis.Client.
type LockServers = redis.UserOptions

// asRedisTest is t with the system options of the redis system that start
// the servers s describes, so that the redis live form's description and
// deployment serve a lock of the user's.
func asRedisTest(t scenario.Test, s LockServers) (scenario.Test, error) {
	o := s.Servers()
	if err := CheckOptions(o); err != nil {
		return t, liveform.NotLive(err)
	}
	t.SystemOptions = map[string]string{"replicas": strconv.Itoa(s.Replicas), "down-after": s.DownAfter.String(),
		"persistence": string(s.Persistence), "restart-delay": s.RestartDelay.String()}
	return t, nil
}

// DescribeLock describes the servers DeployLock starts for test t.
func DescribeLock(t scenario.Test, s LockServers) (liveform.Description, error) {
	rt, err := asRedisTest(t, s)
	if err != nil {
		return liveform.Description{}, err
	}
	return describeRedis(rt)
}

// DeployLock starts the servers the redis live form starts for s (one
// redis-server; with replicas a primary, its replicas and a redis-sentinel)
// and makes each client's lock with newLock, given a real go-redis client
// that reaches them through the client's own proxies: a *goredis.Client of
// the one instance, or a FailoverClient that asks the Sentinel for the
// primary (itself a *goredis.Client).
func DeployLock(d liveform.Deployment, s LockServers, newLock func(lc liveform.Client, rdb *goredis.Client) lockapi.Lock) (*liveform.Deployed, error) {
	rt, err := asRedisTest(d.Test, s)
	if err != nil {
		return nil, err
	}
	d.Test = rt
	o, err := redisOptions(rt)
	if err != nil {
		return nil, err
	}
	bin, err := redisBinary()
	if err != nil {
		return nil, err
	}
	var sys *liveform.Deployed
	var c *redisCluster
	if o.Replicas > 0 {
		sys, c, err = deploySentinel(d, o, bin)
	} else {
		sys, c, err = deploySingle(d, o, bin)
	}
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		name := lc.Env.Name()
		var rdb *goredis.Client
		if o.Replicas == 0 {
			rdb = goredis.NewClient(&goredis.Options{Addr: c.proxies[[2]string{name, "redis"}].Addr(),
				ReadTimeout: s.ReadTimeout, MaxRetries: s.MaxRetries, DisableIdentity: true})
		} else {
			// The Sentinel announces each instance at its sentinel->X proxy;
			// the client dials its own proxy to that instance instead, so
			// that a partition of the client cuts its links alone.
			own := map[string]string{}
			for _, inst := range sys.Servers {
				if sp, ok := c.proxies[[2]string{"sentinel", inst}]; ok && inst != "sentinel" {
					own[sp.Addr()] = c.proxies[[2]string{name, inst}].Addr()
				}
			}
			var dialer net.Dialer
			rdb = goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: sentinelMaster,
				SentinelAddrs: []string{c.proxies[[2]string{name, "sentinel"}].Addr()},
				ReadTimeout:   s.ReadTimeout, MaxRetries: s.MaxRetries, DisableIdentity: true,
				Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
					if a, ok := own[addr]; ok {
						addr = a
					}
					return dialer.DialContext(ctx, network, addr)
				}})
		}
		mu.Lock()
		c.closers = append(c.closers, func() { _ = rdb.Close() })
		mu.Unlock()
		return newLock(lc, rdb)
	}
	sys.Tokens = false // the lock's own claim; the caller sets it
	return sys, nil
}
