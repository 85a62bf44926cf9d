package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
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
// under LockPrefix + k + "/", as clientv3's concurrency.NewMutex(s,
// LockPrefix+k) would.
const LockPrefix = "/lock/"

// Client is the live lock client of one client node: the simulated etcd's
// lock recipe (etcd.Lock: the session, the queue mutex as clientv3's
// concurrency.Mutex writes it, the keep-alive watchdog, the releases and the
// guarded write) over clientv3. Its connections pass the node's gate
// (internal/netgate), so a pause of the client stops the session's
// keep-alives too. The fencing token is the create revision of the holder's
// key (the revision Mutex.IsOwner compares).
type Client struct {
	*etcd.Lock
	tr *transport
}

// NewClient returns the lock client of env's node, dialling the cluster's
// members through d. fork makes the Env of a background goroutine (the same
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
	tr := &transport{cli: cli, opts: c.opts, fork: fork, ctx: ctx, close: cancel, sessions: map[int64]*session{}}
	return &Client{Lock: etcd.NewLock(env, tr, c.opts, LockPrefix), tr: tr}, nil
}

// Close ends the client: its sessions' keep-alives stop (the leases are not
// revoked: they expire), calls blocked in clientv3 return, its connections
// close.
func (l *Client) Close() {
	l.tr.once.Do(func() {
		l.tr.close()
		l.tr.cli.Close()
	})
}

// Guarded returns the resource client that writes under l's locks
// (resource=etcd: Txn(If IsOwner Then Put), as simulated).
func (l *Client) Guarded() *etcd.GuardedStore { return etcd.NewGuardedStore(l.Lock) }

// transport is etcd.Transport over clientv3. What clientv3 does on its own
// stays its own: gRPC's retries and balancing across the members within a
// call's context (the retry budget), and each lease's concurrency.Session,
// whose keep-alive stream runs beside the recipe's watchdog.
type transport struct {
	cli   *clientv3.Client
	opts  etcd.Options
	fork  func() lockapi.Env
	ctx   context.Context
	close context.CancelFunc
	once  sync.Once

	mu       sync.Mutex
	sessions map[int64]*session
}

// session is a lease granted through the transport: clientv3's session that
// keeps it alive, and the TTL it was granted.
type session struct {
	s   *concurrency.Session
	ttl time.Duration
}

var _ etcd.Transport = (*transport)(nil)

func (t *transport) budget() (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.ctx, t.opts.RetryBudget)
}

// outcome maps a failed call: a lease that does not exist is a certain
// refusal (etcd.ErrLeaseGone); the server's "no leader" and a read that
// failed changed nothing (etcd.ErrNoLeader); any other failure of a
// linearizable request may have been applied (lockapi.ErrUnknown).
func outcome(what string, err error, serializable bool) error {
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return fmt.Errorf("etcd: %s: %w", what, etcd.ErrLeaseGone)
	case errors.Is(err, rpctypes.ErrNoLeader) || serializable:
		return fmt.Errorf("etcd: %s: %w: %w", what, err, etcd.ErrNoLeader)
	}
	return fmt.Errorf("etcd: %s: %w: %w", what, err, lockapi.ErrUnknown)
}

// Txn sends t as one clientv3 Txn (a lone Get as a Get, serializable when
// asked) and translates its answer.
func (t *transport) Txn(_ lockapi.Env, x etcd.Txn, serializable bool) (etcd.Response, error) {
	ctx, cancel := t.budget()
	defer cancel()
	if serializable && len(x.If) == 0 && len(x.Then) == 1 && x.Then[0].Type == etcd.OpGet {
		op := x.Then[0]
		r, err := t.cli.Get(ctx, op.Key, append(getOptions(op), clientv3.WithSerializable())...)
		if err != nil {
			return etcd.Response{}, outcome(describe(x), err, true)
		}
		return etcd.Response{Result: etcd.Result{Revision: r.Header.Revision, Succeeded: true,
			Results: []etcd.OpResult{rangeResult(r.Kvs)}}}, nil
	}
	cmps := make([]clientv3.Cmp, 0, len(x.If))
	for _, c := range x.If {
		cmp, err := compare(c)
		if err != nil {
			return etcd.Response{}, fmt.Errorf("etcd: %s: %w: %w", describe(x), err, etcd.ErrNoLeader)
		}
		cmps = append(cmps, cmp)
	}
	r, err := t.cli.Txn(ctx).If(cmps...).Then(ops(x.Then)...).Else(ops(x.Else)...).Commit()
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return etcd.Response{Result: etcd.Result{Err: etcd.ErrLeaseNotFound}}, outcome(describe(x), err, false)
	}
	if err != nil {
		return etcd.Response{}, outcome(describe(x), err, false)
	}
	res := etcd.Result{Revision: r.Header.Revision, Succeeded: r.Succeeded}
	for _, op := range r.Responses {
		var o etcd.OpResult
		if g := op.GetResponseRange(); g != nil {
			o = rangeResult(g.Kvs)
		}
		if d := op.GetResponseDeleteRange(); d != nil {
			o.Deleted = d.Deleted
		}
		res.Results = append(res.Results, o)
	}
	return etcd.Response{Result: res}, nil
}

// describe names a transaction in an error, as the simulated client does.
func describe(x etcd.Txn) string {
	if len(x.If) == 0 && len(x.Then) == 1 {
		return fmt.Sprintf("%s %s", x.Then[0].Type, x.Then[0].Key)
	}
	return "txn"
}

func compare(c etcd.Compare) (clientv3.Cmp, error) {
	switch c.Target {
	case etcd.TargetCreate:
		return clientv3.Compare(clientv3.CreateRevision(c.Key), c.Result, c.Int), nil
	case etcd.TargetMod:
		return clientv3.Compare(clientv3.ModRevision(c.Key), c.Result, c.Int), nil
	case etcd.TargetVersion:
		return clientv3.Compare(clientv3.Version(c.Key), c.Result, c.Int), nil
	case etcd.TargetValue:
		return clientv3.Compare(clientv3.Value(c.Key), c.Result, c.Value), nil
	}
	return clientv3.Cmp{}, fmt.Errorf("compare target %q not built live", c.Target)
}

func ops(in []etcd.Op) []clientv3.Op {
	out := make([]clientv3.Op, 0, len(in))
	for _, op := range in {
		switch op.Type {
		case etcd.OpPut:
			var opts []clientv3.OpOption
			if op.Lease != 0 {
				opts = append(opts, clientv3.WithLease(clientv3.LeaseID(op.Lease)))
			}
			out = append(out, clientv3.OpPut(op.Key, op.Value, opts...))
		case etcd.OpGet:
			out = append(out, clientv3.OpGet(op.Key, getOptions(op)...))
		case etcd.OpDelete:
			var opts []clientv3.OpOption
			if op.Prefix {
				opts = append(opts, clientv3.WithPrefix())
			}
			out = append(out, clientv3.OpDelete(op.Key, opts...))
		}
	}
	return out
}

// getOptions are clientv3's options for a Get shaped like op: the orders are
// clientv3's WithFirstCreate and WithLastCreate (a prefix, sorted, limit 1).
func getOptions(op etcd.Op) []clientv3.OpOption {
	var opts []clientv3.OpOption
	switch op.Order {
	case etcd.OrderFirstCreate:
		opts = append(opts, clientv3.WithFirstCreate()...)
	case etcd.OrderLastCreate:
		opts = append(opts, clientv3.WithLastCreate()...)
	default:
		if op.Prefix {
			opts = append(opts, clientv3.WithPrefix())
		}
	}
	if op.Limit > 0 {
		opts = append(opts, clientv3.WithLimit(int64(op.Limit)))
	}
	if op.MaxCreateRev > 0 {
		opts = append(opts, clientv3.WithMaxCreateRev(op.MaxCreateRev))
	}
	return opts
}

func rangeResult(kvs []*mvccpb.KeyValue) etcd.OpResult {
	var r etcd.OpResult
	for _, kv := range kvs {
		r.Kvs = append(r.Kvs, etcd.KV{Key: string(kv.Key), Value: string(kv.Value), CreateRev: kv.CreateRevision,
			ModRev: kv.ModRevision, Version: kv.Version, Lease: kv.Lease})
	}
	return r
}

// Grant grants a lease of ttl in whole seconds (rounded up, at least the
// server's minimum: TTLSeconds) and starts clientv3's concurrency.Session on
// it, whose keep-alive stream renews it beside the recipe's watchdog.
func (t *transport) Grant(_ lockapi.Env, ttl time.Duration) (etcd.Result, error) {
	ctx, cancel := t.budget()
	defer cancel()
	g, err := t.cli.Grant(ctx, int64(ttlSeconds(ttl, t.opts.MinTTL())))
	if err != nil {
		return etcd.Result{}, outcome("lease grant", err, false)
	}
	cs, err := concurrency.NewSession(t.cli, concurrency.WithLease(g.ID), concurrency.WithContext(t.ctx))
	if err != nil {
		return etcd.Result{}, fmt.Errorf("etcd: session of lease %x: %w", int64(g.ID), err)
	}
	s := &session{s: cs, ttl: time.Duration(g.TTL) * time.Second}
	t.mu.Lock()
	t.sessions[int64(g.ID)] = s
	t.mu.Unlock()
	return etcd.Result{Lease: int64(g.ID), TTL: s.ttl}, nil
}

// KeepAliveOnce renews lease, waiting at most a third of its TTL (the
// watchdog's period).
func (t *transport) KeepAliveOnce(_ lockapi.Env, lease int64) (time.Duration, error) {
	within := t.opts.RetryBudget
	if s := t.session(lease); s != nil {
		within = s.ttl / 3
	}
	ctx, cancel := context.WithTimeout(t.ctx, within)
	defer cancel()
	r, err := t.cli.KeepAliveOnce(ctx, clientv3.LeaseID(lease))
	switch {
	case errors.Is(err, rpctypes.ErrLeaseNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("etcd: keep-alive %x: %w: %w", lease, err, lockapi.ErrUnknown)
	case r.TTL <= 0:
		return 0, nil
	}
	return time.Duration(r.TTL) * time.Second, nil
}

// WaitDelete watches key from rev (clientv3's waitDelete) until a DELETE
// comes or env's clock reaches until; a watch that ends early (its stream
// failed) is registered again, after a pause of a tenth of the retry budget,
// from the revision it reached.
func (t *transport) WaitDelete(env lockapi.Env, key string, rev int64, until time.Duration) bool {
	ctx, cancel := context.WithTimeout(t.ctx, until-env.Mono())
	defer cancel()
	for {
		for wr := range t.cli.Watch(ctx, key, clientv3.WithRev(rev)) {
			for _, ev := range wr.Events {
				if ev.Type == mvccpb.DELETE {
					return true
				}
				rev = max(rev, ev.Kv.ModRevision+1)
			}
			if wr.CompactRevision > rev {
				rev = wr.CompactRevision
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(t.opts.RetryBudget / 10):
		}
	}
}

// Ended reports whether clientv3 closed lease's session: the lease is gone or
// its keep-alive stream failed.
func (t *transport) Ended(lease int64) bool {
	s := t.session(lease)
	if s == nil {
		return false
	}
	select {
	case <-s.s.Done():
		return true
	default:
		return false
	}
}

// Go runs fn in a goroutine with an Env of the client's node; the Env ends
// the goroutine when the run stops.
func (t *transport) Go(_ string, fn func(lockapi.Env)) {
	w := t.fork()
	go fn(w)
}

func (t *transport) session(lease int64) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[lease]
}
