package harness

import (
	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/sim"
)

func init() {
	registerSystem(System{
		Name:    "redis",
		Doc:     "single Redis instance: SET NX PX, release lua|del|check-then-del, watchdog, INCR fencing",
		Options: redis.OptionNames,
		Deploy:  deployRedis,
	})
}

func deployRedis(w *sim.World, opts map[string]string) (Deployment, error) {
	o := redis.DefaultOptions()
	for _, k := range sortedKeys(opts) {
		if err := o.Set(k, opts[k]); err != nil {
			return Deployment{}, err
		}
	}
	srv := w.AddNode("redis", sim.NodeOptions{Handler: redis.NewServer(o.Persistence)})
	return Deployment{
		Servers:   []*sim.Node{srv},
		NewLock:   func(p *sim.Proc) backends.Lock { return redis.NewClient(p, srv.ID(), o) },
		HasTokens: o.Fencing,
	}, nil
}
