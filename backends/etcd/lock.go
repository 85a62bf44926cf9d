package etcd

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// ErrSessionExpired is what the mutex returns when its key vanished while it
// waited: its lease expired (clientv3's ErrSessionExpired).
var ErrSessionExpired = errors.New("session expired")

// Session is clientv3's concurrency.Session: a lease kept alive every TTL/3
// by a background process. It is done when the server says the lease is gone
// or when no keep-alive succeeded for a TTL (the client's deadline).
type Session struct {
	lease    int64
	ttl      time.Duration
	deadline time.Duration // client monotonic time until which the lease is known alive
	done     bool
}

// Lease is the session's lease id.
func (s *Session) Lease() int64 { return s.lease }

// Done reports whether the session has ended, judged at mono.
func (s *Session) Done(mono time.Duration) bool { return s.done || mono >= s.deadline }

// hold is the lock the client believes it holds.
type hold struct {
	lease lockapi.Lease
	key   string // the key whose existence is the lock
	owner string // who holds it: the key (queue mutex) or the value put in it (txn lock)
	rev   int64  // its create revision: the fencing token
}

// Lock is the lock client of one client node: a Session and one of the two
// recipes (the queue mutex or the simple txn lock), plus the guarded write
// of a resource kept in etcd. It implements lockapi.Lock and
// lockapi.RenewObserver (the session's keep-alives are recorded as renewals
// of the lock held at the time).
type Lock struct {
	kv      *KVClient
	opts    Options
	p       *sim.Proc
	sess    *Session
	held    *hold
	onRenew func(l lockapi.Lease, done bool, err error)
}

var (
	_ lockapi.Lock          = (*Lock)(nil)
	_ lockapi.RenewObserver = (*Lock)(nil)
)

func newLock(p *sim.Proc, kv *KVClient, o Options) *Lock { return &Lock{p: p, kv: kv, opts: o} }

// OnRenew registers the observer of keep-alives.
func (l *Lock) OnRenew(fn func(l lockapi.Lease, done bool, err error)) { l.onRenew = fn }

// Session is the current session (nil before the first acquire).
func (l *Lock) Session() *Session { return l.sess }

// session returns a live session, granting a new lease when there is none.
func (l *Lock) session() (*Session, error) {
	if l.sess != nil && !l.sess.Done(l.p.Mono()) {
		return l.sess, nil
	}
	if l.sess != nil {
		l.sess.done = true // its keep-alive process stops
	}
	sent := l.p.Mono()
	r, err := l.kv.Grant(l.p, l.opts.TTL)
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	s := &Session{lease: r.Lease, ttl: r.TTL, deadline: sent + r.TTL}
	l.sess = s
	l.p.Spawn(l.p.Name()+"/keepalive", func(w *sim.Proc) { l.keepAlive(w, s) })
	return s, nil
}

// keepAlive renews s every TTL/3 until it is done.
func (l *Lock) keepAlive(w *sim.Proc, s *Session) {
	for {
		w.Sleep(s.ttl / 3)
		if s.Done(w.Mono()) {
			s.done = true
			return
		}
		h := l.held
		if h != nil && l.onRenew != nil {
			l.onRenew(h.lease, false, nil)
		}
		sent := w.Mono()
		ttl, err := l.kv.KeepAliveOnce(w, s.lease)
		switch {
		case err == nil && ttl > 0:
			s.deadline = max(s.deadline, sent+ttl)
		case err == nil:
			s.done = true
			err = fmt.Errorf("etcd: keep-alive %x: lease gone: %w", s.lease, lockapi.ErrNotHeld)
		}
		if h != nil && l.onRenew != nil {
			if err == nil && l.held == h {
				h.lease.Deadline = s.deadline
			}
			l.onRenew(h.lease, true, err)
		}
		if s.Done(w.Mono()) {
			s.done = true
			return
		}
	}
}

// Acquire takes key with the configured recipe, waiting at most wait.
func (l *Lock) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	until := l.p.Mono() + wait
	s, err := l.session()
	if err != nil {
		return lockapi.Lease{}, fmt.Errorf("etcd: acquire %s: %w", key, notAcquired(err))
	}
	var h *hold
	if l.opts.Lock == LockTxn {
		h, err = l.txnLock(s, key, until)
	} else {
		h, err = l.mutexLock(s, key, wait, until)
	}
	if err != nil {
		return lockapi.Lease{}, fmt.Errorf("etcd: acquire %s: %w", key, err)
	}
	h.lease.Key, h.lease.Owner, h.lease.Token, h.lease.HasToken = key, h.owner, uint64(h.rev), true
	h.lease.Deadline = s.deadline
	l.held = h
	return h.lease, nil
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
	r, err := l.kv.Txn(l.p, Txn{
		If:   []Compare{{Key: myKey, Target: TargetCreate, Result: "=", Int: 0}},
		Then: []Op{{Type: OpPut, Key: myKey, Lease: s.lease}, owner},
		Else: []Op{{Type: OpGet, Key: myKey}, owner},
	})
	if errors.Is(err, ErrLeaseGone) {
		s.done = true
	}
	if err != nil {
		return nil, notAcquired(err)
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
	g, err := l.kv.Get(l.p, Op{Key: myKey})
	if err != nil {
		l.unlock(h)
		return nil, notAcquired(err)
	}
	if len(g.Results[0].Kvs) == 0 {
		s.done = true
		return nil, fmt.Errorf("key %s gone after waiting: %w: %w", myKey, ErrSessionExpired, lockapi.ErrNotAcquired)
	}
	h.lease.Detail += ", own key checked after waiting"
	return h, nil
}

// waitDeletes waits until every key under pfx created at or before maxRev
// is gone (clientv3's waitDeletes).
func (l *Lock) waitDeletes(pfx string, maxRev int64, until time.Duration) error {
	for {
		r, err := l.kv.Get(l.p, Op{Key: pfx, Prefix: true, Order: OrderLastCreate, MaxCreateRev: maxRev})
		if err != nil {
			return notAcquired(err)
		}
		if len(r.Results[0].Kvs) == 0 {
			return nil
		}
		last := r.Results[0].Kvs[0]
		if !l.kv.WaitDelete(l.p, last.Key, r.Revision, until) {
			return fmt.Errorf("waited for %s until the budget ran out: %w", last.Key, lockapi.ErrNotAcquired)
		}
	}
}

// txnLock is the simple lock: If CreateRevision(key)==0 Then Put(key, id,
// lease) Else Get(key), waiting for the key's deletion between attempts.
func (l *Lock) txnLock(s *Session, key string, until time.Duration) (*hold, error) {
	id := fmt.Sprintf("%s/%x", l.p.Name(), s.lease)
	for {
		r, err := l.kv.Txn(l.p, Txn{
			If:   []Compare{{Key: key, Target: TargetCreate, Result: "=", Int: 0}},
			Then: []Op{{Type: OpPut, Key: key, Value: id, Lease: s.lease}},
			Else: []Op{{Type: OpGet, Key: key}},
		})
		if errors.Is(err, ErrLeaseGone) {
			s.done = true
		}
		if err != nil {
			return nil, notAcquired(err)
		}
		rev := r.Revision
		if !r.Succeeded {
			kvs := r.Results[0].Kvs
			if len(kvs) == 0 || kvs[0].Value != id {
				holder := "a key that is already gone"
				if len(kvs) > 0 {
					holder = kvs[0].Value
				}
				if l.p.Mono() >= until || !l.kv.WaitDelete(l.p, key, r.Revision, until) {
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
	h := l.held
	if h == nil || h.owner != lease.Owner || uint64(h.rev) != lease.Token {
		h = &hold{key: lease.Owner, owner: lease.Owner, rev: int64(lease.Token)}
		if l.opts.Lock == LockTxn {
			h.key = lease.Key
		}
	}
	l.held = nil
	if err := l.unlock(h); err != nil {
		if l.opts.UnlockRetry > 0 && lockapi.Unknown(err) {
			l.p.Spawn(l.p.Name()+"/unlock-retry", func(w *sim.Proc) {
				w.Sleep(l.opts.UnlockRetry)
				_ = l.unlockOn(w, h)
			})
		}
		return fmt.Errorf("etcd: release %s: %w", lease.Key, err)
	}
	return nil
}

func (l *Lock) unlock(h *hold) error { return l.unlockOn(l.p, h) }

// unlockOn deletes h's key on process p: by name (unlock=delete), or only if
// its create revision is still h's (unlock=guarded).
func (l *Lock) unlockOn(p *sim.Proc, h *hold) error {
	del := Op{Type: OpDelete, Key: h.key}
	t := Txn{Then: []Op{del}}
	if l.opts.Unlock == UnlockGuarded {
		t.If = []Compare{{Key: h.key, Target: TargetCreate, Result: "=", Int: h.rev}}
	}
	resp, err := l.kv.Do(p, Command{Type: CmdTxn, Txn: t}, false)
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
	if l.held == nil || uint64(l.held.rev) != token {
		return nil, false
	}
	return l.held, true
}
