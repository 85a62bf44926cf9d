package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/lockapi"
)

// LockPrefix is the prefix of every lock's keys: the mutex of key k queues
// under LockPrefix + k + "/".
const LockPrefix = "/lock/"

// Client is the live lock client of one client node: clientv3 with a
// concurrency.Session (its lease kept alive by clientv3's lessor) and a
// concurrency.Mutex per acquire. Its connections pass the node's gate
// (internal/netgate), so a pause of the client stops the session's
// keep-alives too. The fencing token is the create revision of the
// holder's key (the revision Mutex.IsOwner compares). The lease deadline the
// client believes in is counted from the request that granted or last
// renewed the lease: a watchdog goroutine of its own renews it every TTL/3
// with KeepAliveOnce (beside clientv3's keep-alive stream) and reports each
// renewal to the RenewObserver.
type Client struct {
	cli   *clientv3.Client
	opts  etcd.Options
	env   lockapi.Env
	fork  func() lockapi.Env
	ctx   context.Context
	close context.CancelFunc
	once  sync.Once

	mu      sync.Mutex
	sess    *session
	held    map[string]*hold
	onRenew func(l lockapi.Lease, done bool, err error)
}

type session struct {
	s        *concurrency.Session
	ttl      time.Duration
	deadline time.Duration // client monotonic time until which the lease is known alive
	done     bool
}

type hold struct {
	lease lockapi.Lease
	key   string
	rev   int64
}

var (
	_ lockapi.Lock          = (*Client)(nil)
	_ lockapi.RenewObserver = (*Client)(nil)
)

// NewClient returns the lock client of env's node, dialling the cluster's
// members through d. fork makes the Env of the watchdog goroutine (the same
// node). Close it when the run ends.
func (c *Cluster) NewClient(env lockapi.Env, fork func() lockapi.Env, d *netgate.Dialer) (*Client, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		})}})
	if err != nil {
		return nil, fmt.Errorf("etcd client %s: %w", env.Name(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{cli: cli, opts: c.opts, env: env, fork: fork, ctx: ctx, close: cancel, held: map[string]*hold{}}, nil
}

// Close ends the client: its session's keep-alives stop (the lease is not
// revoked: it expires), its connections close.
func (l *Client) Close() {
	l.once.Do(func() {
		l.close()
		l.cli.Close()
	})
}

// OnRenew registers the observer of the watchdog's renewals.
func (l *Client) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	var mu sync.Mutex
	l.onRenew = func(le lockapi.Lease, done bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		fn(le, done, err)
	}
}

func (l *Client) budget() (context.Context, context.CancelFunc) {
	return context.WithTimeout(l.ctx, l.opts.RetryBudget)
}

// session returns a live session, granting a new lease when there is none.
func (l *Client) session() (*session, error) {
	l.mu.Lock()
	s := l.sess
	l.mu.Unlock()
	if s != nil && !l.ended(s) {
		return s, nil
	}
	ctx, cancel := l.budget()
	defer cancel()
	ttl := TTLSeconds(l.opts)
	sent := l.env.Mono()
	g, err := l.cli.Grant(ctx, int64(ttl))
	if err != nil {
		return nil, fmt.Errorf("new session: lease grant: %w", err)
	}
	cs, err := concurrency.NewSession(l.cli, concurrency.WithLease(g.ID), concurrency.WithContext(l.ctx))
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	s = &session{s: cs, ttl: time.Duration(g.TTL) * time.Second, deadline: sent + time.Duration(g.TTL)*time.Second}
	l.mu.Lock()
	l.sess = s
	l.mu.Unlock()
	w := l.fork()
	go l.watchdog(w, s)
	return s, nil
}

// ended reports whether s is over: clientv3 closed it (its lease is gone or
// its keep-alive failed), or no renewal succeeded for its TTL.
func (l *Client) ended(s *session) bool {
	select {
	case <-s.s.Done():
		return true
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return s.done || l.env.Mono() >= s.deadline
}

// watchdog renews s every TTL/3 with KeepAliveOnce until it ends. Its Env
// ends the goroutine when the run stops.
func (l *Client) watchdog(w lockapi.Env, s *session) {
	for {
		w.Sleep(s.ttl / 3)
		if l.ended(s) {
			return
		}
		l.mu.Lock()
		var h *hold
		for _, x := range l.held {
			h = x
		}
		l.mu.Unlock()
		if h != nil && l.onRenew != nil {
			l.onRenew(h.lease, false, nil)
		}
		sent := w.Mono()
		ctx, cancel := context.WithTimeout(l.ctx, s.ttl/3)
		r, err := l.cli.KeepAliveOnce(ctx, s.s.Lease())
		cancel()
		l.mu.Lock()
		switch {
		case err == nil && r.TTL > 0:
			s.deadline = max(s.deadline, sent+time.Duration(r.TTL)*time.Second)
		case errors.Is(err, rpctypes.ErrLeaseNotFound) || err == nil:
			s.done = true
			err = fmt.Errorf("etcd: keep-alive %x: lease gone: %w", int64(s.s.Lease()), lockapi.ErrNotHeld)
		default:
			err = fmt.Errorf("etcd: keep-alive %x: %w: %w", int64(s.s.Lease()), err, lockapi.ErrUnknown)
		}
		if h != nil && err == nil && l.held[h.lease.Key] == h {
			h.lease.Deadline = s.deadline
		}
		l.mu.Unlock()
		if h != nil && l.onRenew != nil {
			l.onRenew(h.lease, true, err)
		}
		if l.ended(s) {
			return
		}
	}
}

// Acquire locks key with concurrency.Mutex: TryLock when wait is 0,
// otherwise Lock within wait.
func (l *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	s, err := l.session()
	if err != nil {
		return lockapi.Lease{}, fmt.Errorf("etcd: acquire %s: %w: %w", key, err, lockapi.ErrNotAcquired)
	}
	m := concurrency.NewMutex(s.s, LockPrefix+key)
	var ctx context.Context
	var cancel context.CancelFunc
	if wait == 0 {
		ctx, cancel = l.budget()
		err = m.TryLock(ctx)
	} else {
		ctx, cancel = context.WithTimeout(l.ctx, wait)
		err = m.Lock(ctx)
	}
	cancel()
	rev := ownRevision(m)
	if err != nil {
		if errors.Is(err, concurrency.ErrSessionExpired) {
			l.mu.Lock()
			s.done = true
			l.mu.Unlock()
		}
		return lockapi.Lease{}, fmt.Errorf("etcd: acquire %s: %w", key, classify(err, rev))
	}
	h := &hold{key: m.Key(), rev: rev}
	l.mu.Lock()
	h.lease = lockapi.Lease{Key: key, Owner: h.key, Token: uint64(rev), HasToken: true, Deadline: s.deadline,
		Detail: fmt.Sprintf("key %s, create revision %d (clientv3 Mutex)", h.key, rev)}
	l.held[key] = h
	l.mu.Unlock()
	return h.lease, nil
}

// ownRevision is the create revision Mutex.IsOwner compares: the mutex's
// key's (-1 before its put succeeded or after it was deleted).
func ownRevision(m *concurrency.Mutex) int64 {
	c := m.IsOwner()
	return c.GetCompare().GetCreateRevision()
}

// classify maps a failed Lock: a refusal or a wait that ran out (its key was
// deleted, or is still queued) is certain; a put whose answer never came
// (rev still -1) may have queued a key: unknown.
func classify(err error, rev int64) error {
	switch {
	case errors.Is(err, concurrency.ErrSessionExpired):
		// The simulated client's sentinel too: the same outcome, named alike.
		return fmt.Errorf("%w (%w): %w", err, etcd.ErrSessionExpired, lockapi.ErrNotAcquired)
	case errors.Is(err, concurrency.ErrLocked):
		return fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
	case rev <= 0 && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		return fmt.Errorf("%w: %w", err, lockapi.ErrUnknown)
	}
	return fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
}

// Release deletes the holder's key: by name (unlock=delete, what
// Mutex.Unlock sends) or only if its create revision is still the one
// acquired (unlock=guarded: Txn If IsOwner Then Delete).
func (l *Client) Release(lease lockapi.Lease) error {
	l.mu.Lock()
	h := l.held[lease.Key]
	if h == nil || h.key != lease.Owner || uint64(h.rev) != lease.Token {
		h = &hold{key: lease.Owner, rev: int64(lease.Token)}
	} else {
		delete(l.held, lease.Key)
	}
	l.mu.Unlock()
	ctx, cancel := l.budget()
	defer cancel()
	del := clientv3.OpDelete(h.key)
	t := l.cli.Txn(ctx)
	if l.opts.Unlock == etcd.UnlockGuarded {
		t = t.If(clientv3.Compare(clientv3.CreateRevision(h.key), "=", h.rev))
	}
	r, err := t.Then(del).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("etcd: release %s: %w: %w", lease.Key, err, lockapi.ErrUnknown)
	case !r.Succeeded || r.Responses[0].GetResponseDeleteRange().Deleted == 0:
		return fmt.Errorf("etcd: release %s: key %s (create revision %d) no longer there: %w", lease.Key, h.key, h.rev, lockapi.ErrNotHeld)
	}
	return nil
}

// ResourcePrefix is the prefix of the keys that hold a resource kept in
// etcd (resource=etcd), as in the simulated etcd.
const ResourcePrefix = etcd.ResourcePrefix

// GuardedStore is the protected data kept in etcd itself (resource=etcd):
// each cell is the key resource/<name>, read with Get and written only by
// Txn(If IsOwner Then Put) — the create revision of the lock key held with
// the write's token. A write by a client whose lock key is gone (its lease
// expired) fails: safe by construction.
type GuardedStore struct{ l *Client }

var _ lockapi.Storage = GuardedStore{}

// Guarded returns the resource client that writes under l's locks.
func (l *Client) Guarded() GuardedStore { return GuardedStore{l} }

// Read returns the cell's value (0 if never written), with the reads
// option's consistency.
func (g GuardedStore) Read(key string, token uint64) (int64, error) {
	ctx, cancel := g.l.budget()
	defer cancel()
	var opts []clientv3.OpOption
	if g.l.opts.Reads == etcd.ReadsSerializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	r, err := g.l.cli.Get(ctx, ResourcePrefix+key, opts...)
	if err != nil {
		return 0, fmt.Errorf("etcd: read %s: %w: %w", key, err, lockapi.ErrUnknown)
	}
	if len(r.Kvs) == 0 {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(r.Kvs[0].Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd: read %s: value %q: %w", key, r.Kvs[0].Value, err)
	}
	return v, nil
}

// Write puts value if the lock held with token is still ours.
func (g GuardedStore) Write(key string, value int64, token uint64) error {
	g.l.mu.Lock()
	var h *hold
	for _, x := range g.l.held {
		if uint64(x.rev) == token {
			h = x
		}
	}
	g.l.mu.Unlock()
	if h == nil {
		return fmt.Errorf("etcd: write %s: no lock held with token %d: %w", key, token, lockapi.ErrRejected)
	}
	ctx, cancel := g.l.budget()
	defer cancel()
	r, err := g.l.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(h.key), "=", h.rev)).
		Then(clientv3.OpPut(ResourcePrefix+key, strconv.FormatInt(value, 10))).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("etcd: write %s: %w: %w", key, err, lockapi.ErrUnknown)
	case !r.Succeeded:
		return fmt.Errorf("etcd: write %s: lock key %s is no longer create revision %d: %w", key, h.key, h.rev, lockapi.ErrRejected)
	}
	return nil
}
