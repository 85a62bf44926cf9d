// Package databaselive is the live form of the database locks: a real
// PostgreSQL server that locklab starts and stops, and lock clients on
// real connections (github.com/jackc/pgx/v5), mirroring the simulated
// backends/database option for option.
//
// Server runs initdb (or copies the cluster a previous initdb left in the
// user's cache directory) and postgres on a free 127.0.0.1 port, with no
// unix socket, its data directory and logs in the run's directory, as the
// postgres user when the harness is root (postgres refuses root), through
// internal/proc (own process group, parent-death signal, stopped on exit). It
// performs the real faults: Pause/Resume (SIGSTOP/SIGCONT of the
// postmaster and every backend: postgres puts its backends in sessions of
// their own), Crash (SIGKILL of them all) and Restart (on the same data:
// what was committed survives; fsync is off, which only a machine crash
// would expose). It reads its log for the connections it ends itself
// (Event: idle_in_transaction_session_timeout, idle_session_timeout).
//
// The client is the simulated database.Client itself (its recipe, written
// once) over a Transport that runs each of its requests as SQL on
// PostgreSQL:
//
//   - unique-row: INSERT INTO locks ... ON CONFLICT (name) DO UPDATE ...
//     WHERE locks.expiry < <the client's wall clock>: the expiry is the
//     client's wall clock + ttl, so a client whose clock runs ahead takes
//     over a live row (a row-taken-over event); DELETE ... WHERE owner
//     releases.
//   - for-update: BEGIN; SELECT ... FOR UPDATE (lock_timeout = the wait,
//     NOWAIT when none is left), held until the release's COMMIT; with
//     resource=db the data rows are read and written in that transaction.
//   - advisory: pg_try_advisory_lock / pg_advisory_unlock on the session.
//   - optimistic: no lock; UPDATE ... WHERE version = <the version read>
//     (versions=pair: the rows read are locked FOR UPDATE and compared in
//     one transaction before the write).
//
// Every grant takes a number from a sequence (the fencing token).
// conn-timeout becomes each session's idle_in_transaction_session_timeout
// and idle_session_timeout (and its TCP keepalives), and a goroutine pings
// every conn-timeout/3, paused with the client, as the simulated client
// does. A request that times out is indeterminate (info) and ends its
// connection — pgx cannot abandon a request and keep the connection — so
// the server releases that session's locks when it sees the close; a
// request the server never ran (it had ended the connection) is a definite
// failure.
//
// With resource=db the client tells the history the begin and the commit
// of the transactions that hold its data writes (database.Client.OnTxn), as
// the simulated client does: a COMMIT answered ROLLBACK, or refused because
// the server had ended the connection, committed nothing (fail); one that
// timed out may have (info). A release that finds its session ended (a
// crash: "terminating connection due to unexpected postmaster exit",
// SQLSTATE 57P01; a terminated backend) fails saying the lock was no longer
// held (lockapi.ErrNotHeld), as the recipe says for every world: a backend
// that ends rolls its transaction back and releases its row and advisory
// locks, so the holding ended before the answer.
//
// This package is live-only: nothing simulated imports it.
package databaselive
