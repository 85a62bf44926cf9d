package database

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	simdb "github.com/locklab/locklab/backends/database"
	"github.com/locklab/locklab/lockapi"
)

// PgxVersion is the version of github.com/jackc/pgx the clients use.
const PgxVersion = "v5.12.0"

// errClosed means the server had ended the connection (or it could not be
// opened): the request certainly did not run.
var errClosed = errors.New("connection closed by the server")

// Client is the lock client and the data client of one client node, on
// real PostgreSQL connections (pgx): the mirror of the simulated
// database.Client. One connection at a time (a new one after the server
// ended it or a request on it timed out), kept alive by a background
// goroutine that pings it every conn-timeout/3 and stops with the client's
// pauses. It implements lockapi.Lock in the configured mode and, with
// resource=db (or optimistic), lockapi.Storage over the data rows.
type Client struct {
	ctx  context.Context // ends every request when the run stops
	env  lockapi.Env
	fork func() lockapi.Env
	srv  *Server
	addr string // the server's address, or the client's own proxy's
	opts simdb.Options
	// OnTakeover, when set, is told when a unique-row acquire took over a
	// row whose expiry had passed by this client's clock.
	OnTakeover func(detail string)
	// OnHold, when set, is told when an advisory lock is taken (held) or
	// given back on a connection (named by its application_name).
	OnHold func(conn, key string, held bool)
	// OnTxn, when set, is told of the steps of the client's data
	// transactions, as the simulated client tells its own
	// (database.Client.OnTxn): the begin, once per acquisition, when its
	// first write goes into a transaction (for-update with resource=db:
	// the lock's; unlock-before-commit: the data connection's), and the
	// commit, before the request and with its outcome after it.
	OnTxn func(simdb.TxnStep)

	// use is the connections' one user at a time (the client or its
	// keep-alive ping); a mutex that can be waited for with a timeout.
	use      chan struct{}
	conn     *pgx.Conn
	connN    int
	data     *pgx.Conn // unlock-before-commit: the data transaction's connection
	pinging  bool
	closed   bool
	acquired int
	inTxn    bool             // for-update: the lock's transaction is open
	pending  bool             // unlock-before-commit: a data transaction awaits commit
	versions map[string]int64 // optimistic: version read per row
	owner    string           // the acquisition held ("" between a release and the next acquire)
	txnOwner string           // the acquisition whose data transaction was told begun (OnTxn)
}

var (
	_ lockapi.Lock    = (*Client)(nil)
	_ lockapi.Storage = (*Client)(nil)
)

// NewClient returns the client of the node env names, connecting to addr
// (the server's address or a proxy's); fork gives the environment of its
// keep-alive goroutine (paused with the client). When ctx ends, every
// request in flight ends (the run stopped).
func NewClient(ctx context.Context, env lockapi.Env, fork func() lockapi.Env, srv *Server, addr string, o simdb.Options) *Client {
	return &Client{ctx: ctx, env: env, fork: fork, srv: srv, addr: addr, opts: o, versions: map[string]int64{}, use: make(chan struct{}, 1)}
}

// Params are the session settings that make the server end a connection
// silent for conn-timeout (the simulated server's connection timeout):
// idle_in_transaction_session_timeout (a transaction's row locks),
// idle_session_timeout (an idle session's advisory locks) and TCP
// keepalives (a peer whose machine is gone; through a proxy the proxy
// answers them, so the idle timeouts are what ends a silent client).
func Params(o simdb.Options) map[string]string {
	ms := strconv.FormatInt(max(1, o.ConnTimeout.Milliseconds()), 10)
	ka := strconv.FormatInt(max(1, int64((o.ConnTimeout/3+time.Second-1)/time.Second)), 10)
	return map[string]string{
		"idle_in_transaction_session_timeout": ms,
		"idle_session_timeout":                ms,
		"tcp_keepalives_idle":                 ka,
		"tcp_keepalives_interval":             ka,
		"tcp_keepalives_count":                "3",
	}
}

// errBusy means a request was not sent: a keep-alive ping held the
// connection, waiting for the server's answer, for the whole request timeout.
var errBusy = errors.New("not sent: the connection waits for the server's answer to a keep-alive ping")

// take waits up to timeout to use the connections.
func (c *Client) take(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case c.use <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

func (c *Client) give() { <-c.use }

// Close closes the client's connections (after a ping in flight, which
// its timeout bounds).
func (c *Client) Close() {
	c.use <- struct{}{}
	defer c.give()
	c.closed = true
	for _, conn := range []*pgx.Conn{c.conn, c.data} {
		if conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_ = conn.Close(ctx)
			cancel()
		}
	}
	c.conn, c.data = nil, nil
}

// ConnName is the application_name of the client's current connection.
func (c *Client) connName() string { return fmt.Sprintf("%s/%d", c.env.Name(), c.connN) }

// open returns the current connection, opening one if there is none.
func (c *Client) open(ctx context.Context) (*pgx.Conn, error) {
	if c.closed {
		return nil, fmt.Errorf("%w: the client is closed", errClosed)
	}
	if c.conn != nil {
		return c.conn, nil
	}
	c.connN++
	c.inTxn, c.pending = false, false
	conn, err := c.srv.Connect(ctx, c.addr, c.connName(), Params(c.opts))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errClosed, err)
	}
	c.conn = conn
	if !c.pinging && c.fork != nil {
		c.pinging = true
		go c.ping(c.fork())
	}
	return conn, nil
}

// ping keeps the current connection alive, as the simulated client's
// background process does. A ping waits for its answer up to conn-timeout
// (by then the server has ended a connection it did not hear from), not
// the request timeout: pgx closes a connection whose request timed out,
// and a ping lost in a short partition must not end a connection the
// server keeps. Meanwhile the client's own requests are not sent (errBusy).
func (c *Client) ping(env lockapi.Env) {
	for {
		env.Sleep(c.opts.ConnTimeout / 3)
		if !c.take(c.opts.ConnTimeout) {
			continue
		}
		if c.closed {
			c.give()
			return
		}
		if c.conn != nil && !c.conn.IsClosed() {
			ctx, cancel := context.WithTimeout(c.ctx, c.opts.ConnTimeout)
			_ = c.conn.Ping(ctx)
			cancel()
		}
		c.give()
	}
}

// call runs fn on the connection within the request timeout (plus extra).
// A request the server certainly did not run (it had ended the connection,
// or none could be opened) is errClosed; a timeout or a connection lost
// mid-request is lockapi.ErrUnknown; an error the server returned (a
// failed statement) is returned as is. A connection that ended is dropped:
// the next call opens a new one.
func (c *Client) call(what string, extra time.Duration, fn func(ctx context.Context, conn *pgx.Conn) error) error {
	if !c.take(c.opts.RequestTimeout + extra) {
		return fmt.Errorf("database: %s: %w: %w", what, errClosed, errBusy)
	}
	defer c.give()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.RequestTimeout+extra)
	defer cancel()
	conn, err := c.open(ctx)
	if err != nil {
		return fmt.Errorf("database: %s: %w", what, err)
	}
	err = fn(ctx, conn)
	if err == nil {
		return nil
	}
	if conn.IsClosed() {
		c.conn = nil
	}
	return fmt.Errorf("database: %s: %w", what, classify(err))
}

// classify maps a pgx error to the history's outcomes.
func classify(err error) error {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Severity == "FATAL":
		// The server ended the session before it read the request
		// (idle timeouts, shutdown): the request did not run.
		return fmt.Errorf("%w (%s %s)", errClosed, pe.Code, pe.Message)
	case errors.As(err, &pe):
		return err
	case pgconn.SafeToRetry(err):
		return fmt.Errorf("%w: %w", errClosed, err)
	}
	return fmt.Errorf("%w: %w", lockapi.ErrUnknown, err)
}

// lockNotAvailable is PostgreSQL's lock_not_available (NOWAIT, lock_timeout).
func lockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// Acquire takes key in the configured mode, waiting at most wait.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	c.acquired++
	owner := fmt.Sprintf("%s#%d", c.env.Name(), c.acquired)
	if c.opts.Mode == simdb.ModeOptimistic {
		clear(c.versions) // a critical section's reads start afresh
		c.owner = owner
		return lockapi.Lease{Key: key, Owner: owner, Detail: "optimistic: no lock"}, nil
	}
	until := c.env.Mono() + wait
	for attempt := 1; ; attempt++ {
		sent := c.env.Mono()
		l, err := c.try(key, owner, until)
		if err == nil {
			l.Key, l.Owner, l.HasToken = key, owner, true
			if c.opts.Mode == simdb.ModeUniqueRow {
				l.Deadline = sent + c.opts.TTL
			}
			c.owner = owner
			return l, nil
		}
		if !errors.Is(err, lockapi.ErrNotAcquired) || c.env.Mono() >= until {
			return lockapi.Lease{}, fmt.Errorf("database: acquire %s (%s, %d attempts): %w", key, c.opts.Mode, attempt, err)
		}
		lockapi.SleepBackoff(c.env, c.opts.BackoffMax, until-c.env.Mono())
	}
}

func notAcquired(err error) error {
	if lockapi.Unknown(err) {
		return err
	}
	return fmt.Errorf("%w: %w", err, lockapi.ErrNotAcquired)
}

// try makes one attempt; ErrNotAcquired means busy (or certainly not run).
func (c *Client) try(key, owner string, until time.Duration) (lockapi.Lease, error) {
	switch c.opts.Mode {
	case simdb.ModeUniqueRow:
		return c.insertLock(key, owner)
	case simdb.ModeAdvisory:
		var token int64
		err := c.call("pg_try_advisory_lock "+key, 0, func(ctx context.Context, conn *pgx.Conn) error {
			return conn.QueryRow(ctx, "SELECT CASE WHEN pg_try_advisory_lock(hashtext($1)) THEN nextval('grants') ELSE 0 END", key).Scan(&token)
		})
		if err != nil {
			return lockapi.Lease{}, notAcquired(err)
		}
		if token == 0 {
			return lockapi.Lease{}, fmt.Errorf("advisory lock held by another session: %w", lockapi.ErrNotAcquired)
		}
		if c.OnHold != nil {
			c.OnHold(c.connName(), key, true)
		}
		return lockapi.Lease{Token: uint64(token), Detail: "pg_try_advisory_lock on " + c.connName()}, nil
	}
	return c.selectForUpdate(key, until)
}

// insertLock inserts the lock row, or takes over a row whose expiry is
// before this client's wall clock (INSERT ... ON CONFLICT DO UPDATE WHERE
// expiry < now).
func (c *Client) insertLock(key, owner string) (lockapi.Lease, error) {
	now := int64(c.env.Wall())
	var token int64
	var oldOwner *string
	var oldExpiry *int64
	found, replaced := true, false
	err := c.call("insert lock row "+key, 0, func(ctx context.Context, conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, `WITH old AS (SELECT owner, expiry FROM locks WHERE name = $1)
INSERT INTO locks (name, owner, expiry, token) VALUES ($1, $2, $4, nextval('grants'))
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expiry = EXCLUDED.expiry, token = EXCLUDED.token
WHERE locks.expiry < $3
RETURNING token, xmax::text <> '0', (SELECT owner FROM old), (SELECT expiry FROM old)`,
			key, owner, now, now+int64(c.opts.TTL)).Scan(&token, &replaced, &oldOwner, &oldExpiry)
		if errors.Is(err, pgx.ErrNoRows) {
			found = false
			return nil
		}
		return err
	})
	if err != nil {
		return lockapi.Lease{}, notAcquired(err)
	}
	if !found {
		return lockapi.Lease{}, fmt.Errorf("lock row %q held (not expired by this client's clock): %w", key, lockapi.ErrNotAcquired)
	}
	// xmax is set on a row the statement updated: it replaced an expired
	// row (whose owner and expiry the snapshot before it shows).
	if replaced && oldOwner != nil && oldExpiry != nil && c.OnTakeover != nil {
		c.OnTakeover(fmt.Sprintf("%s took over lock row %q of %s: its expiry %s is before %s's clock %s",
			owner, key, *oldOwner, wallTime(*oldExpiry), owner, wallTime(now)))
	}
	return lockapi.Lease{Token: uint64(token), Detail: fmt.Sprintf("lock row %q inserted, expiry by the client's wall clock", key)}, nil
}

func wallTime(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }

// selectForUpdate begins a transaction and locks the key's row (SELECT ...
// FOR UPDATE, waiting up to min(wait, lock-wait-timeout) by lock_timeout,
// NOWAIT when there is no time left); the grant takes a number from the
// grant sequence.
func (c *Client) selectForUpdate(key string, until time.Duration) (lockapi.Lease, error) {
	wait := min(max(0, until-c.env.Mono()), c.opts.LockWaitTimeout)
	var token int64
	err := c.call("select for update "+key, wait, func(ctx context.Context, conn *pgx.Conn) error {
		if _, err := conn.Exec(ctx, "INSERT INTO mutex (name) VALUES ($1) ON CONFLICT DO NOTHING", key); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
		c.inTxn = true
		q := "SELECT 1 FROM mutex WHERE name = $1 FOR UPDATE NOWAIT"
		if wait >= time.Millisecond {
			if _, err := conn.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = %d", wait.Milliseconds())); err != nil {
				return err
			}
			q = "SELECT 1 FROM mutex WHERE name = $1 FOR UPDATE"
		}
		var one int
		if err := conn.QueryRow(ctx, q, key).Scan(&one); err != nil {
			return err
		}
		return conn.QueryRow(ctx, "SELECT nextval('grants')").Scan(&token)
	})
	if err != nil {
		c.rollback()
		return lockapi.Lease{}, notAcquired(err)
	}
	return lockapi.Lease{Token: uint64(token), Detail: "SELECT FOR UPDATE in a transaction of " + c.connName()}, nil
}

// rollback ends an open transaction after a failed or unknown lock request
// (after an unknown one the connection is gone already: the server aborts
// the transaction when it sees the connection close).
func (c *Client) rollback() {
	if c.inTxn && c.conn != nil {
		_ = c.call("rollback", 0, func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, "ROLLBACK")
			return err
		})
	}
	c.inTxn = false
}

// Release gives the lock back.
func (c *Client) Release(l lockapi.Lease) error {
	c.owner = ""
	switch c.opts.Mode {
	case simdb.ModeOptimistic:
		return nil
	case simdb.ModeUniqueRow:
		var n int64
		err := c.call("delete lock row "+l.Key, 0, func(ctx context.Context, conn *pgx.Conn) error {
			tag, err := conn.Exec(ctx, "DELETE FROM locks WHERE name = $1 AND owner = $2", l.Key, l.Owner)
			n = tag.RowsAffected()
			return err
		})
		if c.pending {
			c.env.Sleep(c.opts.CommitDelay)
			c.commitData(l.Owner)
		}
		return released(l, n == 1, "not owner", err)
	case simdb.ModeAdvisory:
		var ok bool
		err := c.call("pg_advisory_unlock "+l.Key, 0, func(ctx context.Context, conn *pgx.Conn) error {
			return conn.QueryRow(ctx, "SELECT pg_advisory_unlock(hashtext($1))", l.Key).Scan(&ok)
		})
		if c.OnHold != nil {
			c.OnHold(c.connName(), l.Key, false)
		}
		return released(l, ok, "not owner", err)
	}
	if !c.inTxn || c.conn == nil {
		return fmt.Errorf("database: release %s: no transaction open: %w", l.Key, lockapi.ErrNotHeld)
	}
	told := c.commitBegins(l.Owner)
	var committed bool
	err := c.call("commit", 0, func(ctx context.Context, conn *pgx.Conn) error {
		c.inTxn = false
		tag, err := conn.Exec(ctx, "COMMIT")
		committed = tag.String() == "COMMIT"
		return err
	})
	if told {
		c.committed(l.Owner, committed, err)
	}
	return released(l, committed, "aborted", err)
}

// txnBegun tells OnTxn, once per acquisition, that a data write of the
// acquisition held goes into a transaction.
func (c *Client) txnBegun(key string) {
	if c.OnTxn == nil || c.owner == "" || c.txnOwner == c.owner {
		return
	}
	c.txnOwner = c.owner
	c.OnTxn(simdb.TxnStep{Owner: c.owner, Key: key})
}

// commitBegins tells OnTxn that the commit of owner's data transaction is
// sent, when that transaction holds writes of owner, and reports whether
// it did (committed must then tell the outcome).
func (c *Client) commitBegins(owner string) bool {
	if c.OnTxn == nil || owner == "" || c.txnOwner != owner {
		return false
	}
	c.txnOwner = ""
	c.OnTxn(simdb.TxnStep{Commit: true, Owner: owner})
	return true
}

// committed tells OnTxn how owner's commit ended (err, the request's
// error): committed when PostgreSQL answered COMMIT; certainly not when it
// answered ROLLBACK (the transaction had failed) or an error that says the
// request did not run or failed; maybe when its outcome is unknown (a
// timeout, a connection lost mid-request), and also when the COMMIT was
// never sent because a keep-alive ping held the connection (errBusy): the
// transaction then stays open on the connection, and a later COMMIT on it
// may commit these writes.
func (c *Client) committed(owner string, committed bool, err error) {
	switch {
	case errors.Is(err, errBusy):
		err = fmt.Errorf("%w: the transaction stays open: %w", err, lockapi.ErrUnknown)
	case err == nil && !committed:
		err = errors.New("database: commit: the server rolled the transaction back (aborted)")
	}
	c.OnTxn(simdb.TxnStep{Commit: true, Done: true, Owner: owner, Err: err})
}

func released(l lockapi.Lease, ok bool, why string, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("database: release %s: %w", l.Key, err)
	case !ok:
		return fmt.Errorf("database: release %s: %s: %w", l.Key, why, lockapi.ErrNotHeld)
	}
	return nil
}

// commitData commits unlock-before-commit's data transaction of owner.
func (c *Client) commitData(owner string) {
	told := c.commitBegins(owner)
	if !c.take(c.opts.RequestTimeout) {
		if told {
			c.committed(owner, false, fmt.Errorf("database: commit: %w", errBusy))
		}
		return
	}
	defer c.give()
	c.pending = false
	if c.data == nil {
		if told {
			c.committed(owner, false, fmt.Errorf("database: commit: %w: the data connection had ended", errClosed))
		}
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.RequestTimeout)
	defer cancel()
	tag, err := c.data.Exec(ctx, "COMMIT")
	if err != nil {
		if c.data.IsClosed() {
			c.data = nil
		}
		err = fmt.Errorf("database: commit: %w", classify(err))
	}
	if told {
		c.committed(owner, tag.String() == "COMMIT", err)
	}
}

// Read reads a data row: in the lock's transaction for for-update, the
// committed row otherwise.
func (c *Client) Read(key string, token uint64) (int64, error) {
	var value, version int64
	err := c.call("read "+key, 0, func(ctx context.Context, conn *pgx.Conn) error {
		err := conn.QueryRow(ctx, "SELECT value, version FROM data WHERE key = $1", key).Scan(&value, &version)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, readError(err)
	}
	c.versions[key] = version
	return value, nil
}

func readError(err error) error {
	if errors.Is(err, errClosed) {
		return fmt.Errorf("%w: %w", err, lockapi.ErrRejected)
	}
	return err
}

const upsert = "INSERT INTO data (key, value, version) VALUES ($1, $2, 1) " +
	"ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = data.version + 1"

// Write writes a data row: for-update in the lock's transaction, which the
// release commits (a write after the server ended the transaction is
// rejected: the connection is gone); optimistic as a compare-and-swap on
// the version read (versions=pair: on every row read, in a transaction
// that locks them); unique-row with unlock-before-commit in a transaction
// on a second connection that commits after the release; otherwise
// autocommit.
func (c *Client) Write(key string, value int64, token uint64) error {
	var ok bool
	var err error
	switch {
	case c.opts.Mode == simdb.ModeOptimistic && c.opts.Versions == simdb.VersionsPair:
		ok, err = c.writeIfPairUnchanged(key, value)
	case c.opts.Mode == simdb.ModeOptimistic:
		err = c.call("write "+key, 0, func(ctx context.Context, conn *pgx.Conn) error {
			tag, err := conn.Exec(ctx, upsert+" WHERE data.version = $3", key, value, c.versions[key])
			ok = tag.RowsAffected() == 1
			return err
		})
	case c.opts.UnlockBeforeCommit:
		ok, err = c.writeUncommitted(key, value)
	default:
		err = c.call("write "+key, 0, func(ctx context.Context, conn *pgx.Conn) error {
			if c.opts.Mode == simdb.ModeForUpdate && c.inTxn {
				// In the lock's transaction (on this connection: a new
				// one would have closed it): applied at the release's commit.
				c.txnBegun(key)
			}
			_, err := conn.Exec(ctx, upsert, key, value)
			ok = true
			return err
		})
	}
	switch {
	case errors.Is(err, errClosed):
		return fmt.Errorf("database: write %s: %w: %w", key, err, lockapi.ErrRejected)
	case err != nil:
		return fmt.Errorf("database: write %s: %w", key, err)
	case !ok:
		return fmt.Errorf("database: write %s: version: %w", key, lockapi.ErrRejected)
	}
	return nil
}

// writeIfPairUnchanged writes key if no row read since the acquire changed:
// it locks the rows read (in key order), compares their versions and writes,
// in one transaction.
func (c *Client) writeIfPairUnchanged(key string, value int64) (bool, error) {
	keys := slices.Sorted(maps.Keys(c.versions))
	ok := false
	err := c.call("write "+key, 0, func(ctx context.Context, conn *pgx.Conn) error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // after a commit it does nothing
		rows, err := tx.Query(ctx, "SELECT key, version FROM data WHERE key = ANY($1) ORDER BY key FOR UPDATE", keys)
		if err != nil {
			return err
		}
		now := map[string]int64{}
		for rows.Next() {
			var k string
			var v int64
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return err
			}
			now[k] = v
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range keys {
			if now[k] != c.versions[k] {
				return nil
			}
		}
		if _, err := tx.Exec(ctx, upsert, key, value); err != nil {
			return err
		}
		ok = true
		return tx.Commit(ctx)
	})
	return ok, err
}

// writeUncommitted writes key in a transaction on the data connection that
// the release commits commit-delay after deleting the lock row.
func (c *Client) writeUncommitted(key string, value int64) (bool, error) {
	if !c.take(c.opts.RequestTimeout) {
		return false, fmt.Errorf("%w: %w", errClosed, errBusy)
	}
	defer c.give()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.RequestTimeout)
	defer cancel()
	if c.data == nil {
		conn, err := c.srv.Connect(ctx, c.addr, c.env.Name()+"/data", Params(c.opts))
		if err != nil {
			return false, fmt.Errorf("%w: %w", errClosed, err)
		}
		c.data = conn
	}
	if !c.pending {
		if _, err := c.data.Exec(ctx, "BEGIN"); err != nil {
			return false, c.dataErr(err)
		}
		c.pending = true
	}
	c.txnBegun(key)
	if _, err := c.data.Exec(ctx, upsert, key, value); err != nil {
		return false, c.dataErr(err)
	}
	return true, nil
}

func (c *Client) dataErr(err error) error {
	if c.data.IsClosed() {
		c.data, c.pending = nil, false
	}
	return classify(err)
}
