package databaselive

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	simdb "github.com/locklab/locklab/backends/database"
	"github.com/locklab/locklab/lockapi"
)

// PgxVersion is the version of github.com/jackc/pgx the clients use.
const PgxVersion = "v5.12.0"

// Transport is the live simdb.Transport of one client node: each request of
// the simulated client's recipe (simdb.Req) runs as SQL on a real
// PostgreSQL connection (pgx), one connection at a time (a new one after the
// server ended it or a request on it timed out), kept alive by a background
// goroutine that pings it every conn-timeout/3 and stops with the client's
// pauses. With unlock-before-commit the data transaction (begin, writes,
// commit) runs on a second connection, so that the lock row's DELETE is
// not part of it.
type Transport struct {
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

	// use is the connections' one user at a time (the client or its
	// keep-alive ping); a mutex that can be waited for with a timeout.
	use     chan struct{}
	conn    *pgx.Conn
	connN   int
	txn     bool      // a transaction is open on conn
	data    *pgx.Conn // unlock-before-commit: the data transaction's connection
	dataTxn bool      // a transaction is open on data
	pinging bool
	closed  bool
	fresh   func()
}

var _ simdb.Transport = (*Transport)(nil)

// NewClient returns the client of the node env names, the simulated
// client's recipe (simdb.Client) over a Transport connecting to addr (the
// server's address or a proxy's); fork gives the environment of its
// keep-alive goroutine (paused with the client). When ctx ends, every
// request in flight ends (the run stopped).
func NewClient(ctx context.Context, env lockapi.Env, fork func() lockapi.Env, srv *Server, addr string, o simdb.Options) (*simdb.Client, *Transport) {
	t := &Transport{ctx: ctx, env: env, fork: fork, srv: srv, addr: addr, opts: o, use: make(chan struct{}, 1)}
	return simdb.New(env, t, o), t
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
var errBusy = fmt.Errorf("%w: the connection waits for the server's answer to a keep-alive ping", simdb.ErrNotSent)

// take waits up to timeout to use the connections.
func (t *Transport) take(timeout time.Duration) bool {
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case t.use <- struct{}{}:
		return true
	case <-tm.C:
		return false
	}
}

func (t *Transport) give() { <-t.use }

// Close closes the client's connections (after a ping in flight, which
// its timeout bounds).
func (t *Transport) Close() {
	t.use <- struct{}{}
	defer t.give()
	t.closed = true
	for _, conn := range []*pgx.Conn{t.conn, t.data} {
		if conn != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_ = conn.Close(ctx)
			cancel()
		}
	}
	t.conn, t.data = nil, nil
}

// OnNewConnection registers fn.
func (t *Transport) OnNewConnection(fn func()) { t.fresh = fn }

// connName is the application_name of the client's current connection.
func (t *Transport) connName() string { return fmt.Sprintf("%s/%d", t.env.Name(), t.connN) }

// Conn names the current connection ("" while there is none: it ended and
// the next request opens one).
func (t *Transport) Conn() string {
	if t.conn == nil {
		return ""
	}
	return t.connName()
}

// Reconnect closes the current connection, if it is still open: the server
// ends its session, aborting its transaction and releasing its locks.
func (t *Transport) Reconnect() {
	if t.conn == nil || !t.take(t.opts.RequestTimeout) {
		return
	}
	defer t.give()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = t.conn.Close(ctx)
	t.conn, t.txn = nil, false
}

// open returns the current connection, opening one if there is none.
func (t *Transport) open(ctx context.Context) (*pgx.Conn, error) {
	if t.closed {
		return nil, fmt.Errorf("%w: the client is closed", simdb.ErrClosed)
	}
	if t.conn != nil {
		return t.conn, nil
	}
	t.connN++
	t.txn = false
	if t.fresh != nil {
		t.fresh()
	}
	conn, err := t.srv.Connect(ctx, t.addr, t.connName(), Params(t.opts))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", simdb.ErrClosed, err)
	}
	t.conn = conn
	if !t.pinging && t.fork != nil {
		t.pinging = true
		go t.ping(t.fork())
	}
	return conn, nil
}

// ping keeps the current connection alive, as the simulated client's
// background process does. A ping waits for its answer up to conn-timeout
// (by then the server has ended a connection it did not hear from), not
// the request timeout: pgx closes a connection whose request timed out,
// and a ping lost in a short partition must not end a connection the
// server keeps. Meanwhile the client's own requests are not sent (errBusy).
func (t *Transport) ping(env lockapi.Env) {
	for {
		env.Sleep(t.opts.ConnTimeout / 3)
		if !t.take(t.opts.ConnTimeout) {
			continue
		}
		if t.closed {
			t.give()
			return
		}
		if t.conn != nil && !t.conn.IsClosed() {
			ctx, cancel := context.WithTimeout(t.ctx, t.opts.ConnTimeout)
			_ = t.conn.Ping(ctx)
			cancel()
		}
		t.give()
	}
}

// classify maps a pgx error to the recipe's outcomes.
func classify(err error) error {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Severity == "FATAL":
		// The server ended the session before it read the request
		// (idle timeouts, shutdown): the request did not run.
		return fmt.Errorf("%w (%s %s)", simdb.ErrClosed, pe.Code, pe.Message)
	case errors.As(err, &pe):
		return err
	case pgconn.SafeToRetry(err):
		return fmt.Errorf("%w: %w", simdb.ErrClosed, err)
	}
	return fmt.Errorf("%w: %w", lockapi.ErrUnknown, err)
}

// lockNotAvailable is PostgreSQL's lock_not_available (NOWAIT, lock_timeout).
func lockNotAvailable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// Call runs req as SQL within timeout. A request the server certainly did
// not run (it had ended the connection, none could be opened, or a ping
// held it) wraps simdb.ErrClosed; a timeout or a connection lost
// mid-request is lockapi.ErrUnknown; an error the server returned (a
// failed statement) is returned as is. A connection that ended is dropped:
// the next call opens a new one. A read the server did not run is also
// rejected (lockapi.ErrRejected), as a write is.
func (t *Transport) Call(req simdb.Req, timeout time.Duration) (simdb.Resp, error) {
	if t.opts.UnlockBeforeCommit && (req.Op == simdb.OpBegin || req.Op == simdb.OpWrite || req.Op == simdb.OpCommit) {
		return t.onData(req, timeout)
	}
	if req.Op == simdb.OpRollback && (!t.txn || t.conn == nil) {
		t.txn = false
		return simdb.Resp{OK: true}, nil // nothing to roll back
	}
	if !t.take(timeout) {
		return simdb.Resp{}, fmt.Errorf("%w: %w", simdb.ErrClosed, errBusy)
	}
	defer t.give()
	ctx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	conn, err := t.open(ctx)
	if err != nil {
		return simdb.Resp{}, rejectedRead(req, err)
	}
	r, err := t.run(ctx, conn, req, timeout)
	if err == nil {
		return r, nil
	}
	if conn.IsClosed() {
		t.conn, t.txn = nil, false
	}
	return r, rejectedRead(req, classify(err))
}

func rejectedRead(req simdb.Req, err error) error {
	if req.Op == simdb.OpRead && errors.Is(err, simdb.ErrClosed) {
		return fmt.Errorf("%w: %w", err, lockapi.ErrRejected)
	}
	return err
}

const upsert = "INSERT INTO data (key, value, version) VALUES ($1, $2, 1) " +
	"ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = data.version + 1"

// run runs req on conn.
func (t *Transport) run(ctx context.Context, conn *pgx.Conn, req simdb.Req, timeout time.Duration) (simdb.Resp, error) {
	switch req.Op {
	case simdb.OpInsertLock:
		return t.insertLock(ctx, conn, req)
	case simdb.OpDeleteLock:
		tag, err := conn.Exec(ctx, "DELETE FROM locks WHERE name = $1 AND owner = $2", req.Key, req.Owner)
		return simdb.Resp{OK: tag.RowsAffected() == 1, Err: "not owner"}, err
	case simdb.OpAdvisoryTry:
		var token int64
		err := conn.QueryRow(ctx, "SELECT CASE WHEN pg_try_advisory_lock(hashtext($1)) THEN nextval('grants') ELSE 0 END",
			req.Key).Scan(&token)
		if err != nil {
			return simdb.Resp{}, err
		}
		if token == 0 {
			return simdb.Resp{Owner: "another session"}, nil
		}
		if t.OnHold != nil {
			t.OnHold(t.connName(), req.Key, true)
		}
		return simdb.Resp{OK: true, Token: uint64(token)}, nil
	case simdb.OpAdvisoryUnlock:
		var ok bool
		err := conn.QueryRow(ctx, "SELECT pg_advisory_unlock(hashtext($1))", req.Key).Scan(&ok)
		if t.OnHold != nil {
			t.OnHold(t.connName(), req.Key, false)
		}
		return simdb.Resp{OK: ok, Err: "not owner"}, err
	case simdb.OpSelectForUpdate:
		return t.selectForUpdate(ctx, conn, strings.TrimPrefix(req.Key, "lock/"), min(req.Wait, t.opts.LockWaitTimeout))
	case simdb.OpCommit:
		if !t.txn {
			return simdb.Resp{Err: "no transaction open"}, nil
		}
		t.txn = false
		tag, err := conn.Exec(ctx, "COMMIT")
		return simdb.Resp{OK: tag.String() == "COMMIT", Err: "aborted"}, err
	case simdb.OpRollback:
		t.txn = false
		_, err := conn.Exec(ctx, "ROLLBACK")
		return simdb.Resp{OK: true}, err
	case simdb.OpRead:
		var r simdb.Resp
		err := conn.QueryRow(ctx, "SELECT value, version FROM data WHERE key = $1", strings.TrimPrefix(req.Key, "data/")).
			Scan(&r.Value, &r.Version)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		r.OK = err == nil
		return r, err
	case simdb.OpWrite:
		return write(ctx, conn, req)
	case simdb.OpPing:
		return simdb.Resp{OK: true}, conn.Ping(ctx)
	}
	return simdb.Resp{}, fmt.Errorf("database live: %s is not a request the client sends here", req.Op)
}

// insertLock inserts the lock row, or takes over a row whose expiry is
// before this client's wall clock (INSERT ... ON CONFLICT DO UPDATE WHERE
// expiry < now).
func (t *Transport) insertLock(ctx context.Context, conn *pgx.Conn, req simdb.Req) (simdb.Resp, error) {
	now := int64(req.Now)
	var token int64
	var oldOwner *string
	var oldExpiry *int64
	replaced := false
	err := conn.QueryRow(ctx, `WITH old AS (SELECT owner, expiry FROM locks WHERE name = $1)
INSERT INTO locks (name, owner, expiry, token) VALUES ($1, $2, $4, nextval('grants'))
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expiry = EXCLUDED.expiry, token = EXCLUDED.token
WHERE locks.expiry < $3
RETURNING token, xmax::text <> '0', (SELECT owner FROM old), (SELECT expiry FROM old)`,
		req.Key, req.Owner, now, int64(req.Expiry)).Scan(&token, &replaced, &oldOwner, &oldExpiry)
	if errors.Is(err, pgx.ErrNoRows) {
		return simdb.Resp{Owner: "another owner (not expired by this client's clock)"}, nil
	}
	if err != nil {
		return simdb.Resp{}, err
	}
	// xmax is set on a row the statement updated: it replaced an expired
	// row (whose owner and expiry the snapshot before it shows).
	if replaced && oldOwner != nil && oldExpiry != nil && t.OnTakeover != nil {
		t.OnTakeover(fmt.Sprintf("%s took over lock row %q of %s: its expiry %s is before %s's clock %s",
			req.Owner, req.Key, *oldOwner, wallTime(*oldExpiry), req.Owner, wallTime(now)))
	}
	return simdb.Resp{OK: true, Token: uint64(token)}, nil
}

func wallTime(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }

// selectForUpdate begins a transaction and locks the key's row (SELECT ...
// FOR UPDATE, waiting up to wait by lock_timeout, NOWAIT when there is no
// time left); the grant takes a number from the grant sequence. A lock not
// available is a refusal; the transaction stays open until the client's
// rollback.
func (t *Transport) selectForUpdate(ctx context.Context, conn *pgx.Conn, key string, wait time.Duration) (simdb.Resp, error) {
	if _, err := conn.Exec(ctx, "INSERT INTO mutex (name) VALUES ($1) ON CONFLICT DO NOTHING", key); err != nil {
		return simdb.Resp{}, err
	}
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		return simdb.Resp{}, err
	}
	t.txn = true
	var token int64
	err := func() error {
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
	}()
	switch {
	case lockNotAvailable(err):
		var pe *pgconn.PgError
		errors.As(err, &pe)
		return simdb.Resp{Owner: "another session", Err: pe.Message}, nil
	case err != nil && !conn.IsClosed():
		_, _ = conn.Exec(ctx, "ROLLBACK") // the failed statement aborted the transaction
		t.txn = false
		return simdb.Resp{}, err
	case err != nil:
		return simdb.Resp{}, err
	}
	return simdb.Resp{OK: true, Token: uint64(token)}, nil
}

// write writes a data row: a compare-and-swap on the versions of the read
// set (optimistic, versions=pair: the rows read are locked, in key order,
// compared and the row written in one transaction), on the row's own
// version (IfVersion), or unconditionally (in the open transaction, if
// any, else autocommit).
func write(ctx context.Context, conn *pgx.Conn, req simdb.Req) (simdb.Resp, error) {
	key := strings.TrimPrefix(req.Key, "data/")
	if req.ReadSet != nil {
		ok, err := writeIfUnchanged(ctx, conn, key, req.Value, req.ReadSet)
		return simdb.Resp{OK: ok, Err: "version"}, err
	}
	if req.IfVersion >= 0 {
		tag, err := conn.Exec(ctx, upsert+" WHERE data.version = $3", key, req.Value, req.IfVersion)
		return simdb.Resp{OK: tag.RowsAffected() == 1, Err: "version"}, err
	}
	_, err := conn.Exec(ctx, upsert, key, req.Value)
	return simdb.Resp{OK: err == nil}, err
}

// writeIfUnchanged writes key if no row of the read set changed.
func writeIfUnchanged(ctx context.Context, conn *pgx.Conn, key string, value int64, read []simdb.RowVersion) (bool, error) {
	keys := make([]string, len(read))
	for i, rv := range read {
		keys[i] = strings.TrimPrefix(rv.Key, "data/")
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after a commit it does nothing
	rows, err := tx.Query(ctx, "SELECT key, version FROM data WHERE key = ANY($1) ORDER BY key FOR UPDATE", keys)
	if err != nil {
		return false, err
	}
	now := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return false, err
		}
		now[k] = v
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	for i, k := range keys {
		if now[k] != read[i].Version {
			return false, nil
		}
	}
	if _, err := tx.Exec(ctx, upsert, key, value); err != nil {
		return false, err
	}
	return true, tx.Commit(ctx)
}

// onData runs unlock-before-commit's data transaction on the data
// connection: a begin (once), the writes in it, and its commit.
func (t *Transport) onData(req simdb.Req, timeout time.Duration) (simdb.Resp, error) {
	if !t.take(timeout) {
		return simdb.Resp{}, fmt.Errorf("%w: %w", simdb.ErrClosed, errBusy)
	}
	defer t.give()
	ctx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	if req.Op == simdb.OpCommit {
		t.dataTxn = false
		if t.data == nil {
			return simdb.Resp{}, fmt.Errorf("%w: the data connection had ended", simdb.ErrClosed)
		}
		tag, err := t.data.Exec(ctx, "COMMIT")
		if err != nil {
			return simdb.Resp{}, t.dataErr(err)
		}
		return simdb.Resp{OK: tag.String() == "COMMIT", Err: "aborted"}, nil
	}
	if t.data == nil {
		conn, err := t.srv.Connect(ctx, t.addr, t.env.Name()+"/data", Params(t.opts))
		if err != nil {
			return simdb.Resp{}, fmt.Errorf("%w: %w", simdb.ErrClosed, err)
		}
		t.data = conn
	}
	if !t.dataTxn {
		if _, err := t.data.Exec(ctx, "BEGIN"); err != nil {
			return simdb.Resp{}, t.dataErr(err)
		}
		t.dataTxn = true
	}
	if req.Op == simdb.OpBegin {
		return simdb.Resp{OK: true}, nil
	}
	if _, err := t.data.Exec(ctx, upsert, strings.TrimPrefix(req.Key, "data/"), req.Value); err != nil {
		return simdb.Resp{}, t.dataErr(err)
	}
	return simdb.Resp{OK: true}, nil
}

func (t *Transport) dataErr(err error) error {
	if t.data.IsClosed() {
		t.data, t.dataTxn = nil, false
	}
	return classify(err)
}
