package redislive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/internal/tcpproxy"
	"github.com/locklab/locklab/liveform"
)

// deploySentinel starts a primary "redis", replicas "replica1".. and one
// redis-sentinel "sentinel" (quorum 1, down-after = the down-after option).
//
// Links: each replica replicates through its own proxy (replicaN->redis),
// behind which a lag stage carries delay faults; the Sentinel reaches every
// instance through its own proxy (sentinel->X), and every instance announces
// that proxy's port (replica-announce-port), so the addresses the Sentinel
// reports are those proxies; a client maps them back to instance names and
// dials its own proxy (cN->X). After a failover the Sentinel points the
// replicas at the new primary's announced address: those replication links
// then share the sentinel->X proxy (a cut between two instances after a
// failover also cuts the Sentinel's link to that instance).
func deploySentinel(d liveform.Deployment, o redis.Options, bin string) (sys *liveform.Deployed, c *redisCluster, err error) {
	sbin, err := proc.Binary("redis-sentinel", "redis-sentinel", "/usr/bin/redis-sentinel")
	if err != nil {
		return nil, nil, err
	}
	c, err = newRedisCluster(d)
	if err != nil {
		return nil, nil, err
	}
	var lags []*tcpproxy.Proxy
	cluster := c // c, a named result, is nil in an error return
	defer func() {
		if err != nil {
			cluster.close()
		}
	}()
	c.closers = append(c.closers, func() {
		for _, l := range lags {
			l.Close()
		}
	})
	c.restartDelay = o.RestartDelay
	clock := wantsClock(d.Test)
	desc, _ := describeRedis(d.Test)
	instances := desc.Servers[:len(desc.Servers)-1]
	for _, name := range instances {
		if _, err := c.add(d.Dir, name, bin, clock); err != nil {
			return nil, nil, err
		}
	}
	sen, err := c.add(d.Dir, "sentinel", sbin, clock) // a jump of its clock sends it into TILT mode, as a real one
	if err != nil {
		return nil, nil, err
	}
	sen.sentinel = true
	announced, links, err := c.wireSentinel(instances, o, &lags)
	if err != nil {
		return nil, nil, err
	}
	if err := c.startAll(instances...); err != nil {
		return nil, nil, err
	}
	if err := waitReplicas(c, len(instances)-1); err != nil {
		return nil, nil, err
	}
	if err := c.startSentinel(sen, o, len(instances)); err != nil {
		return nil, nil, err
	}
	clients := d.Test.ClientNames()
	addrs, err := c.clientProxies(clients, desc.Servers)
	if err != nil {
		return nil, nil, err
	}
	w, err := c.watchFailovers(sen, announced)
	if err != nil {
		return nil, nil, err
	}
	current := w.current
	desc.Resolve = roleResolve(instances, &current)
	sys = c.system(desc)
	sys.Events = w.events
	sys.Delay = func(from, to string, dl time.Duration, until time.Time) (bool, error) {
		switch {
		case from == "redis" && links[to] != nil:
			links[to].Delay(0, dl, until) // what the primary sends back to the replica
			return true, nil
		case to == "redis" && links[from] != nil:
			links[from].Delay(dl, 0, until) // what the replica sends the primary
			return true, nil
		}
		return c.delay(from, to, dl, until)
	}
	c.serveLocks(sys, o, func(client string) Topology {
		return Topology{Primary: "redis", Addrs: addrs[client], Sentinel: addrs[client]["sentinel"], Master: sentinelMaster, Announced: announced}
	})
	return sys, c, nil
}

// wireSentinel wires the links of a Sentinel deployment: the Sentinel's
// proxy to each instance (whose port the instance announces), and each
// replica's replication through a lag stage (appended to lags) and its own
// proxy to the primary. It sets each instance's arguments and returns the
// announced addresses (address -> instance) and the lag stages by replica.
func (c *redisCluster) wireSentinel(instances []string, o redis.Options, lags *[]*tcpproxy.Proxy) (map[string]string, map[string]*tcpproxy.Proxy, error) {
	announced := map[string]string{}      // address the Sentinel reports -> instance
	links := map[string]*tcpproxy.Proxy{} // replica -> its replication lag stage
	for _, name := range instances {
		p, err := c.proxy("sentinel", name)
		if err != nil {
			return nil, nil, err
		}
		announced[p.Addr()] = name
		args := append(persistenceArgs(o.Persistence), "--replica-announce-ip", "127.0.0.1",
			"--replica-announce-port", strconv.Itoa(p.Port()))
		if name != "redis" {
			lag, err := tcpproxy.New("lag stage to "+name, c.servers["redis"].addr())
			if err != nil {
				return nil, nil, err
			}
			*lags = append(*lags, lag)
			links[name] = lag
			rp, err := tcpproxy.New(name+"->redis", lag.Addr())
			if err != nil {
				return nil, nil, err
			}
			c.proxies[[2]string{name, "redis"}] = rp
			args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(rp.Port()))
		}
		c.servers[name].args = args
	}
	return announced, links, nil
}

// startSentinel writes the Sentinel's configuration (quorum 1, down-after
// from the options), starts it with shorter periods than its defaults and
// waits until it knows every replica.
func (c *redisCluster) startSentinel(sen *redisServer, o redis.Options, instances int) error {
	conf := filepath.Join(sen.dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile \"\"\nsentinel monitor %s 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s %d\nsentinel parallel-syncs %s %d\n",
		sen.port, sen.dir, sentinelMaster, c.proxies[[2]string{"sentinel", "redis"}].Port(),
		sentinelMaster, max(o.DownAfter.Milliseconds(), 1), sentinelMaster, sentinelFailoverTimeout.Milliseconds(), sentinelMaster, instances)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return fmt.Errorf("sentinel config: %w", err)
	}
	sen.args = []string{conf}
	if err := c.startAll("sentinel"); err != nil {
		return err
	}
	mon := goredis.NewSentinelClient(&goredis.Options{Addr: sen.addr(), Protocol: 2, MaxRetries: -1, DisableIndentity: true})
	c.closers = append(c.closers, func() { _ = mon.Close() })
	// Shorter Sentinel periods than its defaults (INFO every 10 s, PING every
	// 1 s): a failover is noticed and confirmed within the run's time.
	raw := goredis.NewClient(&goredis.Options{Addr: sen.addr(), Protocol: 2, MaxRetries: -1, DisableIndentity: true})
	defer raw.Close()
	for _, kv := range [][2]string{{"info-period", "100"}, {"ping-period", "100"}, {"min-link-reconnect-period", "200"}} {
		if err := raw.Do(c.ctx, "SENTINEL", "DEBUG", kv[0], kv[1]).Err(); err != nil {
			return fmt.Errorf("sentinel debug %s: %w", kv[0], err)
		}
	}
	if err := proc.WaitReady(c.ctx, "sentinel sees the replicas", sen.process(), c.setup, func() error {
		rs, err := mon.Replicas(c.ctx, sentinelMaster).Result()
		if err != nil {
			return err
		}
		if len(rs) < instances-1 {
			return fmt.Errorf("%d of %d replicas known", len(rs), instances-1)
		}
		return nil
	}); err != nil {
		return err
	}
	return nil
}

// failovers follows the Sentinel's announcements: the primary as it last
// announced it, and each promotion told to the run's events.
type failovers struct {
	mu      sync.Mutex
	primary string
	record  func(f string, targets []string, detail string)
}

// current is the primary as the Sentinel last announced it.
func (w *failovers) current() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.primary
}

// events sets where promotions are told (liveform.Deployed.Events).
func (w *failovers) events(r func(f string, targets []string, detail string)) {
	w.mu.Lock()
	w.record = r
	w.mu.Unlock()
}

// watchFailovers subscribes to the Sentinel's +switch-master and
// +promoted-slave and follows them until the cluster closes.
func (c *redisCluster) watchFailovers(sen *redisServer, announced map[string]string) (*failovers, error) {
	w := &failovers{primary: "redis"}
	watch := goredis.NewClient(&goredis.Options{Addr: sen.addr(), Protocol: 2, DisableIndentity: true})
	sub := watch.Subscribe(c.ctx, "+switch-master", "+promoted-slave")
	if _, err := sub.Receive(c.ctx); err != nil {
		_ = watch.Close()
		return nil, fmt.Errorf("sentinel: subscribe: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for m := range sub.Channel() {
			f := strings.Fields(m.Payload)
			var old, fresh string
			switch {
			case m.Channel == "+promoted-slave" && len(f) == 8:
				// "slave <ip:port> <ip> <port> @ <master> <ip> <port>": the
				// promotion is confirmed (the monitor's promotion in the simulator).
				fresh, old = announced[f[2]+":"+f[3]], announced[f[6]+":"+f[7]]
			case m.Channel == "+switch-master" && len(f) == 5:
				// "<master> <old ip> <old port> <new ip> <new port>": the
				// failover is over; only the primary is noted.
				w.mu.Lock()
				w.primary = announced[f[3]+":"+f[4]]
				w.mu.Unlock()
				continue
			default:
				continue
			}
			w.mu.Lock()
			w.primary = fresh
			rec := w.record
			w.mu.Unlock()
			if rec != nil {
				rec("failover", []string{fresh, old}, fmt.Sprintf("sentinel promoted %s to primary (+promoted-slave), replacing %s", fresh, old))
			}
		}
	}()
	c.closers = append([]func(){func() { _ = sub.Close(); _ = watch.Close(); wg.Wait() }}, c.closers...)
	return w, nil
}

// sentinelFailoverTimeout is the Sentinel's failover-timeout: long, because
// it is also how long a Sentinel waits before it points a replica that
// replicates from an address other than the one it knows (a replica's own
// proxy) at its own address for the primary (+fix-slave-config), which would
// take the replication links out of their proxies.
const sentinelFailoverTimeout = 3 * time.Minute

// waitReplicas waits until the primary lists n online replicas.
func waitReplicas(c *redisCluster, n int) error {
	p := c.servers["redis"]
	cl := goredis.NewClient(&goredis.Options{Addr: p.addr(), Protocol: 2, MaxRetries: -1, DisableIndentity: true})
	defer cl.Close()
	return proc.WaitReady(c.ctx, "the primary's replicas online", p.process(), c.setup, func() error {
		ctx, cancel := context.WithTimeout(c.ctx, time.Second)
		defer cancel()
		info, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if got := strings.Count(info, "state=online"); got < n {
			return fmt.Errorf("%d of %d replicas online", got, n)
		}
		return nil
	})
}
