package redlocklive

import (
	"context"
	"errors"
	"fmt"
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
	}
	return redislive.CheckExpiryClock("redlock", o.ExpiryClock)
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

// Client is the live Redlock client of one client node: the recipe of
// backends/redlock (redlock.Client, written once) over redsync, one TryLock
// per round.
type Client struct {
	*redlock.Client
	t *transport
}

var _ lockapi.Lock = (*Client)(nil)

// NewClient returns a live Redlock client for the client node env.Name().
func NewClient(env lockapi.Env, t Topology, o redlock.Options) *Client {
	tr := &transport{env: env, topo: t, opts: o, rec: &recorder{}}
	var pools []rsredis.Pool
	for i, name := range t.Instances {
		cl := redislive.NewConn(t.Addrs[name], o.RequestTimeout)
		tr.conns = append(tr.conns, cl)
		pools = append(pools, recordingPool{inner: rsgoredis.NewPool(cl), node: i, rec: tr.rec})
		// A warm connection, as a long-running application's pool has (see redislive.NewClient).
		ctx, cancel := context.WithTimeout(context.Background(), 5*o.RequestTimeout)
		_ = cl.Ping(ctx).Err()
		cancel()
	}
	tr.rs = redsync.New(pools...)
	if t.Fence != "" {
		tr.fence = redislive.NewConn(t.Fence, o.RequestTimeout)
	}
	return &Client{Client: redlock.New(env, tr, o), t: tr}
}

// Close closes the client's connections.
func (c *Client) Close() {
	for _, cl := range c.t.conns {
		_ = cl.Close()
	}
	if c.t.fence != nil {
		_ = c.t.fence.Close()
	}
}

// AnotherValue is the Holder of a live release's answer when the key holds
// another value: redsync's compare-and-delete answers 0 without naming it,
// so "another holds a majority" counts every other value together.
const AnotherValue = "another value (redsync does not name it)"

// transport is the live redlock.Transport: a round is redsync's TryLock
// (set everywhere at once, its own validity check, its own release after a
// failed round), a release redsync's Unlock; a recording wrapper around each
// instance's pool says what each instance answered.
type transport struct {
	env   lockapi.Env
	topo  Topology
	opts  redlock.Options
	rs    *redsync.Redsync
	conns []*goredis.Client
	fence *goredis.Client
	rec   *recorder

	round   redlock.Round
	answers []redlock.Answer
}

var _ redlock.Transport = (*transport)(nil)

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

func (t *transport) mutex(key string, opts ...redsync.Option) *redsync.Mutex {
	o := t.opts
	return t.rs.NewMutex(key, append([]redsync.Option{redsync.WithExpiry(o.TTL), redsync.WithTries(1),
		redsync.WithDriftFactor(o.DriftFactor), redsync.WithTimeoutFactor(float64(o.RequestTimeout) / float64(o.TTL))}, opts...)...)
}

// Instances names the instances.
func (t *transport) Instances() []string { return t.topo.Instances }

// Round is one redsync TryLock of value (WithGenValueFunc), then, with
// token=external, an INCR on the sequencer (after redsync's validity check:
// redsync cannot take it inside its round). A round redsync refused with a
// majority granted is one with no validity left.
func (t *transport) Round(key, value string) *redlock.Round {
	r := &t.round
	*r = redlock.Round{Outs: r.Outs[:0]}
	t.rec.reset()
	m := t.mutex(key, redsync.WithGenValueFunc(func() (string, error) { return value, nil }))
	start := t.env.Mono()
	lockErr := m.TryLockContext(context.Background())
	r.Elapsed = t.env.Mono() - start
	t.rec.mu.Lock()
	for i, name := range t.topo.Instances {
		o, ok := t.rec.setnx[i]
		var out redlock.Outcome
		switch {
		case !ok:
			out = redlock.NotAsked
		case o.err != nil && redislive.Refused(redislive.Classify(name, o.err)):
			out = redlock.Refused
		case o.err != nil:
			out = redlock.TimedOut
		case o.n == 1:
			out = redlock.Granted
			r.Granted++
		default:
			out = redlock.Held
		}
		r.Outs = append(r.Outs, out)
	}
	t.rec.mu.Unlock()
	if lockErr != nil {
		r.Failure = redlock.FailQuorum
		if r.Granted >= t.opts.Quorum() {
			r.Failure = redlock.FailValidity
		}
		r.Maybe = t.left(r.Outs)
		return r
	}
	if t.opts.Token == redlock.TokenExternal {
		ctx, cancel := context.WithTimeout(context.Background(), t.opts.RequestTimeout)
		tok, err := t.fence.Incr(ctx, key+":fence").Result()
		cancel()
		if err != nil {
			t.unlock(key, value)
			r.Failure = redlock.FailFence
			r.FenceErr = fmt.Errorf("external token from %s: %w", redlock.FenceName, redislive.Classify(redlock.FenceName, err))
			r.Maybe = t.left(r.Outs)
			return r
		}
		r.Token = uint64(tok)
	}
	r.Validity = time.Until(m.Until())
	return r
}

// left reports whether the value of a failed round may still be on a
// quorum: the instances whose set granted it or did not answer, and whose
// release (redsync's, recorded) did not answer or was not sent, make one.
func (t *transport) left(outs []redlock.Outcome) bool {
	t.rec.mu.Lock()
	defer t.rec.mu.Unlock()
	n := 0
	for i, name := range t.topo.Instances {
		if outs[i] != redlock.Granted && outs[i] != redlock.TimedOut {
			continue
		}
		if o, ok := t.rec.released[i]; !ok || (o.err != nil && !redislive.Refused(redislive.Classify(name, o.err))) {
			n++
		}
	}
	return n >= t.opts.Quorum()
}

// unlock is redsync's Unlock of value, recorded.
func (t *transport) unlock(key, value string) {
	ctx, cancel := context.WithTimeout(context.Background(), t.opts.RequestTimeout)
	defer cancel()
	t.rec.reset()
	_, _ = t.mutex(key, redsync.WithValue(value)).UnlockContext(ctx)
}

// ReleaseAll is redsync's Unlock of value; each instance's answer is what the
// recording wrapper saw.
func (t *transport) ReleaseAll(key, value string) []redlock.Answer {
	t.unlock(key, value)
	t.answers = t.answers[:0]
	t.rec.mu.Lock()
	defer t.rec.mu.Unlock()
	for i, name := range t.topo.Instances {
		var a redlock.Answer
		o, ok := t.rec.released[i]
		switch {
		case !ok:
		case o.err != nil && errors.Is(o.err, redsync.ErrLockAlreadyExpired):
		case o.err != nil:
			a.TimedOut = !redislive.Refused(redislive.Classify(name, o.err))
		case o.n == 1:
			a.Deleted = true
		case o.n == 0:
			a.Holder = AnotherValue
		}
		t.answers = append(t.answers, a)
	}
	return t.answers
}
