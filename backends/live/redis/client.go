package redis

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/holds"
	simredis "github.com/locklab/locklab/backends/redis"
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

// CheckOptions refuses the options of the simulated redis system that the
// live client or the real server cannot honour.
func CheckOptions(o simredis.Options) error {
	switch {
	case o.Reentrancy != simredis.ReentrancyNone:
		return fmt.Errorf("redis option reentrancy=%s has no live form: the live client takes each lock once (reentrancy=none)", o.Reentrancy)
	case o.ExpiryClock != simredis.ClockWall:
		return fmt.Errorf("redis option expiry-clock=%s has no live form: redis-server expires keys on its wall clock (keyIsExpired compares with mstime)", o.ExpiryClock)
	}
	return o.Validate()
}

// Client is the live Redis lock client of one client node (see the package
// doc). Acquire and Release are called from one goroutine; watchdogs run on
// their own.
type Client struct {
	env      lockapi.Env
	watchEnv func() lockapi.Env
	topo     Topology
	opts     simredis.Options

	mu       sync.Mutex
	conns    map[string]*goredis.Client
	sentinel *goredis.SentinelClient
	primary  string
	stale    bool
	seq      int
	held     map[string]*holds.Hold
	onRenew  func(l lockapi.Lease, done bool, err error)
	closed   bool
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// NewClient returns a live lock client for the client node env.Name();
// watchEnv makes the Env of each watchdog goroutine.
func NewClient(env lockapi.Env, watchEnv func() lockapi.Env, t Topology, o simredis.Options) *Client {
	c := &Client{env: env, watchEnv: watchEnv, topo: t, opts: o, conns: map[string]*goredis.Client{},
		primary: t.Primary, held: map[string]*holds.Hold{}}
	if t.Sentinel != "" {
		c.sentinel = goredis.NewSentinelClient(&goredis.Options{Addr: t.Sentinel, Protocol: 2, MaxRetries: -1,
			ContextTimeoutEnabled: true, DisableIndentity: true, DialTimeout: o.RequestTimeout})
	}
	c.warm()
	return c
}

// warm opens a connection to every instance (and the Sentinel) before the
// workload starts, as a long-running application's pool has them: the
// first acquire then costs what the others do, not a dial through a proxy.
// An instance that does not answer is dialled again when it is needed.
func (c *Client) warm() {
	for _, name := range sortedKeys(c.topo.Addrs) {
		if name == "sentinel" {
			continue
		}
		cl := newConn(c.topo.Addrs[name], c.opts.RequestTimeout)
		c.conns[name] = cl
		ctx, cancel := context.WithTimeout(context.Background(), 5*c.opts.RequestTimeout)
		_ = cl.Ping(ctx).Err()
		cancel()
	}
	if c.sentinel != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*c.opts.RequestTimeout)
		_ = c.sentinel.Ping(ctx).Err()
		cancel()
	}
}

// Close closes the client's connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, k := range sortedKeys(c.conns) {
		_ = c.conns[k].Close()
	}
	if c.sentinel != nil {
		_ = c.sentinel.Close()
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

// OnRenew registers the watchdog observer (calls are serialised).
func (c *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	var mu sync.Mutex
	c.onRenew = func(l lockapi.Lease, done bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		fn(l, done, err)
	}
}

// conn is the go-redis client of the instance commands go to now, asking the
// Sentinel first when the last command failed.
func (c *Client) conn() (string, *goredis.Client) {
	c.mu.Lock()
	stale := c.stale && c.sentinel != nil
	c.mu.Unlock()
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.RequestTimeout)
		addr, err := c.sentinel.GetMasterAddrByName(ctx, c.topo.Master).Result()
		cancel()
		if err == nil && len(addr) == 2 {
			if name, ok := c.topo.Announced[addr[0]+":"+addr[1]]; ok {
				c.mu.Lock()
				c.primary, c.stale = name, false
				c.mu.Unlock()
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	name := c.primary
	cl := c.conns[name]
	if cl == nil {
		cl = newConn(c.topo.Addrs[name], c.opts.RequestTimeout)
		c.conns[name] = cl
	}
	return name, cl
}

// do runs fn against the primary within timeout; an error makes a
// Sentinel-backed client ask for the primary again.
func (c *Client) do(timeout time.Duration, fn func(ctx context.Context, cl *goredis.Client) error) (string, error) {
	name, cl := c.conn()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := fn(ctx, cl)
	if errors.Is(err, goredis.Nil) {
		return name, err
	}
	if err != nil {
		c.mu.Lock()
		c.stale = true
		c.mu.Unlock()
	}
	return name, classify(name, err)
}

func fenceKey(key string) string { return key + ":fence" }

var (
	acquireFenced = goredis.NewScript(`if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then return redis.call("INCR", KEYS[2]) else return 0 end`)
	releaseLua    = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)
	renewLua      = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`)
)

func (c *Client) budgetClock() time.Duration {
	if c.opts.BudgetClock == simredis.ClockWall {
		return c.env.Wall()
	}
	return c.env.Mono()
}

// Acquire takes the lock, retrying with random back-off until wait is spent
// (on the budget clock), as the simulated client.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	c.seq++
	owner := fmt.Sprintf("%s-%d-%08x", c.env.Name(), c.seq, c.env.Rand().Uint32())
	start := c.budgetClock()
	var unknown, refusal error
	for attempt := 1; ; attempt++ {
		lease, err := c.attempt(key, owner)
		switch {
		case err == nil:
			return lease, nil
		case lockapi.Unknown(err):
			unknown = err
		case !errors.Is(err, lockapi.ErrNotAcquired):
			refusal = err
		}
		elapsed := c.budgetClock() - start
		if elapsed >= wait {
			switch {
			case unknown != nil:
				return lockapi.Lease{}, fmt.Errorf("redis: acquire %s: %d attempts, one uncertain: %w", key, attempt, unknown)
			case refusal != nil:
				return lockapi.Lease{}, fmt.Errorf("redis: acquire %s: %d attempts in %v, last: %v: %w",
					key, attempt, elapsed, refusal, lockapi.ErrNotAcquired)
			}
			return lockapi.Lease{}, fmt.Errorf("redis: acquire %s: held by another client after %d attempts in %v: %w",
				key, attempt, elapsed, lockapi.ErrNotAcquired)
		}
		lockapi.SleepBackoff(c.env, c.opts.BackoffMax, wait-elapsed)
	}
}

// attempt is one SET NX PX (with its token and WAIT, as configured).
func (c *Client) attempt(key, owner string) (lockapi.Lease, error) {
	o := c.opts
	sent := c.env.Mono()
	ttl := o.TTL.Milliseconds()
	var ok bool
	var token int64
	var acked int64 = -1
	granter, err := c.do(o.RequestTimeout, func(ctx context.Context, cl *goredis.Client) error {
		// SET and WAIT go over one connection: WAIT counts the replicas
		// that acknowledged this connection's last write.
		conn := cl.Conn()
		defer conn.Close()
		var err error
		if o.Fencing {
			token, err = acquireFenced.Run(ctx, conn, []string{key, fenceKey(key)}, owner, ttl).Int64()
			ok = err == nil && token > 0
		} else {
			err = conn.Do(ctx, "SET", key, owner, "NX", "PX", ttl).Err()
			ok = err == nil
		}
		if errors.Is(err, goredis.Nil) {
			return nil
		}
		if err != nil || !ok || o.Wait == 0 {
			return err
		}
		wctx, cancel := context.WithTimeout(context.Background(), o.RequestTimeout+o.WaitTimeout)
		defer cancel()
		acked, err = conn.Do(wctx, "WAIT", o.Wait, o.WaitTimeout.Milliseconds()).Int64()
		if err != nil {
			acked = -1 // the WAIT's answer did not come: the grant is not known to be replicated
		}
		return nil
	})
	if err != nil {
		return lockapi.Lease{}, err
	}
	if !ok {
		return lockapi.Lease{}, lockapi.ErrNotAcquired
	}
	lease := lockapi.Lease{Key: key, Owner: owner, Deadline: sent + o.TTL, Detail: "granted by " + granter}
	if o.Fencing {
		lease.Token, lease.HasToken = uint64(token), true
	}
	if o.Wait > 0 {
		if acked < int64(o.Wait) {
			// Not replicated as asked: give the key back and try again.
			_, _ = c.do(o.RequestTimeout, func(ctx context.Context, cl *goredis.Client) error {
				return releaseLua.Run(ctx, cl, []string{key}, owner).Err()
			})
			return lockapi.Lease{}, fmt.Errorf("WAIT %d after SET on %s: %d replica(s) acknowledged: %w",
				o.Wait, granter, max(acked, 0), lockapi.ErrNotAcquired)
		}
		lease.Detail += fmt.Sprintf(", WAIT %d: %d replica(s) acknowledged", o.Wait, acked)
	}
	h := &holds.Hold{Lease: lease, Count: 1}
	c.mu.Lock()
	c.held[key] = h
	c.mu.Unlock()
	if o.Watchdog {
		go c.watchdog(c.watchEnv(), h)
	}
	return lease, nil
}

// watchdog renews h every TTL/3 until it is released or found lost; it ends
// when the run ends (its Env's Sleep does not return then).
func (c *Client) watchdog(w lockapi.Env, h *holds.Hold) {
	o := c.opts
	for {
		w.Sleep(o.TTL / 3)
		c.mu.Lock()
		released, lease := h.Released, h.Lease
		c.mu.Unlock()
		if released {
			return
		}
		if c.onRenew != nil {
			c.onRenew(lease, false, nil)
		}
		sent := w.Mono()
		var n int64
		_, err := c.do(o.RequestTimeout, func(ctx context.Context, cl *goredis.Client) error {
			var err error
			n, err = renewLua.Run(ctx, cl, []string{lease.Key}, lease.Owner, o.TTL.Milliseconds()).Int64()
			return err
		})
		if err == nil && n == 0 {
			err = fmt.Errorf("redis: renew %s: %w", lease.Key, lockapi.ErrNotHeld)
		} else if err != nil {
			err = fmt.Errorf("redis: renew %s: %w", lease.Key, err)
		}
		if err == nil {
			c.mu.Lock()
			h.Lease.Deadline = sent + o.TTL
			lease = h.Lease
			c.mu.Unlock()
		}
		if c.onRenew != nil {
			c.onRenew(lease, true, err)
		}
		if errors.Is(err, lockapi.ErrNotHeld) {
			return
		}
	}
}

// Release gives the lock back with the configured release variant.
func (c *Client) Release(l lockapi.Lease) error {
	c.mu.Lock()
	if h := c.held[l.Key]; h != nil && h.Lease.Owner == l.Owner {
		h.Released = true
		delete(c.held, l.Key)
	}
	c.mu.Unlock()
	t := c.opts.RequestTimeout
	switch c.opts.Release {
	case simredis.ReleaseDel:
		var n int64
		_, err := c.do(t, func(ctx context.Context, cl *goredis.Client) error {
			var err error
			n, err = cl.Del(ctx, l.Key).Result()
			return err
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("redis: DEL %s: no such key: %w", l.Key, lockapi.ErrNotHeld)
		}
		return nil
	case simredis.ReleaseCheckThenDel:
		var v string
		_, err := c.do(t, func(ctx context.Context, cl *goredis.Client) error {
			var err error
			v, err = cl.Get(ctx, l.Key).Result()
			return err
		})
		if err != nil && !errors.Is(err, goredis.Nil) {
			return err
		}
		if v != l.Owner {
			return fmt.Errorf("redis: release %s: value is %q, not ours: %w", l.Key, v, lockapi.ErrNotHeld)
		}
		_, err = c.do(t, func(ctx context.Context, cl *goredis.Client) error { return cl.Del(ctx, l.Key).Err() })
		return err
	default:
		var n int64
		_, err := c.do(t, func(ctx context.Context, cl *goredis.Client) error {
			var err error
			n, err = releaseLua.Run(ctx, cl, []string{l.Key}, l.Owner).Int64()
			return err
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("redis: release %s: %w", l.Key, lockapi.ErrNotHeld)
		}
		return nil
	}
}
