package database

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locklab/locklab/lockapi"
)

// ErrClosed means the server had ended the connection (or none could be
// opened): the request certainly did not run, and the next one goes on a
// new connection.
var ErrClosed = errors.New("connection closed by the server")

// ErrNotSent means a request was certainly not sent (live: the keep-alive
// ping held the connection). A commit not sent leaves its transaction open:
// a later commit on the connection may still commit its writes.
var ErrNotSent = errors.New("not sent")

// errAborted means the server had aborted the transaction: a commit
// committed nothing.
var errAborted = errors.New("transaction aborted")

// Transport is how a Client reaches the database: its recipe (the lock
// modes, attempts and back-off, owner ids, transactions and the outcome of
// every request) is written once over it. The simulated transport sends Req
// and Resp messages from the client's sim.Proc and pings from a process of
// its own; the live one (backends/database/live) runs each Req as SQL on
// PostgreSQL connections (pgx) and pings from a goroutine. Calls come from
// the client's one routine.
type Transport interface {
	// Call runs req on the client's current connection (opening one if
	// there is none; req.Conn is the transport's), waiting at most timeout.
	// An error is classified: one wrapping ErrClosed means the request
	// certainly did not run (the server had ended the connection), one
	// wrapping lockapi.ErrUnknown that it may have, any other that the
	// server refused it.
	Call(req Req, timeout time.Duration) (Resp, error)
	// Conn names the current connection ("" while there is none).
	Conn() string
	// Reconnect ends the current connection (the server aborts its
	// transaction and releases its locks); the next request opens a new one.
	Reconnect()
	// OnNewConnection registers fn, called whenever the client's requests
	// move to a new connection: the transactions of the old one are gone.
	OnNewConnection(fn func())
}

// Client is the lock client and the data client of one client node: one
// connection at a time (a new one after the server closed it), kept alive
// by the transport's keep-alive, which pings it every conn-timeout/3. It
// implements lockapi.Lock in the configured mode and, with resource=db (or
// optimistic), lockapi.Storage over the data rows.
type Client struct {
	env      lockapi.Env
	t        Transport
	opts     Options
	acquired int
	held     *lockapi.Lease
	inTxn    bool             // for-update: the lock's transaction is open
	versions map[string]int64 // optimistic: version read per row
	pending  bool             // unique-row, unlock-before-commit: a data transaction awaits commit
	txnOwner string           // the acquisition whose data transaction was told begun (onTxn)
	onTxn    func(TxnStep)
}

// TxnStep is a step of a transaction that holds data writes (for-update
// with resource=db: the lock's own transaction; unique-row with
// unlock-before-commit: the data's), for the history: its begin, told once
// when the first write goes into it, and its commit, told before the
// request (Done false) and with the outcome after it (Done true). A
// transaction that ends without a commit (aborted by the server, lost in a
// crash, or a connection the server had closed) never committed its writes.
type TxnStep struct {
	// Commit: the commit; otherwise the begin.
	Commit, Done bool
	// Owner is the acquisition whose critical section the transaction
	// holds; Key is the data row first written (begin).
	Owner, Key string
	// Err is the commit's outcome (Done): nil committed, an error wrapping
	// lockapi.ErrUnknown maybe, any other certainly not.
	Err error
}

// OnTxn registers fn to be told of the steps of the client's data
// transactions.
func (c *Client) OnTxn(fn func(TxnStep)) { c.onTxn = fn }

// txnBegun tells onTxn, once per acquisition, that a data write goes into
// a transaction.
func (c *Client) txnBegun(key string) {
	if c.onTxn == nil || c.held == nil || c.txnOwner == c.held.Owner {
		return
	}
	c.txnOwner = c.held.Owner
	c.onTxn(TxnStep{Owner: c.held.Owner, Key: key})
}

// commit commits the connection's transaction, telling onTxn when the
// transaction holds writes of owner: nil committed, ErrClosed or
// errAborted certainly not, lockapi.ErrUnknown maybe (a commit not sent,
// ErrNotSent, is told as maybe: its transaction stays open).
func (c *Client) commit(owner string) error {
	told := c.onTxn != nil && c.txnOwner == owner && owner != ""
	if told {
		c.txnOwner = ""
		c.onTxn(TxnStep{Commit: true, Owner: owner})
	}
	r, err := c.call(Req{Op: OpCommit}, 0)
	if err == nil && !r.OK {
		err = fmt.Errorf("database: commit: %s: %w", r.Err, errAborted)
	}
	if told {
		outcome := err
		if errors.Is(err, ErrNotSent) {
			outcome = fmt.Errorf("%w: the transaction stays open: %w", err, lockapi.ErrUnknown)
		}
		c.onTxn(TxnStep{Commit: true, Done: true, Owner: owner, Err: outcome})
	}
	return err
}

var (
	_ lockapi.Lock    = (*Client)(nil)
	_ lockapi.Storage = (*Client)(nil)
)

// New returns the client of env (the client node's main routine) reaching
// the database through t.
func New(env lockapi.Env, t Transport, o Options) *Client {
	c := &Client{env: env, t: t, opts: o, versions: map[string]int64{}}
	t.OnNewConnection(func() { c.inTxn, c.pending = false, false })
	return c
}

// call sends req on the current connection, waiting the request timeout
// plus extra.
func (c *Client) call(req Req, extra time.Duration) (Resp, error) {
	r, err := c.t.Call(req, c.opts.RequestTimeout+extra)
	if err != nil {
		return r, fmt.Errorf("database: %s %s: %w", req.Op, req.Key, err)
	}
	return r, nil
}

// lockTxn reports whether the lock's transaction (for-update) is open, on a
// connection that has not ended.
func (c *Client) lockTxn() bool { return c.inTxn && c.t.Conn() != "" }

// Acquire takes key in the configured mode, waiting at most wait.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	c.acquired++
	owner := fmt.Sprintf("%s#%d", c.env.Name(), c.acquired)
	if c.opts.Mode == ModeOptimistic {
		clear(c.versions) // a critical section's reads start afresh
		l := lockapi.Lease{Key: key, Owner: owner, Detail: "optimistic: no lock"}
		c.held = &l
		return l, nil
	}
	until := c.env.Mono() + wait
	for attempt := 1; ; attempt++ {
		sent := c.env.Mono()
		l, err := c.try(key, owner, until)
		if err == nil {
			l.Key, l.Owner, l.HasToken = key, owner, true
			if c.opts.Mode == ModeUniqueRow {
				l.Deadline = sent + c.opts.TTL
			}
			c.held = &l
			return l, nil
		}
		if !errors.Is(err, lockapi.ErrNotAcquired) || c.env.Mono() >= until {
			return lockapi.Lease{}, fmt.Errorf("database: acquire %s (%s, %d attempts): %w", key, c.opts.Mode, attempt, err)
		}
		lockapi.SleepBackoff(c.env, c.opts.BackoffMax, until-c.env.Mono())
	}
}

// try makes one attempt; ErrNotAcquired means busy.
func (c *Client) try(key, owner string, until time.Duration) (lockapi.Lease, error) {
	switch c.opts.Mode {
	case ModeUniqueRow:
		now := c.env.Wall()
		r, err := c.call(Req{Op: OpInsertLock, Key: key, Owner: owner, Now: now, Expiry: now + c.opts.TTL}, 0)
		if err != nil {
			return lockapi.Lease{}, notAcquired(err)
		}
		if !r.OK {
			return lockapi.Lease{}, fmt.Errorf("row held by %s: %w", r.Owner, lockapi.ErrNotAcquired)
		}
		return lockapi.Lease{Token: r.Token, Detail: fmt.Sprintf("lock row %q inserted, expiry by the client's wall clock", key)}, nil
	case ModeAdvisory:
		r, err := c.call(Req{Op: OpAdvisoryTry, Key: key, Owner: owner}, 0)
		if err != nil {
			return lockapi.Lease{}, notAcquired(err)
		}
		if !r.OK {
			return lockapi.Lease{}, fmt.Errorf("advisory lock held by %s: %w", r.Owner, lockapi.ErrNotAcquired)
		}
		return lockapi.Lease{Token: r.Token, Detail: "pg_try_advisory_lock on " + c.t.Conn()}, nil
	}
	wait := max(0, until-c.env.Mono())
	r, err := c.call(Req{Op: OpSelectForUpdate, Key: "lock/" + key, Owner: owner, Wait: wait}, min(wait, c.opts.LockWaitTimeout))
	if err != nil {
		if lockapi.Unknown(err) {
			_, _ = c.call(Req{Op: OpRollback}, 0)
			c.t.Reconnect() // the lock may be granted to the old connection; the server ends it
		}
		return lockapi.Lease{}, notAcquired(err)
	}
	if !r.OK {
		_, _ = c.call(Req{Op: OpRollback}, 0)
		return lockapi.Lease{}, fmt.Errorf("row held by %s (%s): %w", r.Owner, r.Err, lockapi.ErrNotAcquired)
	}
	c.inTxn = true
	return lockapi.Lease{Token: r.Token, Detail: "SELECT FOR UPDATE in a transaction of " + c.t.Conn()}, nil
}

func notAcquired(err error) error {
	if lockapi.Unknown(err) {
		return err
	}
	return fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
}

// Release gives the lock back.
func (c *Client) Release(l lockapi.Lease) error {
	c.held = nil
	switch c.opts.Mode {
	case ModeOptimistic:
		return nil
	case ModeUniqueRow:
		r, err := c.call(Req{Op: OpDeleteLock, Key: l.Key, Owner: l.Owner}, 0)
		if c.pending {
			c.env.Sleep(c.opts.CommitDelay)
			_ = c.commit(l.Owner)
			c.pending = false
		}
		return released(l, r, err)
	case ModeAdvisory:
		r, err := c.call(Req{Op: OpAdvisoryUnlock, Key: l.Key}, 0)
		return sessionEnded(l, released(l, r, err))
	}
	if !c.lockTxn() {
		return fmt.Errorf("database: release %s: no transaction open: %w", l.Key, lockapi.ErrNotHeld)
	}
	c.inTxn = false
	err := c.commit(l.Owner)
	if errors.Is(err, errAborted) {
		return fmt.Errorf("database: release %s: aborted: %w", l.Key, lockapi.ErrNotHeld)
	}
	return sessionEnded(l, released(l, Resp{OK: true}, err))
}

// sessionEnded says of a release of a session's lock (a transaction's row
// lock, an advisory lock) that met a connection the server had ended
// (ErrClosed) that the lock was no longer held: a session that ends rolls
// its transaction back and releases its locks, so the holding ended with
// it, before the answer (lockapi.ErrNotHeld). Any other error is err.
func sessionEnded(l lockapi.Lease, err error) error {
	if errors.Is(err, ErrClosed) && !errors.Is(err, lockapi.ErrNotHeld) {
		return fmt.Errorf("%w: the session ended and its lock with it: %w", err, lockapi.ErrNotHeld)
	}
	return err
}

func released(l lockapi.Lease, r Resp, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("database: release %s: %w", l.Key, err)
	case !r.OK:
		return fmt.Errorf("database: release %s: %s: %w", l.Key, r.Err, lockapi.ErrNotHeld)
	}
	return nil
}

// Read reads a data row (in the lock's transaction for for-update).
func (c *Client) Read(key string, token uint64) (int64, error) {
	r, err := c.call(Req{Op: OpRead, Key: "data/" + key}, 0)
	if err != nil {
		return 0, err
	}
	c.versions[key] = r.Version
	return r.Value, nil
}

// Write writes a data row: for-update in the lock's transaction, which the
// release commits (a write after the server aborted the transaction is
// rejected: the connection is gone); optimistic as a compare-and-swap on the
// version read; unique-row with unlock-before-commit in a transaction that
// commits after the release; otherwise autocommit.
func (c *Client) Write(key string, value int64, token uint64) error {
	req := Req{Op: OpWrite, Key: "data/" + key, Value: value, IfVersion: -1, Token: token}
	switch {
	case c.opts.Mode == ModeOptimistic:
		req.IfVersion = c.versions[key]
		if c.opts.Versions == VersionsPair {
			req.IfVersion = -1
			for _, k := range slices.Sorted(maps.Keys(c.versions)) {
				req.ReadSet = append(req.ReadSet, RowVersion{Key: "data/" + k, Version: c.versions[k]})
			}
		}
	case c.opts.UnlockBeforeCommit:
		if r, err := c.call(Req{Op: OpBegin}, 0); err != nil || !r.OK {
			return rejectedOr(key, r, err)
		}
		c.pending = true
		c.txnBegun(key)
	case c.opts.Mode == ModeForUpdate && c.lockTxn():
		c.txnBegun(key)
	}
	r, err := c.call(req, 0)
	return rejectedOr(key, r, err)
}

func rejectedOr(key string, r Resp, err error) error {
	switch {
	case errors.Is(err, ErrClosed):
		return fmt.Errorf("database: write %s: %w: %w", key, err, lockapi.ErrRejected)
	case err != nil:
		return fmt.Errorf("database: write %s: %w", key, err)
	case !r.OK:
		return fmt.Errorf("database: write %s: %s: %w", key, r.Err, lockapi.ErrRejected)
	}
	return nil
}
