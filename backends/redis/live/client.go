package redislive

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/lockapi"
)

// Topology is where a live client finds Redis.
type Topology struct {
	// Primary is the instance commands go to first.
	Primary string
	// Addrs is, per instance name, the address this client dials (its own
	// proxy to the instance, so that a partition can cut this link alone).
	Addrs map[string]string
	// Sentinel, when not empty, is the address this client dials to ask the
	// Sentinel for the primary (after a timeout or an error).
	Sentinel string
	// Master is the name the Sentinel monitors the primary under.
	Master string
	// Announced maps an address the Sentinel reports to the instance's name.
	Announced map[string]string
}

// CheckOptions refuses the options of the redis system that the live
// transport or the real server cannot honour.
func CheckOptions(o redis.Options) error {
	if o.Reentrancy != redis.ReentrancyNone {
		return fmt.Errorf("redis option reentrancy=%s has no live form: the live client takes each lock once (reentrancy=none)", o.Reentrancy)
	}
	if err := CheckExpiryClock("redis", o.ExpiryClock); err != nil {
		return err
	}
	return o.Validate()
}

// CheckExpiryClock refuses system's option expiry-clock=c unless c is the
// wall clock: the real servers, redis-server, expire keys on theirs.
func CheckExpiryClock(system string, c redis.Clock) error {
	if c != redis.ClockWall {
		return fmt.Errorf("%s option expiry-clock=%s has no live form: redis-server expires keys on its wall clock (keyIsExpired compares with mstime)", system, c)
	}
	return nil
}

// Client is the live Redis lock client of one client node: the recipe of
// backends/redis (redis.Client, written once) over go-redis. Acquire and
// Release are called from one goroutine; watchdogs run on their own.
type Client struct {
	*redis.Client
	conns *conns
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// NewClient returns a live lock client for the client node env.Name();
// watchEnv makes the Env of each watchdog goroutine.
func NewClient(env lockapi.Env, watchEnv func() lockapi.Env, t Topology, o redis.Options) *Client {
	cs := &conns{topo: t, timeout: o.RequestTimeout, byName: map[string]*goredis.Client{}, primary: t.Primary}
	if t.Sentinel != "" {
		cs.sentinel = goredis.NewSentinelClient(&goredis.Options{Addr: t.Sentinel, Protocol: 2, MaxRetries: -1,
			ContextTimeoutEnabled: true, DisableIndentity: true, DialTimeout: o.RequestTimeout})
	}
	cs.warm()
	return &Client{Client: redis.New(env, &transport{conns: cs, watchEnv: watchEnv}, o), conns: cs}
}

// Close closes the client's connections.
func (c *Client) Close() { c.conns.close() }

// conns are a live client's connections: one go-redis client per instance
// and the Sentinel's, and which instance commands go to now. Its goroutines
// (the client's and its watchdogs') share it.
type conns struct {
	topo     Topology
	timeout  time.Duration // a dial, a question to the Sentinel
	sentinel *goredis.SentinelClient

	mu      sync.Mutex
	byName  map[string]*goredis.Client
	primary string
	stale   bool
	closed  bool
}

// warm opens a connection to every instance (and the Sentinel) before the
// workload starts, as a long-running application's pool has them: the
// first acquire then costs what the others do, not a dial through a proxy.
// An instance that does not answer is dialled again when it is needed.
func (cs *conns) warm() {
	for _, name := range sortedKeys(cs.topo.Addrs) {
		if name == "sentinel" {
			continue
		}
		cl := NewConn(cs.topo.Addrs[name], cs.timeout)
		cs.byName[name] = cl
		ctx, cancel := context.WithTimeout(context.Background(), 5*cs.timeout)
		_ = cl.Ping(ctx).Err()
		cancel()
	}
	if cs.sentinel != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*cs.timeout)
		_ = cs.sentinel.Ping(ctx).Err()
		cancel()
	}
}

func (cs *conns) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for _, k := range sortedKeys(cs.byName) {
		_ = cs.byName[k].Close()
	}
	if cs.sentinel != nil {
		_ = cs.sentinel.Close()
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// current is the go-redis client of the instance commands go to now, asking
// the Sentinel first when the last command failed.
func (cs *conns) current() (string, *goredis.Client) {
	cs.mu.Lock()
	stale := cs.stale && cs.sentinel != nil
	cs.mu.Unlock()
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), cs.timeout)
		addr, err := cs.sentinel.GetMasterAddrByName(ctx, cs.topo.Master).Result()
		cancel()
		if err == nil && len(addr) == 2 {
			if name, ok := cs.topo.Announced[addr[0]+":"+addr[1]]; ok {
				cs.mu.Lock()
				cs.primary, cs.stale = name, false
				cs.mu.Unlock()
			}
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	name := cs.primary
	cl := cs.byName[name]
	if cl == nil {
		cl = NewConn(cs.topo.Addrs[name], cs.timeout)
		cs.byName[name] = cl
	}
	return name, cl
}

func (cs *conns) failed() {
	cs.mu.Lock()
	cs.stale = true
	cs.mu.Unlock()
}

// transport is the live redis.Transport of one goroutine of a client: each
// command goes to the current instance through go-redis, bounded by its
// context. An acquire's SET keeps its connection until the next command, so
// that a WAIT after it counts the replicas that acknowledged that SET (WAIT
// is about the connection's last write).
type transport struct {
	conns    *conns
	watchEnv func() lockapi.Env
	// the connection of the last acquire command, and its instance
	pinned   *goredis.Conn
	pinnedTo string
}

var _ redis.Transport = (*transport)(nil)

// cmdable is what a go-redis client and one of its connections both do.
type cmdable interface {
	goredis.Scripter
	Do(ctx context.Context, args ...any) *goredis.Cmd
}

// Do sends cmd, as go-redis sends it (see command), to the instance commands
// go to now, and waits at most timeout; a WAIT goes over the connection of
// the acquire before it. An error other than a nil reply makes a
// Sentinel-backed client ask for the primary again.
func (t *transport) Do(cmd any, timeout time.Duration) (redis.Reply, string, error) {
	c, err := command(cmd)
	if err != nil {
		return redis.Reply{}, "", err
	}
	pinned, name := t.pinned, t.pinnedTo
	t.pinned, t.pinnedTo = nil, ""
	if pinned != nil {
		defer pinned.Close()
	}
	var on cmdable = pinned
	if !c.wait || pinned == nil {
		var cl *goredis.Client
		name, cl = t.conns.current()
		on = cl
		if c.acquire {
			t.pinned, t.pinnedTo = cl.Conn(), name
			on = t.pinned
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res *goredis.Cmd
	if c.script != nil {
		res = c.script.Run(ctx, on, c.keys, c.args...)
	} else {
		res = on.Do(ctx, c.args...)
	}
	v, err := res.Result()
	if err != nil && !errors.Is(err, goredis.Nil) {
		t.unpin()
		t.conns.failed()
		return redis.Reply{}, name, Classify(name, err)
	}
	r, err := c.reply(v, err)
	if err != nil {
		t.unpin()
		return redis.Reply{}, name, fmt.Errorf("redis %s: %w", name, err)
	}
	return r, name, nil
}

// unpin gives the pinned connection back.
func (t *transport) unpin() {
	if t.pinned != nil {
		_ = t.pinned.Close()
		t.pinned, t.pinnedTo = nil, ""
	}
}

// Go runs fn in a goroutine with an Env of its own and a transport of its own
// over the same connections; it ends when the run ends (its Env's Sleep does
// not return then).
func (t *transport) Go(_ string, fn func(env lockapi.Env, t redis.Transport)) {
	env := t.watchEnv()
	go fn(env, &transport{conns: t.conns, watchEnv: t.watchEnv})
}
