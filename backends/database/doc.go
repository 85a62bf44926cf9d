// Package database models the locks application developers build on a SQL
// database, inside the simulator, as described in SYSTEMS.md (`database`).
//
// One Server (node "db") holds data rows with versions, unique lock rows,
// row locks with wait queues (SELECT ... FOR UPDATE waits up to the
// lock-wait timeout), session-level advisory locks, and connections. A
// connection silent for conn-timeout is ended: its transaction aborts (its
// writes are discarded, its row locks released) and its advisory locks go —
// the server noticing a dead client. Clients keep their connection alive
// with a ping every conn-timeout/3 from a background process, which a pause
// of the client stops too.
//
// Client implements backends.Lock in one of four modes: unique-row (INSERT a
// row with an expiry taken from the client's wall clock; an acquirer whose
// clock says the row expired takes it over), for-update (a transaction
// holding a row lock until commit), advisory (pg_try_advisory_lock) and
// optimistic (no lock). With resource=db it is also the backends.Storage of
// the protected data: for-update writes in the lock's own transaction and
// commits it (a write after the server aborted the transaction is
// rejected), optimistic writes compare the version they read, and
// unlock-before-commit makes unique-row commit the data after releasing the
// lock. Fencing tokens are the server's grant sequence numbers.
//
// The server reports "row-taken-over" and "transaction-aborted" events.
// Not modelled: SQL, isolation levels beyond row locks, replication.
package database
