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
			lags = append(lags, lag)
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
	if err := c.startAll(instances...); err != nil {
		return nil, nil, err
	}
	if err := waitReplicas(c, len(instances)-1); err != nil {
		return nil, nil, err
	}
	conf := filepath.Join(sen.dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile \"\"\nsentinel monitor %s 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s %d\nsentinel parallel-syncs %s %d\n",
		sen.port, sen.dir, sentinelMaster, c.proxies[[2]string{"sentinel", "redis"}].Port(),
		sentinelMaster, max(o.DownAfter.Milliseconds(), 1), sentinelMaster, sentinelFailoverTimeout.Milliseconds(), sentinelMaster, len(instances))
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, nil, fmt.Errorf("sentinel config: %w", err)
	}
	sen.args = []string{conf}
	if err := c.startAll("sentinel"); err != nil {
		return nil, nil, err
	}
	mon := goredis.NewSentinelClient(&goredis.Options{Addr: sen.addr(), Protocol: 2, MaxRetries: -1, DisableIndentity: true})
	c.closers = append(c.closers, func() { _ = mon.Close() })
	// Shorter Sentinel periods than its defaults (INFO every 10 s, PING every
	// 1 s): a failover is noticed and confirmed within the run's time.
	raw := goredis.NewClient(&goredis.Options{Addr: sen.addr(), Protocol: 2, MaxRetries: -1, DisableIndentity: true})
	defer raw.Close()
	for _, kv := range [][2]string{{"info-period", "100"}, {"ping-period", "100"}, {"min-link-reconnect-period", "200"}} {
		if err := raw.Do(c.ctx, "SENTINEL", "DEBUG", kv[0], kv[1]).Err(); err != nil {
			return nil, nil, fmt.Errorf("sentinel debug %s: %w", kv[0], err)
		}
	}
	if err := proc.WaitReady(c.ctx, "sentinel sees the replicas", sen.process(), c.setup, func() error {
		rs, err := mon.Replicas(c.ctx, sentinelMaster).Result()
		if err != nil {
			return err
		}
		if len(rs) < len(instances)-1 {
			return fmt.Errorf("%d of %d replicas known", len(rs), len(instances)-1)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	clients := d.Test.ClientNames()
	addrs, err := c.clientProxies(clients, desc.Servers)
	if err != nil {
		return nil, nil, err
	}
	// The primary as the Sentinel last announced it, and its failovers.
	var mu sync.Mutex
	primary := "redis"
	var record func(f string, targets []string, detail string)
	current := func() string {
		mu.Lock()
		defer mu.Unlock()
		return primary
	}
	desc.Resolve = roleResolve(instances, &current)
	watch := goredis.NewClient(&goredis.Options{Addr: sen.addr(), Protocol: 2, DisableIndentity: true})
	sub := watch.Subscribe(c.ctx, "+switch-master", "+promoted-slave")
	if _, err := sub.Receive(c.ctx); err != nil {
		_ = watch.Close()
		return nil, nil, fmt.Errorf("sentinel: subscribe: %w", err)
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
				mu.Lock()
				primary = announced[f[3]+":"+f[4]]
				mu.Unlock()
				continue
			default:
				continue
			}
			mu.Lock()
			primary = fresh
			rec := record
			mu.Unlock()
			if rec != nil {
				rec("failover", []string{fresh, old}, fmt.Sprintf("sentinel promoted %s to primary (+promoted-slave), replacing %s", fresh, old))
			}
		}
	}()
	c.closers = append([]func(){func() { _ = sub.Close(); _ = watch.Close(); wg.Wait() }}, c.closers...)
	sys = c.system(desc)
	sys.Events = func(r func(f string, targets []string, detail string)) {
		mu.Lock()
		record = r
		mu.Unlock()
	}
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
