package redlocklive

import (
	"slices"

	"github.com/locklab/locklab/backends/redis"
	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/backends/redlock"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// The live form of the redlock system: independent redis-server instances
// redis-a, redis-b, ... (role "instances") and, for token=external, the
// sequencer "fence" (fsync always, no faults). The names and roles are the
// simulator's (backends/redlock/system.go).
func init() {
	liveform.Register("redlock", liveform.Form{
		Note:     "redis-server ×N; redsync " + RedsyncVersion,
		Options:  redlock.Table,
		Describe: describe,
		Deploy:   liveform.RetryDeploy(deploy),
	})
}

// options parses t's redlock options and refuses those without a live form.
func options(t scenario.Test) (redlock.Options, error) {
	return liveform.Options(redlock.Table, t, CheckOptions)
}

func describe(t scenario.Test) (liveform.Description, error) {
	o, err := options(t)
	if err != nil {
		return liveform.Description{}, err
	}
	return describeInstances(o.Instances), nil
}

// describeInstances describes n instances redis-a, redis-b, ... (role
// "instances").
func describeInstances(n int) liveform.Description {
	var instances []string
	for i := range n {
		instances = append(instances, redlock.InstanceName(i))
	}
	return liveform.Description{Servers: instances, Roles: []string{"instances"},
		Resolve: func(role string) ([]string, bool) {
			if role == "instances" {
				return slices.Clone(instances), true
			}
			return nil, false
		}, Refuse: redislive.Refuse}
}

func deploy(d liveform.Deployment) (*liveform.Deployed, error) {
	o, err := options(d.Test)
	if err != nil {
		return nil, err
	}
	sys, err := serve(d, o, func(c *redislive.Cluster, lc liveform.Client, instances []string, addrs map[string]string) lockapi.Lock {
		t := Topology{Instances: instances, Addrs: addrs}
		if o.Token == redlock.TokenExternal {
			t.Fence = c.Addr(redlock.FenceName)
		}
		l := NewClient(lc.Env, t, o)
		c.OnClose(l.Close)
		return l
	})
	if err != nil {
		return nil, err
	}
	sys.Tokens = true
	sys.Versions["redsync"] = RedsyncVersion
	return sys, nil
}

// serve starts the redis-servers of o (start) and gives each client the
// lock newLock makes, given the cluster, the instances' names and the
// address of the client's own proxy to each.
func serve(d liveform.Deployment, o redlock.Options,
	newLock func(c *redislive.Cluster, lc liveform.Client, instances []string, addrs map[string]string) lockapi.Lock) (*liveform.Deployed, error) {
	c, desc, addrs, err := start(d, o)
	if err != nil {
		return nil, err
	}
	sys := c.Deployed(desc)
	sys.NewLock = func(lc liveform.Client) lockapi.Lock { return newLock(c, lc, desc.Servers, addrs[lc.Env.Name()]) }
	return sys, nil
}

// beforeStart runs after the servers are declared on their ports and
// before they start (a test takes a port there, as another process may).
var beforeStart = func(c *redislive.Cluster, names []string) error { return nil }

// start starts the redis-servers of o: the instances and, for
// token=external, the sequencer. It returns the cluster, the instances'
// description and, per client, the address of its own proxy to each
// instance.
func start(d liveform.Deployment, o redlock.Options) (c *redislive.Cluster, desc liveform.Description, addrs map[string]map[string]string, err error) {
	c, err = redislive.NewCluster(d, o.RestartDelay)
	if err != nil {
		return nil, desc, nil, err
	}
	cluster := c // c, a named result, is nil in an error return
	defer func() {
		if err != nil {
			cluster.Close()
		}
	}()
	clock := redislive.WantsClock(d.Test)
	desc = describeInstances(o.Instances)
	for _, name := range desc.Servers {
		if err := c.Add(name, clock, o.Persistence); err != nil {
			return nil, desc, nil, err
		}
	}
	names := slices.Clone(desc.Servers)
	if o.Token == redlock.TokenExternal {
		// The sequencer is assumed correct: no faults reach it, its data is fsynced.
		if err := c.Add(redlock.FenceName, false, redis.PersistAlways); err != nil {
			return nil, desc, nil, err
		}
		names = append(names, redlock.FenceName)
	}
	if err := beforeStart(c, names); err != nil {
		return nil, desc, nil, err
	}
	if err := c.Start(names...); err != nil {
		return nil, desc, nil, err
	}
	addrs, err = c.ClientProxies(d.Test.ClientNames(), desc.Servers)
	if err != nil {
		return nil, desc, nil, err
	}
	return c, desc, addrs, nil
}
