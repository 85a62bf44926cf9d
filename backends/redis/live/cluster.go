package redislive

import (
	"time"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// Cluster is a deployment of independent redis-server processes for a live
// form built of them (Redlock's instances): each client reaches each
// instance through a proxy of its own, so that a partition can cut one
// link; pause, crash (with restart-delay), clock jumps (libfaketime) and
// cuts are performed on the real processes and proxies.
type Cluster struct {
	c   *redisCluster
	bin string
	dir string
}

// NewCluster prepares a cluster for deployment d (nothing starts yet); a
// crashed instance restarts restartDelay later. It fails when redis-server
// is not installed, naming its package.
func NewCluster(d liveform.Deployment, restartDelay time.Duration) (*Cluster, error) {
	bin, err := redisBinary()
	if err != nil {
		return nil, err
	}
	c, err := newRedisCluster(d)
	if err != nil {
		return nil, err
	}
	c.restartDelay = restartDelay
	return &Cluster{c: c, bin: bin, dir: d.Dir}, nil
}

// Add declares an instance on a free port with persistence p; clock puts it
// under libfaketime (a run that jumps clocks).
func (c *Cluster) Add(name string, clock bool, p redis.Persistence) error {
	_, err := c.c.add(c.dir, name, c.bin, clock, persistenceArgs(p)...)
	return err
}

// Start starts the named instances and waits until each answers as itself.
func (c *Cluster) Start(names ...string) error { return c.c.startAll(names...) }

// ClientProxies puts a proxy on every client→instance link and returns, per
// client, the address it dials for each instance.
func (c *Cluster) ClientProxies(clients, instances []string) (map[string]map[string]string, error) {
	return c.c.clientProxies(clients, instances)
}

// Addr is the address of an instance itself (no proxy).
func (c *Cluster) Addr(name string) string { return c.c.servers[name].addr() }

// OnClose has f run when the cluster closes, before its servers stop (a
// client's connections).
func (c *Cluster) OnClose(f func()) {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	c.c.closers = append(c.c.closers, f)
}

// Deployed is the cluster as a started live system described by desc, its
// faults performed on the real processes and proxies.
func (c *Cluster) Deployed(desc liveform.Description) *liveform.Deployed {
	d := c.c.system(desc)
	d.Versions = c.c.versions(desc.Servers[0])
	return d
}

// Close stops every server and proxy (nothing for a nil cluster).
func (c *Cluster) Close() {
	if c != nil {
		c.c.close()
	}
}

// Refuse refuses the faults real Redis servers cannot take (a delay that
// matches a message type).
func Refuse(f nemesis.Fault) string { return redisRefuse(f) }

// WantsClock reports whether a run of t may jump a server's clock (then its
// servers run under libfaketime).
func WantsClock(t scenario.Test) bool { return wantsClock(t) }
