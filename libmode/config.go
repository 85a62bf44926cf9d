package libmode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/storage"
)

// Lock is the library under test as the workload uses it: the user's own
// code names the library's acquire and release.
type Lock interface {
	// Acquire takes the lock key. An error wrapping lockapi.ErrNotAcquired
	// means the lock was certainly not granted (the history records a
	// fail); any other error is an unknown outcome (info).
	Acquire(ctx context.Context, key string) (Lease, error)
	// Release gives up l. An error wrapping lockapi.ErrNotHeld means it was
	// certainly no longer held (fail); any other error is unknown (info).
	Release(ctx context.Context, l Lease) error
}

// Lease is a grant as the library returned it.
type Lease struct {
	// Owner is the value the library stored in the lock (redislock's
	// Token, redsync's Value): it ties the grant to the servers' record.
	Owner string
	// Token is a fencing token and HasToken says there is one (the user's
	// code got it, say, from an INCR after the grant).
	Token    uint64
	HasToken bool
	// Valid is how long the library promises the lease, counted from the
	// moment Acquire was called (redislock: the TTL); Until, when not zero,
	// is the end of the promise on the client's clock (redsync's Until)
	// and wins over Valid. Zero both: a lock without a known deadline.
	Valid time.Duration
	Until time.Time
	// Handle is the library's own lock object (a *redislock.Lock, a
	// *redsync.Mutex), for Release.
	Handle any
}

// Client is what the user's code is given to build its lock for one
// client of the run: its name, its connections to the instances, and a
// context that ends with the run.
type Client struct {
	w    *world
	name string
	// Ctx ends when the run does.
	Ctx context.Context
}

// Name is the client's name (c1, c2, ...).
func (c *Client) Name() string { return c.name }

// Addrs are the instances' addresses, in order ("10.0.0.1:6379", ...): IP
// addresses, so that no client resolves a name (a DNS lookup would leave
// the bubble). Dial also accepts an instance's name ("redis-1").
func (c *Client) Addrs() []string { return c.w.addrs() }

// Dial opens a connection to the instance at address a over the
// in-memory network: go-redis's Options.Dialer.
func (c *Client) Dial(ctx context.Context, network, a string) (net.Conn, error) {
	return c.w.dial(ctx, c.name, a)
}

// RedisOptions are go-redis's options for instance i (0-based), with
// go-redis's defaults and the in-memory dialer: pass them to
// redis.NewClient unchanged to test a library with its default options.
func (c *Client) RedisOptions(i int) *redis.Options {
	return &redis.Options{Addr: c.w.servers[i].addr, Dialer: c.Dial}
}

// Config is one run of a library.
type Config struct {
	// Seed decides the latencies (and, through testing/cryptotest,
	// crypto/rand, which lock libraries draw their values from) and the
	// workload's think times. Default 1.
	Seed uint64
	// Instances is the number of simulated Redis instances. Default 1.
	Instances int
	// Clients is the number of clients. Default 3.
	Clients int
	// Duration is the simulated time the workload runs. Default 60 s.
	Duration time.Duration
	// NewLock builds the lock of one client (runs inside the bubble).
	NewLock func(c *Client) (Lock, error)
	// Close, when set, is called for each client's lock after the run (to
	// close its go-redis clients).
	Close func(l Lock) error
	// Key is the lock key; it is also the storage cell it protects. Default "k".
	Key string
	// LockKeys says which keys of the instances hold locks (for the
	// servers' record). Default: the key Key alone.
	LockKeys func(key string) bool
	// Storage is storage.Unfenced (default) or storage.Fenced.
	Storage storage.Mode
	// FenceReads makes fenced storage check and raise the token on reads
	// too (storage.Options.FenceReads). Without it a stale holder's write
	// that lands between the new holder's read and its write is accepted
	// (its token is still the highest written), and an update is lost.
	FenceReads bool
	// Hold is the time between the read and the write of a critical
	// section; Think the mean pause between rounds (uniform in [0, 2*Think]).
	// Defaults 100 ms and 200 ms.
	Hold, Think time.Duration
	// Latency is each message's delay, plus up to Jitter drawn from the
	// seed. Defaults 500 µs and 200 µs.
	Latency, Jitter time.Duration
	// Faults are the faults to inject.
	Faults []Fault
	// StuckAfter is how long (real time) the run may make no progress
	// before it is reported as blocked outside the bubble. Default 5 s.
	StuckAfter time.Duration
	// Drain is how long (virtual time) the clients get to finish after the
	// run ends before the run reports them as stuck. Default 30 s.
	Drain time.Duration
	// Prepare, when set, is called with the run's seed before each run,
	// outside the bubble: to seed a global source a library draws from
	// (redsync's retry delays come from math/rand's), so that every run of
	// a search, a shrink or a replay is its seed's alone.
	Prepare func(seed uint64)
}

func (cfg *Config) isLockKey(k string) bool {
	if cfg.LockKeys != nil {
		return cfg.LockKeys(k)
	}
	return k == cfg.Key
}

// withDefaults fills the defaults and checks cfg.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Instances == 0 {
		cfg.Instances = 1
	}
	if cfg.Clients == 0 {
		cfg.Clients = 3
	}
	if cfg.Duration == 0 {
		cfg.Duration = 60 * time.Second
	}
	if cfg.Key == "" {
		cfg.Key = "k"
	}
	if cfg.Storage == "" {
		cfg.Storage = storage.Unfenced
	}
	if cfg.Hold == 0 {
		cfg.Hold = 100 * time.Millisecond
	}
	if cfg.Think == 0 {
		cfg.Think = 200 * time.Millisecond
	}
	if cfg.Latency == 0 {
		cfg.Latency = 500 * time.Microsecond
	}
	if cfg.Jitter == 0 {
		cfg.Jitter = 200 * time.Microsecond
	}
	if cfg.StuckAfter == 0 {
		cfg.StuckAfter = 5 * time.Second
	}
	if cfg.Drain == 0 {
		cfg.Drain = 30 * time.Second
	}
	var errs []error
	if cfg.NewLock == nil {
		errs = append(errs, errors.New("libmode: Config.NewLock is not set: name the library's acquire and release"))
	}
	if cfg.Instances < 1 || cfg.Clients < 1 || cfg.Duration < 0 {
		errs = append(errs, fmt.Errorf("libmode: %d instances, %d clients, duration %v: need at least one of each and a positive duration",
			cfg.Instances, cfg.Clients, cfg.Duration))
	}
	if cfg.Clients >= laneSpan {
		errs = append(errs, fmt.Errorf("libmode: %d clients: at most %d", cfg.Clients, laneSpan-1))
	}
	if cfg.FenceReads && cfg.Storage != storage.Fenced {
		errs = append(errs, errors.New("libmode: FenceReads: only a fenced storage fences reads"))
	}
	if cfg.Storage != storage.Unfenced && cfg.Storage != storage.Fenced {
		errs = append(errs, fmt.Errorf("libmode: storage mode %q is not available in library mode (unfenced or fenced)", cfg.Storage))
	}
	for i, f := range cfg.Faults {
		if err := f.check(&cfg); err != nil {
			errs = append(errs, fmt.Errorf("libmode: fault %d (%s): %w", i, f, err))
		}
	}
	return cfg, errors.Join(errs...)
}

// outcome classifies a lock call's error: nil ok, a certain refusal
// (lockapi.ErrNotAcquired, lockapi.ErrNotHeld) fail, anything else info.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, lockapi.ErrNotAcquired), errors.Is(err, lockapi.ErrNotHeld):
		return "fail"
	}
	return "info"
}
