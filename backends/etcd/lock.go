package etcd

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/lockapi"
)

// ErrSessionExpired is what the mutex returns when its key vanished while it
// waited: its lease expired (clientv3's ErrSessionExpired).
var ErrSessionExpired = errors.New("session expired")

// Session is clientv3's concurrency.Session: a lease kept alive every TTL/3
// by a background routine. It is done when the server says the lease is gone,
// when no keep-alive succeeded for a TTL (the client's deadline), or when the
// transport's library ended it. Its fields are guarded by its Lock's mu.
type Session struct {
	lease    int64
	ttl      time.Duration
	deadline time.Duration // client monotonic time until which the lease is known alive
	done     bool
}

// Lease is the session's lease id.
func (s *Session) Lease() int64 { return s.lease }

// hold is the lock the client believes it holds.
type hold struct {
	lease lockapi.Lease
	key   string // the key whose existence is the lock
	owner string // who holds it: the key (queue mutex) or the value put in it (txn lock)
	rev   int64  // its create revision: the fencing token
}

// Lock is the lock client of one client node, written once for the simulated
// and the live etcd: a Session and one of the two recipes (the queue mutex,
// as clientv3's concurrency.Mutex writes it, or the simple txn lock), plus
// the guarded write of a resource kept in etcd, over a Transport. It
// implements lockapi.Lock and lockapi.RenewObserver (the session's
// keep-alives are recorded as renewals of the lock held at the time).
//
// Its keep-alive routine runs beside Acquire and Release (live, in another
// goroutine), so mu guards the fields they share; it is never held across a
// request or a sleep (in the simulator that would stop the kernel).
type Lock struct {
	env    lockapi.Env
	tr     Transport
	opts   Options
	prefix string // put before every lock key (live: LockPrefix, beside the resource's keys)

	mu      sync.Mutex
	sess    *Session
	held    *hold
	onRenew func(l lockapi.Lease, done bool, err error)
	renewMu sync.Mutex // one observer call at a time (an ended session's routine may still report)
}

var (
	_ lockapi.Lock          = (*Lock)(nil)
	_ lockapi.RenewObserver = (*Lock)(nil)
)

// NewLock returns the lock client of the client whose main routine is env,
// sending its requests through tr; every lock key it makes starts with
// prefix.
func NewLock(env lockapi.Env, tr Transport, o Options, prefix string) *Lock {
	return &Lock{env: env, tr: tr, opts: o, prefix: prefix}
}

// OnRenew registers the observer of keep-alives.
func (l *Lock) OnRenew(fn func(l lockapi.Lease, done bool, err error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onRenew = fn
}

// observe reports a renewal of lease to the observer, if there is one.
func (l *Lock) observe(fn func(lockapi.Lease, bool, error), lease lockapi.Lease, done bool, err error) {
	if fn == nil {
		return
	}
	l.renewMu.Lock()
	defer l.renewMu.Unlock()
	fn(lease, done, err)
}

// ended reports whether s is over, judged at mono, and marks it so.
func (l *Lock) ended(s *Session, mono time.Duration) bool {
	lib := l.tr.Ended(s.lease)
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.done || lib || mono >= s.deadline {
		s.done = true
	}
	return s.done
}

// end marks s over (the server said its lease is gone).
func (l *Lock) end(s *Session) {
	l.mu.Lock()
	s.done = true
	l.mu.Unlock()
}

// session returns a live session, granting a new lease when there is none.
func (l *Lock) session() (*Session, error) {
	l.mu.Lock()
	s := l.sess
	l.mu.Unlock()
	if s != nil && !l.ended(s, l.env.Mono()) {
		return s, nil
	}
	sent := l.env.Mono()
	r, err := l.tr.Grant(l.env, l.opts.TTL)
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	s = &Session{lease: r.Lease, ttl: r.TTL, deadline: sent + r.TTL}
	l.mu.Lock()
	l.sess = s
	l.mu.Unlock()
	l.tr.Go(l.env.Name()+"/keepalive", func(w lockapi.Env) { l.keepAlive(w, s) })
	return s, nil
}

// keepAlive renews s every TTL/3 until it is done.
func (l *Lock) keepAlive(w lockapi.Env, s *Session) {
	for {
		w.Sleep(s.ttl / 3)
		if l.ended(s, w.Mono()) {
			return
		}
		l.mu.Lock()
		h, fn := l.held, l.onRenew
		var before lockapi.Lease
		if h != nil {
			before = h.lease
		}
		l.mu.Unlock()
		if h != nil {
			l.observe(fn, before, false, nil)
		}
		sent := w.Mono()
		ttl, err := l.tr.KeepAliveOnce(w, s.lease)
		l.mu.Lock()
		switch {
		case err == nil && ttl > 0:
			s.deadline = max(s.deadline, sent+ttl)
		case err == nil:
			s.done = true
			err = fmt.Errorf("etcd: keep-alive %x: lease gone: %w", s.lease, lockapi.ErrNotHeld)
		}
		var after lockapi.Lease
		if h != nil {
			if err == nil && l.held == h {
				h.lease.Deadline = s.deadline
			}
			after = h.lease
		}
		l.mu.Unlock()
		if h != nil {
			l.observe(fn, after, true, err)
		}
		if l.ended(s, w.Mono()) {
			return
		}
	}
}

// Acquire takes key with the configured recipe, waiting at most wait.
func (l *Lock) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	until := l.env.Mono() + wait
	s, err := l.session()
	if err != nil {
		return lockapi.Lease{}, fmt.Errorf("etcd: acquire %s: %w", key, notAcquired(err))
	}
	var h *hold
	if l.opts.Lock == LockTxn {
		h, err = l.txnLock(s, l.prefix+key, until)
	} else {
		h, err = l.mutexLock(s, l.prefix+key, wait, until)
	}
	if err != nil {
		return lockapi.Lease{}, fmt.Errorf("etcd: acquire %s: %w", key, err)
	}
	h.lease.Key, h.lease.Owner, h.lease.Token, h.lease.HasToken = key, h.owner, uint64(h.rev), true
	l.mu.Lock()
	h.lease.Deadline = s.deadline
	l.held = h
	lease := h.lease
	l.mu.Unlock()
	return lease, nil
}

// notAcquired keeps an unknown outcome unknown and makes any other error a
// certain refusal.
func notAcquired(err error) error {
	if lockapi.Unknown(err) {
		return err
	}
	return fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
}

// mutexLock is clientv3's Mutex.Lock (TryLock when wait is 0).
func (l *Lock) mutexLock(s *Session, key string, wait, until time.Duration) (*hold, error) {
	pfx := key + "/"
	myKey := fmt.Sprintf("%s%x", pfx, s.lease)
	owner := Op{Type: OpGet, Key: pfx, Prefix: true, Order: OrderFirstCreate}
	r, err := l.acquireTxn(s, Txn{
		If:   []Compare{{Key: myKey, Target: TargetCreate, Result: "=", Int: 0}},
		Then: []Op{{Type: OpPut, Key: myKey, Lease: s.lease}, owner},
		Else: []Op{{Type: OpGet, Key: myKey}, owner},
	})
	if err != nil {
		return nil, err
	}
	myRev := r.Revision
	if !r.Succeeded {
		myRev = r.Results[0].Kvs[0].CreateRev
	}
	h := &hold{key: myKey, owner: myKey, rev: myRev}
	h.lease.Detail = fmt.Sprintf("key %s, create revision %d", myKey, myRev)
	if kvs := r.Results[1].Kvs; len(kvs) == 0 || kvs[0].CreateRev == myRev {
		return h, nil
	}
	if wait == 0 {
		l.unlock(h)
		return nil, fmt.Errorf("held by %s: %w", r.Results[1].Kvs[0].Key, lockapi.ErrNotAcquired)
	}
	if err := l.waitDeletes(pfx, myRev-1, until); err != nil {
		l.unlock(h)
		return nil, err
	}
	if !l.opts.CheckAfterWait {
		h.lease.Detail += ", granted after waiting without checking its own key (3.4.3)"
		return h, nil
	}
	g, err := l.get(Op{Key: myKey})
	if err != nil {
		l.unlock(h)
		return nil, notAcquired(err)
	}
	if len(g.Results[0].Kvs) == 0 {
		l.end(s)
		return nil, fmt.Errorf("key %s gone after waiting: %w: %w", myKey, ErrSessionExpired, lockapi.ErrNotAcquired)
	}
	h.lease.Detail += ", own key checked after waiting"
	return h, nil
}

// waitDeletes waits until every key under pfx created at or before maxRev
// is gone (clientv3's waitDeletes).
func (l *Lock) waitDeletes(pfx string, maxRev int64, until time.Duration) error {
	for {
		r, err := l.get(Op{Key: pfx, Prefix: true, Order: OrderLastCreate, MaxCreateRev: maxRev})
		if err != nil {
			return notAcquired(err)
		}
		if len(r.Results[0].Kvs) == 0 {
			return nil
		}
		last := r.Results[0].Kvs[0]
		if !l.tr.WaitDelete(l.env, last.Key, r.Revision, until) {
			return fmt.Errorf("waited for %s until the budget ran out: %w", last.Key, lockapi.ErrNotAcquired)
		}
	}
}

// txnLock is the simple lock: If CreateRevision(key)==0 Then Put(key, id,
// lease) Else Get(key), waiting for the key's deletion between attempts.
func (l *Lock) txnLock(s *Session, key string, until time.Duration) (*hold, error) {
	id := fmt.Sprintf("%s/%x", l.env.Name(), s.lease)
	for {
		r, err := l.acquireTxn(s, Txn{
			If:   []Compare{{Key: key, Target: TargetCreate, Result: "=", Int: 0}},
			Then: []Op{{Type: OpPut, Key: key, Value: id, Lease: s.lease}},
			Else: []Op{{Type: OpGet, Key: key}},
		})
		if err != nil {
			return nil, err
		}
		rev := r.Revision
		if !r.Succeeded {
			kvs := r.Results[0].Kvs
			if len(kvs) == 0 || kvs[0].Value != id {
				holder := "a key that is already gone"
				if len(kvs) > 0 {
					holder = kvs[0].Value
				}
				if l.env.Mono() >= until || !l.tr.WaitDelete(l.env, key, r.Revision, until) {
					return nil, fmt.Errorf("held by %s: %w", holder, lockapi.ErrNotAcquired)
				}
				continue
			}
			rev = kvs[0].CreateRev // our own earlier put, whose answer was lost
		}
		h := &hold{key: key, owner: id, rev: rev}
		h.lease.Detail = fmt.Sprintf("key %s = %s, create revision %d", key, id, rev)
		return h, nil
	}
}

// Release deletes the lock's key.
func (l *Lock) Release(lease lockapi.Lease) error {
	l.mu.Lock()
	h := l.held
	l.held = nil
	l.mu.Unlock()
	if h == nil || h.owner != lease.Owner || uint64(h.rev) != lease.Token {
		h = &hold{key: lease.Owner, owner: lease.Owner, rev: int64(lease.Token)}
		if l.opts.Lock == LockTxn {
			h.key = l.prefix + lease.Key
		}
	}
	if err := l.unlock(h); err != nil {
		if l.opts.UnlockRetry > 0 && lockapi.Unknown(err) {
			l.tr.Go(l.env.Name()+"/unlock-retry", func(w lockapi.Env) {
				w.Sleep(l.opts.UnlockRetry)
				_ = l.unlockOn(w, h)
			})
		}
		return fmt.Errorf("etcd: release %s: %w", lease.Key, err)
	}
	return nil
}

func (l *Lock) unlock(h *hold) error { return l.unlockOn(l.env, h) }

// unlockOn deletes h's key on behalf of routine env: by name
// (unlock=delete), or only if its create revision is still h's
// (unlock=guarded).
func (l *Lock) unlockOn(env lockapi.Env, h *hold) error {
	del := Op{Type: OpDelete, Key: h.key}
	t := Txn{Then: []Op{del}}
	if l.opts.Unlock == UnlockGuarded {
		t.If = []Compare{{Key: h.key, Target: TargetCreate, Result: "=", Int: h.rev}}
	}
	resp, err := l.tr.Txn(env, t, false)
	r := resp.Result
	switch {
	case err != nil:
		return err
	case (!r.Succeeded || r.Results[0].Deleted == 0) && resp.Retried:
		return fmt.Errorf("key %s (create revision %d) no longer there, perhaps deleted by an attempt that timed out: %w",
			h.key, h.rev, lockapi.ErrUnknown)
	case !r.Succeeded || r.Results[0].Deleted == 0:
		return fmt.Errorf("key %s (create revision %d) no longer there: %w", h.key, h.rev, lockapi.ErrNotHeld)
	}
	return nil
}

// heldKey returns the key and create revision of the lock held with token.
func (l *Lock) heldKey(token uint64) (*hold, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil || uint64(l.held.rev) != token {
		return nil, false
	}
	return l.held, true
}

// txn runs t through the log on behalf of routine env.
func (l *Lock) txn(env lockapi.Env, t Txn) (Result, error) {
	r, err := l.tr.Txn(env, t, false)
	return r.Result, err
}

// acquireTxn runs t, a transaction of an acquire under session s: a lease
// the cluster no longer knows ends the session, and a failure is the
// acquire's (notAcquired).
func (l *Lock) acquireTxn(s *Session, t Txn) (Result, error) {
	r, err := l.txn(l.env, t)
	if errors.Is(err, ErrLeaseGone) {
		l.end(s)
	}
	if err != nil {
		return r, notAcquired(err)
	}
	return r, nil
}

// get reads op with the configured consistency (reads=).
func (l *Lock) get(op Op) (Result, error) {
	op.Type = OpGet
	r, err := l.tr.Txn(l.env, Txn{Then: []Op{op}}, l.opts.Reads == ReadsSerializable)
	return r.Result, err
}
