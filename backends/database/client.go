package database

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// errClosed means the server had ended the connection: the request did not
// run.
var errClosed = errors.New("connection closed by the server")

// errAborted means the server had aborted the transaction: a commit
// committed nothing.
var errAborted = errors.New("transaction aborted")

// Client is the lock client and the data client of one client node: one
// connection at a time (a new one after the server closed it), kept alive
// by a background process that pings it every conn-timeout/3. It implements
// lockapi.Lock in the configured mode and, with resource=db (or
// optimistic), lockapi.Storage over the data rows.
type Client struct {
	p        *sim.Proc
	server   sim.NodeID
	opts     Options
	connN    int
	conn     string
	pinging  bool
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
// transaction holds writes of owner: nil committed, errClosed or
// errAborted certainly not, lockapi.ErrUnknown maybe.
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
		c.onTxn(TxnStep{Commit: true, Done: true, Owner: owner, Err: err})
	}
	return err
}

var (
	_ lockapi.Lock    = (*Client)(nil)
	_ lockapi.Storage = (*Client)(nil)
)

// NewClient returns the client of process p.
func NewClient(p *sim.Proc, server sim.NodeID, o Options) *Client {
	c := &Client{p: p, server: server, opts: o, versions: map[string]int64{}}
	c.reconnect()
	return c
}

func (c *Client) reconnect() {
	c.connN++
	c.conn = fmt.Sprintf("%s/%d", c.p.Name(), c.connN)
	c.inTxn, c.pending = false, false
	if !c.pinging {
		c.pinging = true
		c.p.Spawn(c.p.Name()+"/ping", c.ping)
	}
}

// ping keeps the current connection alive.
func (c *Client) ping(w *sim.Proc) {
	for {
		w.Sleep(c.opts.ConnTimeout / 3)
		_, _ = w.Call(c.server, Req{Conn: c.conn, Op: OpPing}, c.opts.RequestTimeout)
	}
}

// call sends req on the current connection. A timeout is an unknown outcome;
// "closed" opens a new connection and is errClosed (certainly not run).
func (c *Client) call(req Req, extra time.Duration) (Resp, error) {
	req.Conn = c.conn
	body, err := c.p.Call(c.server, req, c.opts.RequestTimeout+extra)
	if err != nil {
		return Resp{}, fmt.Errorf("database: %s %s: %w: %w", req.Op, req.Key, lockapi.ErrUnknown, err)
	}
	r := body.(Resp)
	if r.Err == "closed" {
		c.reconnect()
		return r, fmt.Errorf("database: %s %s: %w", req.Op, req.Key, errClosed)
	}
	return r, nil
}

// Acquire takes key in the configured mode, waiting at most wait.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	c.acquired++
	owner := fmt.Sprintf("%s#%d", c.p.Name(), c.acquired)
	if c.opts.Mode == ModeOptimistic {
		clear(c.versions) // a critical section's reads start afresh
		l := lockapi.Lease{Key: key, Owner: owner, Detail: "optimistic: no lock"}
		c.held = &l
		return l, nil
	}
	until := c.p.Mono() + wait
	for attempt := 1; ; attempt++ {
		sent := c.p.Mono()
		l, err := c.try(key, owner, until)
		if err == nil {
			l.Key, l.Owner, l.HasToken = key, owner, true
			if c.opts.Mode == ModeUniqueRow {
				l.Deadline = sent + c.opts.TTL
			}
			c.held = &l
			return l, nil
		}
		if !errors.Is(err, lockapi.ErrNotAcquired) || c.p.Mono() >= until {
			return lockapi.Lease{}, fmt.Errorf("database: acquire %s (%s, %d attempts): %w", key, c.opts.Mode, attempt, err)
		}
		lockapi.SleepBackoff(c.p, c.opts.BackoffMax, until-c.p.Mono())
	}
}

// try makes one attempt; ErrNotAcquired means busy.
func (c *Client) try(key, owner string, until time.Duration) (lockapi.Lease, error) {
	switch c.opts.Mode {
	case ModeUniqueRow:
		now := c.p.Wall()
		if srv, ok := c.p.World().Nodes()[c.server].Handler().(*Server); ok {
			srv.stamped(owner, now, c.p.World().Now()) // the record of grants, when recorded
		}
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
		return lockapi.Lease{Token: r.Token, Detail: "pg_try_advisory_lock on " + c.conn}, nil
	}
	wait := max(0, until-c.p.Mono())
	r, err := c.call(Req{Op: OpSelectForUpdate, Key: "lock/" + key, Owner: owner, Wait: wait}, min(wait, c.opts.LockWaitTimeout))
	if err != nil {
		if lockapi.Unknown(err) {
			_, _ = c.call(Req{Op: OpRollback}, 0)
			c.reconnect() // the lock may be granted to the old connection; the server ends it
		}
		return lockapi.Lease{}, notAcquired(err)
	}
	if !r.OK {
		_, _ = c.call(Req{Op: OpRollback}, 0)
		return lockapi.Lease{}, fmt.Errorf("row held by %s (%s): %w", r.Owner, r.Err, lockapi.ErrNotAcquired)
	}
	c.inTxn = true
	return lockapi.Lease{Token: r.Token, Detail: "SELECT FOR UPDATE in a transaction of " + c.conn}, nil
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
			c.p.Sleep(c.opts.CommitDelay)
			_ = c.commit(l.Owner)
			c.pending = false
		}
		return released(l, r, err)
	case ModeAdvisory:
		r, err := c.call(Req{Op: OpAdvisoryUnlock, Key: l.Key}, 0)
		return released(l, r, err)
	}
	if !c.inTxn {
		return fmt.Errorf("database: release %s: no transaction open: %w", l.Key, lockapi.ErrNotHeld)
	}
	c.inTxn = false
	err := c.commit(l.Owner)
	if errors.Is(err, errAborted) {
		return fmt.Errorf("database: release %s: aborted: %w", l.Key, lockapi.ErrNotHeld)
	}
	return released(l, Resp{OK: true}, err)
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
	case c.opts.Mode == ModeForUpdate && c.inTxn:
		c.txnBegun(key)
	}
	r, err := c.call(req, 0)
	return rejectedOr(key, r, err)
}

func rejectedOr(key string, r Resp, err error) error {
	switch {
	case errors.Is(err, errClosed):
		return fmt.Errorf("database: write %s: %w: %w", key, err, lockapi.ErrRejected)
	case err != nil:
		return fmt.Errorf("database: write %s: %w", key, err)
	case !r.OK:
		return fmt.Errorf("database: write %s: %s: %w", key, r.Err, lockapi.ErrRejected)
	}
	return nil
}
