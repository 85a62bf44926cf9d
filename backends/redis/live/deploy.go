package redislive

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/internal/tcpproxy"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	store "github.com/locklab/locklab/storage/live"
)

// The live form of the redis system: one redis-server; with replicas=N a
// primary "redis", replicas "replica1".. linked to it through proxies, and
// one redis-sentinel "sentinel". The names and roles are the simulator's
// (backends/redis/system.go). Redlock's live form (backends/redlock/live)
// starts its instances with a Cluster.
func init() {
	liveform.Register("redis", liveform.Form{
		Note:     "redis-server, redis-sentinel; go-redis " + goRedisVersion,
		Options:  redis.Table,
		Describe: describeRedis,
		Deploy:   liveform.RetryDeploy(deployRedisLive),
	})
}

const goRedisVersion = "v9.23.0"

// sentinelMaster is the name the Sentinel monitors the primary under.
const sentinelMaster = "locklab"

// redisOptions parses t's redis options and refuses those without a live form.
func redisOptions(t scenario.Test) (redis.Options, error) {
	return liveform.Options(redis.Table, t, CheckOptions)
}

// redisRefuse refuses the faults real Redis servers cannot take: a delay
// that matches a message type on a link of Redis's (its messages do not
// pass through locklab). A match on the links between clients and the
// storage runs: those messages are locklab's own.
func redisRefuse(f nemesis.Fault) string {
	if f.Kind == nemesis.Delay && f.Match != "" && !(clientsOrStorage(f.From) && clientsOrStorage(f.To)) {
		return "a delay cannot match a message type live on Redis's links: Redis's messages do not pass through locklab " +
			"(a match on the storage's messages runs)"
	}
	return ""
}

// clientsOrStorage reports whether every name is a client (c1, c2, ...) or
// the storage.
func clientsOrStorage(names []string) bool {
	for _, n := range names {
		if n != "storage" && !isClient(n) {
			return false
		}
	}
	return true
}

// isClient reports whether name is a client's (c followed by digits).
func isClient(name string) bool {
	if len(name) < 2 || name[0] != 'c' {
		return false
	}
	for _, r := range name[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func describeRedis(t scenario.Test) (liveform.Description, error) {
	o, err := redisOptions(t)
	if err != nil {
		return liveform.Description{}, err
	}
	if o.Replicas == 0 {
		return liveform.Description{Servers: []string{"redis"}, Roles: []string{"primary", "replicas"},
			Resolve: func(role string) ([]string, bool) {
				switch role {
				case "primary":
					return []string{"redis"}, true
				case "replicas":
					return []string{}, true
				}
				return nil, false
			}, Refuse: redisRefuse}, nil
	}
	instances := []string{"redis"}
	for i := range o.Replicas {
		instances = append(instances, fmt.Sprintf("replica%d", i+1))
	}
	primary := func() string { return "redis" }
	return liveform.Description{Servers: append(slices.Clone(instances), "sentinel"), Roles: []string{"primary", "replicas", "sentinel"},
		Resolve: roleResolve(instances, &primary), Refuse: redisRefuse}, nil
}

// roleResolve resolves primary, replicas and sentinel, the primary being
// *primary() when the fault starts.
func roleResolve(instances []string, primary *func() string) func(string) ([]string, bool) {
	return func(role string) ([]string, bool) {
		switch role {
		case "primary":
			return []string{(*primary)()}, true
		case "replicas":
			p := (*primary)()
			return slices.DeleteFunc(slices.Clone(instances), func(n string) bool { return n == p }), true
		case "sentinel":
			return []string{"sentinel"}, true
		}
		return nil, false
	}
}

// wantsClock reports whether a run may jump a server's clock (then the
// servers run under libfaketime).
func wantsClock(t scenario.Test) bool {
	if t.Schedule != nil {
		for _, f := range t.Schedule.Faults {
			if f.Kind == nemesis.ClockJump {
				return true
			}
		}
		return false
	}
	return t.Nemesis == "random" || strings.Contains(t.Nemesis, string(nemesis.ClockJump))
}

// redisCluster is a deployment of redis-server processes with a proxy on
// every link locklab may cut: client→server, replica→primary,
// sentinel→server.
type redisCluster struct {
	ctx     context.Context
	group   *proc.Group
	setup   time.Duration
	servers map[string]*redisServer
	order   []string
	proxies map[[2]string]*tcpproxy.Proxy // (dialler, server)
	cuts    map[*tcpproxy.Proxy]int
	// restartDelay postpones restarts (antirez's remedy, done by the operator).
	restartDelay time.Duration
	closers      []func()

	mu     sync.Mutex
	timers []*time.Timer
	closed bool
}

func newRedisCluster(d liveform.Deployment) (*redisCluster, error) {
	g, err := proc.NewGroup(filepath.Join(d.Dir, "logs"))
	if err != nil {
		return nil, err
	}
	ctx := d.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return &redisCluster{ctx: ctx, group: g, setup: d.Setup, servers: map[string]*redisServer{},
		proxies: map[[2]string]*tcpproxy.Proxy{}, cuts: map[*tcpproxy.Proxy]int{}}, nil
}

// add declares a redis-server instance on a free port.
func (c *redisCluster) add(root, name, bin string, clock bool, args ...string) (*redisServer, error) {
	ports, err := proc.FreePorts(1)
	if err != nil {
		return nil, err
	}
	dir, err := dataDir(root, name)
	if err != nil {
		return nil, err
	}
	s := &redisServer{name: name, bin: bin, port: ports[0], dir: dir, args: args}
	if clock {
		s.clock = filepath.Join(dir, "faketime.rc")
		if err := writeAtomic(s.clock, "+0\n"); err != nil {
			return nil, err
		}
	}
	c.servers[name] = s
	c.order = append(c.order, name)
	return s, nil
}

// proxy puts a proxy on the link from dialler to server.
func (c *redisCluster) proxy(dialler, server string) (*tcpproxy.Proxy, error) {
	p, err := tcpproxy.New(dialler+"->"+server, c.servers[server].addr())
	if err != nil {
		return nil, err
	}
	c.proxies[[2]string{dialler, server}] = p
	return p, nil
}

func (c *redisCluster) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for _, t := range c.timers {
		t.Stop()
	}
	c.mu.Unlock()
	for _, f := range c.closers {
		f()
	}
	for _, k := range sortedLinks(c.proxies) {
		c.proxies[k].Close()
	}
	var pids []int
	for _, p := range c.group.Processes() {
		pids = append(pids, p.Pid())
	}
	c.group.Close()
	for _, pid := range pids {
		cleanFaketime(pid)
	}
}

func sortedLinks(m map[[2]string]*tcpproxy.Proxy) [][2]string {
	var out [][2]string
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0]+">"+a[1], b[0]+">"+b[1]) })
	return out
}

func (c *redisCluster) server(name string) (*redisServer, error) {
	s, ok := c.servers[name]
	if !ok {
		return nil, fmt.Errorf("no redis server %q", name)
	}
	return s, nil
}

func (c *redisCluster) pause(name string) error {
	s, err := c.server(name)
	if err != nil {
		return err
	}
	return s.process().Pause()
}

func (c *redisCluster) resume(name string) error {
	s, err := c.server(name)
	if err != nil {
		return err
	}
	return s.process().Resume()
}

func (c *redisCluster) crash(name string) error {
	s, err := c.server(name)
	if err != nil {
		return err
	}
	return s.kill()
}

// restart starts a crashed server again on its port (with the data its
// persistence kept), restartDelay later.
func (c *redisCluster) restart(name string) error {
	s, err := c.server(name)
	if err != nil {
		return err
	}
	if p := s.process(); p != nil && p.Alive() {
		return nil
	}
	if c.restartDelay <= 0 {
		return s.start(c.ctx, c.group, c.setup)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		kills := s.killed()
		c.timers = append(c.timers, time.AfterFunc(c.restartDelay, func() {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			// A crash since this restart was planned keeps the server down:
			// its own restart comes later.
			if !closed && s.killed() == kills {
				_ = s.start(c.ctx, c.group, c.setup)
			}
		}))
	}
	return nil
}

func (c *redisCluster) jumpClock(name string, d time.Duration) error {
	s, err := c.server(name)
	if err != nil {
		return err
	}
	return s.jump(d)
}

// link is the proxy carrying the link between a and b (either direction),
// and whether a and b are both nodes of this deployment or its clients.
func (c *redisCluster) link(a, b string) (*tcpproxy.Proxy, bool) {
	if p, ok := c.proxies[[2]string{a, b}]; ok {
		return p, true
	}
	if p, ok := c.proxies[[2]string{b, a}]; ok {
		return p, true
	}
	_, sa := c.servers[a]
	_, sb := c.servers[b]
	return nil, (sa || sb) && a != store.Name && b != store.Name
}

// cut blocks the proxy of the link a–b (both directions: a proxy carries
// whole TCP connections), holding its bytes until the heal.
func (c *redisCluster) cut(a, b string) (bool, error) {
	p, mine := c.link(a, b)
	if p != nil {
		c.mu.Lock()
		c.cuts[p]++
		c.mu.Unlock()
		p.Block(tcpproxy.Hang)
	}
	return mine, nil
}

func (c *redisCluster) heal(a, b string) error {
	p, _ := c.link(a, b)
	if p == nil {
		return nil
	}
	c.mu.Lock()
	c.cuts[p]--
	open := c.cuts[p] <= 0
	c.mu.Unlock()
	if open {
		p.Heal()
	}
	return nil
}

// delay delays what from sends to to by d until until (zero: until the run
// ends) on the proxy of a client's link to a server (a delay fault between
// a client and the lock's own servers), reporting false for a link no proxy
// of the deployment carries.
func (c *redisCluster) delay(from, to string, d time.Duration, until time.Time) (bool, error) {
	if p, ok := c.proxies[[2]string{from, to}]; ok {
		p.Delay(d, 0, until)
		return true, nil
	}
	if p, ok := c.proxies[[2]string{to, from}]; ok {
		p.Delay(0, d, until)
		return true, nil
	}
	return false, nil
}

// clientProxies puts a proxy on every client→server link and returns each
// client's addresses.
func (c *redisCluster) clientProxies(clients, servers []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, cl := range clients {
		out[cl] = map[string]string{}
		for _, s := range servers {
			p, err := c.proxy(cl, s)
			if err != nil {
				return nil, err
			}
			out[cl][s] = p.Addr()
		}
	}
	return out, nil
}

func (c *redisCluster) startAll(names ...string) error {
	for _, n := range names {
		if err := c.servers[n].start(c.ctx, c.group, c.setup); err != nil {
			return err
		}
	}
	return nil
}

func (c *redisCluster) versions(first string) map[string]string {
	return map[string]string{"redis-server": redisVersion(c.ctx, c.servers[first].addr()), "go-redis": goRedisVersion}
}

func (c *redisCluster) system(desc liveform.Description) *liveform.Deployed {
	return &liveform.Deployed{Description: desc, Crash: c.crash, Restart: c.restart, Pause: c.pause, Resume: c.resume,
		JumpClock: c.jumpClock, Cut: c.cut, Heal: c.heal, Delay: c.delay, Close: c.close,
		Figures: func(time.Duration) map[string]any { return map[string]any{} }}
}

func redisBinary() (string, error) {
	return proc.Binary("redis-server", "redis-server", "/usr/bin/redis-server")
}

func deployRedisLive(d liveform.Deployment) (*liveform.Deployed, error) {
	o, err := redisOptions(d.Test)
	if err != nil {
		return nil, err
	}
	bin, err := redisBinary()
	if err != nil {
		return nil, err
	}
	if o.Replicas > 0 {
		sys, _, err := deploySentinel(d, o, bin)
		return sys, err
	}
	sys, _, err := deploySingle(d, o, bin)
	return sys, err
}

// deploySingle starts one redis-server, "redis".
func deploySingle(d liveform.Deployment, o redis.Options, bin string) (sys *liveform.Deployed, c *redisCluster, err error) {
	c, err = newRedisCluster(d)
	if err != nil {
		return nil, nil, err
	}
	cluster := c // c, a named result, is nil in an error return
	defer func() {
		if err != nil {
			cluster.close()
		}
	}()
	c.restartDelay = o.RestartDelay
	if _, err := c.add(d.Dir, "redis", bin, wantsClock(d.Test), persistenceArgs(o.Persistence)...); err != nil {
		return nil, nil, err
	}
	if err := c.startAll("redis"); err != nil {
		return nil, nil, err
	}
	addrs, err := c.clientProxies(d.Test.ClientNames(), []string{"redis"})
	if err != nil {
		return nil, nil, err
	}
	desc, _ := describeRedis(d.Test)
	sys = c.system(desc)
	c.serveLocks(sys, o, func(client string) Topology { return Topology{Primary: "redis", Addrs: addrs[client]} })
	return sys, c, nil
}

// serveLocks gives sys its locks: a client of o on the topology topo(client)
// for each client, closed with the cluster; and the tokens and versions.
func (c *redisCluster) serveLocks(sys *liveform.Deployed, o redis.Options, topo func(client string) Topology) {
	var mu sync.Mutex
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		l := NewClient(lc.Env, lc.Fork, topo(lc.Env.Name()), o)
		mu.Lock()
		c.closers = append(c.closers, l.Close)
		mu.Unlock()
		return l
	}
	sys.Tokens = o.Fencing
	sys.Versions = c.versions("redis")
}
