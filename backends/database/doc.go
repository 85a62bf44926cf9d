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
// Client implements lockapi.Lock in one of four modes: unique-row (INSERT a
// row with an expiry taken from the client's wall clock; an acquirer whose
// clock says the row expired takes it over), for-update (a transaction
// holding a row lock until commit), advisory (pg_try_advisory_lock) and
// optimistic (no lock). With resource=db it is also the lockapi.Storage of
// the protected data: for-update writes in the lock's own transaction and
// commits it (a write after the server aborted the transaction is
// rejected), optimistic writes compare the version they read, and
// unlock-before-commit makes unique-row commit the data after releasing the
// lock. Fencing tokens are the server's grant sequence numbers.
//
// The server reports "row-taken-over" and "transaction-aborted" events. A
// crash ends every connection for good (a request on one is answered
// "closed" after the restart) and loses every uncommitted write and every
// row and advisory lock; committed rows, unique rows included, survive. With
// resource=db the client tells the history when a transaction that holds
// data writes begins and how its commit ended (Client.OnTxn), and the server
// keeps the record of its grants (Server.RecordGrants) and of the writes it
// applied to its data rows, committed or not (Server.RecordWrites).
// Not modelled: SQL, isolation levels beyond row locks, replication.
//
// # Fidelity
//
// What of PostgreSQL matters for a lock built on it, whether the model has
// it, and the test that shows it (sim: this package; live:
// backends/database/live and package live, against a real server; the
// catalog: harness). docs/fidelity/postgresql.md has the same as a table.
//
//   - Unique row, taken over when its expiry (the holder's wall clock +
//     ttl) is before the acquirer's wall clock: modelled.
//     TestUniqueRowExpiresByTheAcquirersWallClock; catalog db-clock-skew;
//     live TestPostgreSQLSimulatedAndLiveAgree.
//   - Row lock (SELECT FOR UPDATE) held until COMMIT or ROLLBACK, waiters
//     queued, the wait bounded (lock_timeout, NOWAIT): modelled.
//     TestEachModeExcludesUntilRelease; live (oncall-write-skew).
//   - A silent connection ended, its transaction aborted and its locks freed
//     (idle_in_transaction_session_timeout, idle_session_timeout):
//     modelled as conn-timeout. TestASilentConnectionLosesItsLocks; catalog
//     db-connection-stall; live TestTheServerReportsTheConnectionsItEnds.
//   - The next request on an ended connection fails without running:
//     modelled ("closed"). TestDataInTheLockTransaction; live
//     TestTheServerReportsTheConnectionsItEnds.
//   - Writes in a transaction take effect only at COMMIT, never if it
//     aborts: modelled, and recorded (begin, commit) for the checks.
//     TestDataInTheLockTransaction; models
//     TestATransactionalWriteAppliesOnlyWhenItsTransactionCommits; catalog
//     db-unlock-before-commit; live (db-connection-stall/fixed). The live
//     client records the begin and the commit too, the same way:
//     TestPostgreSQLRecordsItsDataTransactions.
//   - A crash ends every connection (a pre-crash connection's next request
//     fails), loses uncommitted writes and every row and advisory lock,
//     keeps committed rows: modelled. TestACrashEndsEveryConnection; live
//     TestACrashEndsEveryConnection, TestTheServerUndergoesRealFaults.
//   - Fencing tokens from a sequence that never repeats, across a crash too:
//     modelled (the grant counter). Catalog kleppmann-gc-pause/database-fixed;
//     live TestTheServerUndergoesRealFaults.
//   - Session-level advisory locks: modelled, except that PostgreSQL counts a
//     session's repeated locks and the model does not.
//     TestASilentConnectionLosesItsLocks.
//   - Optimistic compare-and-swap on versions (row, pair): modelled.
//     TestOptimisticRejectsAConflictingWrite,
//     TestVersionsOfThePairSeeTheWriteSkew; live (oncall-write-skew).
//   - A request that times out: unknown outcome (info) in both; the model
//     keeps the connection (a lock request's excepted), the live client ends
//     it (pgx cannot abandon a request), which aborts its transaction.
//   - The record of grants (ground truth): simulator only.
//     TestTheServersRecordOfGrants; harness
//     TestLockVerdictsAgreeWithTheServers.
//   - The record of writes to the data rows (ground truth of the data,
//     resource=db): simulator only. TestTheServersRecordOfWrites; harness
//     TestDataVerdictsAgreeWithTheStorage,
//     TestOnCallVerdictsAgreeWithTheStorage.
//   - Not modelled: the server's clock (no lock reads it; live refuses a
//     clock jump of db), durability with fsync off (a crash keeps every
//     committed row), isolation levels and serialization failures, deadlock
//     detection, replication and failover.
package database
