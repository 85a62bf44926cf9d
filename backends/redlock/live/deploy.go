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
	var instances []string
	for i := range o.Instances {
		instances = append(instances, redlock.InstanceName(i))
	}
	return liveform.Description{Servers: instances, Roles: []string{"instances"},
		Resolve: func(role string) ([]string, bool) {
			if role == "instances" {
				return slices.Clone(instances), true
			}
			return nil, false
		}, Refuse: redislive.Refuse}, nil
}

func deploy(d liveform.Deployment) (sys *liveform.Deployed, err error) {
	o, err := options(d.Test)
	if err != nil {
		return nil, err
	}
	c, err := redislive.NewCluster(d, o.RestartDelay)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	clock := redislive.WantsClock(d.Test)
	desc, _ := describe(d.Test)
	for _, name := range desc.Servers {
		if err := c.Add(name, clock, o.Persistence); err != nil {
			return nil, err
		}
	}
	names := slices.Clone(desc.Servers)
	if o.Token == redlock.TokenExternal {
		// The sequencer is assumed correct: no faults reach it, its data is fsynced.
		if err := c.Add(redlock.FenceName, false, redis.PersistAlways); err != nil {
			return nil, err
		}
		names = append(names, redlock.FenceName)
	}
	if err := c.Start(names...); err != nil {
		return nil, err
	}
	addrs, err := c.ClientProxies(d.Test.ClientNames(), desc.Servers)
	if err != nil {
		return nil, err
	}
	sys = c.Deployed(desc)
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		t := Topology{Instances: desc.Servers, Addrs: addrs[lc.Env.Name()]}
		if o.Token == redlock.TokenExternal {
			t.Fence = c.Addr(redlock.FenceName)
		}
		l := NewClient(lc.Env, t, o)
		c.OnClose(l.Close)
		return l
	}
	sys.Tokens = true
	sys.Versions["redsync"] = RedsyncVersion
	return sys, nil
}
