package redlocklive

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	rsgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"

	simredis "github.com/locklab/locklab/backends/redis"
	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/backends/redlock"
	"github.com/locklab/locklab/lockapi"
)

// RedsyncVersion is the redsync version the live Redlock client runs.
const RedsyncVersion = "v4.18.0"

// CheckOptions refuses the options of the simulated redlock system
// that redsync or the real servers cannot honour.
func CheckOptions(o redlock.Options) error {
	switch {
	case o.ElapsedClock != simredis.ClockMono:
		return fmt.Errorf("redlock option elapsed-clock=%s has no live form: redsync measures elapsed with time.Now's monotonic reading", o.ElapsedClock)
	case o.Fanout != redlock.FanoutParallel:
		return fmt.Errorf("redlock option fanout=%s has no live form: redsync asks every instance at once (fanout=parallel)", o.Fanout)
	case o.Token == redlock.TokenIncr:
		return fmt.Errorf("redlock option token=incr has no live form: redsync sends a plain SET NX PX, with no INCR beside it (token=value or token=external)")
	case o.ExpiryClock != simredis.ClockWall:
		return fmt.Errorf("redlock option expiry-clock=%s has no live form: redis-server expires keys on its wall clock (keyIsExpired compares with mstime)", o.ExpiryClock)
	}
	return nil
}

// Topology is where a live Redlock client finds its instances.
type Topology struct {
	// Instances are the instance names, in the order of redsync's pools.
	Instances []string
	// Addrs is, per instance name, the address this client dials (its own
	// proxy).
	Addrs map[string]string
	// Fence is the address of the external sequencer (token=external).
	Fence string
}

// Client is the live Redlock client of one client node: redsync, one try
// per attempt, with locklab's retry loop.
type Client struct {
	env   lockapi.Env
	topo  Topology
	opts  redlock.Options
	rs    *redsync.Redsync
	conns []*goredis.Client
	fence *goredis.Client
	rec   *recorder
}

var _ lockapi.Lock = (*Client)(nil)

// NewClient returns a live Redlock client for the client node env.Name().
func NewClient(env lockapi.Env, t Topology, o redlock.Options) *Client {
	r := &Client{env: env, topo: t, opts: o, rec: &recorder{}}
	var pools []rsredis.Pool
	for i, name := range t.Instances {
		cl := redislive.NewConn(t.Addrs[name], o.RequestTimeout)
		r.conns = append(r.conns, cl)
		pools = append(pools, recordingPool{inner: rsgoredis.NewPool(cl), node: i, rec: r.rec})
		// A warm connection, as a long-running application's pool has (see redislive.NewClient).
		ctx, cancel := context.WithTimeout(context.Background(), 5*o.RequestTimeout)
		_ = cl.Ping(ctx).Err()
		cancel()
	}
	r.rs = redsync.New(pools...)
	if t.Fence != "" {
		r.fence = redislive.NewConn(t.Fence, o.RequestTimeout)
	}
	return r
}

// Close closes the client's connections.
func (r *Client) Close() {
	for _, c := range r.conns {
		_ = c.Close()
	}
	if r.fence != nil {
		_ = r.fence.Close()
	}
}

// recorder keeps what each instance answered in the current round.
type recorder struct {
	mu       sync.Mutex
	setnx    map[int]outcome
	released map[int]outcome
}

type outcome struct {
	n   int64 // SETNX: 1 granted, 0 held; release: 1 deleted, 0 another value, -1 no key
	err error
}

func (rc *recorder) reset() {
	rc.mu.Lock()
	rc.setnx, rc.released = map[int]outcome{}, map[int]outcome{}
	rc.mu.Unlock()
}

type recordingPool struct {
	inner rsredis.Pool
	node  int
	rec   *recorder
}

func (p recordingPool) Get(ctx context.Context) (rsredis.Conn, error) {
	c, err := p.inner.Get(ctx)
	if err != nil {
		return nil, err
	}
	return recordingConn{Conn: c, p: p}, nil
}

type recordingConn struct {
	rsredis.Conn
	p recordingPool
}

func (c recordingConn) SetNX(name, value string, expiry time.Duration) (bool, error) {
	ok, err := c.Conn.SetNX(name, value, expiry)
	o := outcome{err: err}
	if ok {
		o.n = 1
	}
	c.p.rec.mu.Lock()
	c.p.rec.setnx[c.p.node] = o
	c.p.rec.mu.Unlock()
	return ok, err
}

func (c recordingConn) Eval(script *rsredis.Script, keysAndArgs ...any) (any, error) {
	v, err := c.Conn.Eval(script, keysAndArgs...)
	n, _ := v.(int64)
	c.p.rec.mu.Lock()
	c.p.rec.released[c.p.node] = outcome{n: n, err: err}
	c.p.rec.mu.Unlock()
	return v, err
}

func (r *Client) mutex(key string, opts ...redsync.Option) *redsync.Mutex {
	o := r.opts
	return r.rs.NewMutex(key, append([]redsync.Option{redsync.WithExpiry(o.TTL), redsync.WithTries(1),
		redsync.WithDriftFactor(o.DriftFactor), redsync.WithTimeoutFactor(float64(o.RequestTimeout) / float64(o.TTL))}, opts...)...)
}

// Acquire runs Redlock attempts (redsync TryLock) with random back-off until
// wait is spent on the client's monotonic clock.
func (r *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	start := r.env.Mono()
	for attempt := 1; ; attempt++ {
		lease, err := r.attempt(key)
		if err == nil {
			return lease, nil
		}
		elapsed := r.env.Mono() - start
		if elapsed >= wait {
			return lockapi.Lease{}, fmt.Errorf("redlock: acquire %s: %d attempts in %v, last: %v: %w",
				key, attempt, elapsed, err, lockapi.ErrNotAcquired)
		}
		lockapi.SleepBackoff(r.env, r.opts.BackoffMax, wait-elapsed)
	}
}

func (r *Client) attempt(key string) (lockapi.Lease, error) {
	v := r.env.Rand().Uint64()
	value := strconv.FormatUint(v, 10)
	r.rec.reset()
	m := r.mutex(key, redsync.WithGenValueFunc(func() (string, error) { return value, nil }))
	lockErr := m.TryLockContext(context.Background())
	r.rec.mu.Lock()
	var granted, others []string
	for i, name := range r.topo.Instances {
		o, ok := r.rec.setnx[i]
		switch {
		case !ok:
			others = append(others, name+" not asked")
		case o.err != nil && redislive.Refused(redislive.Classify(name, o.err)):
			others = append(others, name+" refused")
		case o.err != nil:
			others = append(others, name+" timed out")
		case o.n == 1:
			granted = append(granted, name)
		default:
			others = append(others, name+" held")
		}
	}
	r.rec.mu.Unlock()
	n, q := len(r.topo.Instances), r.opts.Instances/2+1
	gr := strings.Join(granted, ",")
	if gr == "" {
		gr = "none"
	}
	votes := fmt.Sprintf("%s (%d/%d)", gr, len(granted), n)
	if lockErr != nil {
		if len(granted) >= q {
			return lockapi.Lease{}, fmt.Errorf("granted by %s but no validity left (redsync: %v)", votes, lockErr)
		}
		return lockapi.Lease{}, fmt.Errorf("granted by %s, quorum %d; %s", votes, q, strings.Join(others, ", "))
	}
	validity := time.Until(m.Until())
	lease := lockapi.Lease{Key: key, Owner: value, Token: v, HasToken: true, Deadline: r.env.Mono() + validity}
	if r.opts.Token == redlock.TokenExternal {
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.RequestTimeout)
		tok, err := r.fence.Incr(ctx, key+":fence").Result()
		cancel()
		if err != nil {
			r.releaseAll(key, value)
			return lockapi.Lease{}, fmt.Errorf("external token from %s: %w", redlock.FenceName, redislive.Classify(redlock.FenceName, err))
		}
		lease.Token = uint64(tok)
	}
	lease.Detail = fmt.Sprintf("granted by %s, validity %v", votes, validity.Round(time.Millisecond))
	if len(others) > 0 {
		lease.Detail += "; " + strings.Join(others, ", ")
	}
	return lease, nil
}

func (r *Client) releaseAll(key, value string) {
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.RequestTimeout)
	defer cancel()
	r.rec.reset()
	_, _ = r.mutex(key, redsync.WithValue(value)).UnlockContext(ctx)
}

// Release deletes the key on every instance where it still has our value
// (redsync Unlock) and reports, as the simulated client does, whether the
// lock was ours to release; see backends/redlock.Client.Release. Redsync's
// compare-and-delete answers 0 for "another value" without naming it, so
// "another holds a majority" counts every other value together.
func (r *Client) Release(l lockapi.Lease) error {
	valid := r.env.Mono() < l.Deadline
	r.releaseAll(l.Key, l.Owner)
	released, timedOut, held := 0, 0, 0
	r.rec.mu.Lock()
	for i := range r.topo.Instances {
		o, ok := r.rec.released[i]
		switch {
		case !ok:
		case o.err != nil && errors.Is(o.err, redsync.ErrLockAlreadyExpired):
		case o.err != nil:
			timedOut++
		case o.n == 1:
			released++
		case o.n == 0:
			held++
		}
	}
	r.rec.mu.Unlock()
	q := r.opts.Instances/2 + 1
	switch {
	case released >= q:
		return nil
	case released+timedOut >= q:
		return fmt.Errorf("redlock: release %s: deleted on %d instance(s), %d timed out, quorum %d: %w",
			l.Key, released, timedOut, q, lockapi.ErrUnknown)
	case !valid:
		return fmt.Errorf("redlock: release %s: our value was on %d instance(s) only, quorum %d: the lease had run out: %w",
			l.Key, released, q, lockapi.ErrNotHeld)
	case held >= q:
		return fmt.Errorf("redlock: release %s: our value was on %d instance(s), other values on %d, quorum %d: the lock is another's: %w",
			l.Key, released, held, q, lockapi.ErrNotHeld)
	case released > 0:
		return nil
	}
	return fmt.Errorf("redlock: release %s: our value was on 0 instance(s) only, quorum %d: already released, or lost by the instances: %w",
		l.Key, q, lockapi.ErrNotHeld)
}
