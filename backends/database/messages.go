package database

import "time"

// OpType names a request to the database.
type OpType string

// Requests.
const (
	OpPing            OpType = "ping"              // keep the connection alive
	OpInsertLock      OpType = "insert-lock"       // unique-row acquire (or take over an expired row)
	OpDeleteLock      OpType = "delete-lock"       // unique-row release
	OpSelectForUpdate OpType = "select-for-update" // begin if needed, then lock the row (waits)
	OpRead            OpType = "read"              // a data row: in the open transaction, else committed
	OpWrite           OpType = "write"             // a data row: buffered in the open transaction, else autocommit
	OpBegin           OpType = "begin"
	OpCommit          OpType = "commit"
	OpRollback        OpType = "rollback"
	OpAdvisoryTry     OpType = "advisory-try"    // pg_try_advisory_lock
	OpAdvisoryUnlock  OpType = "advisory-unlock" // pg_advisory_unlock
)

// Req is one request on a connection (a client names its connections).
type Req struct {
	Conn string
	Op   OpType
	// Key is the lock's name or the data row.
	Key string
	// Owner identifies the acquisition (unique-row: the row's owner; for
	// SELECT FOR UPDATE and advisory locks only the record of grants reads
	// it: the lock belongs to the connection).
	Owner string
	// Now and Expiry are the client's wall clock and the row's expiry
	// (unique-row): the server trusts them.
	Now, Expiry time.Duration
	// Value is a write's value; IfVersion, when >= 0, makes it a
	// compare-and-swap on the row's version (optimistic).
	Value     int64
	IfVersion int64
	// Token is a data write's fencing token, as the client's lease has it:
	// the database checks none (only the record of writes reads it).
	Token uint64
	// ReadSet, when set (optimistic with versions=pair), makes a write a
	// compare-and-swap on the versions of every row the critical section
	// read: it fails if any of them changed.
	ReadSet []RowVersion
	// Wait bounds a SELECT FOR UPDATE's wait (the server's lock-wait-timeout
	// bounds it too); 0: NOWAIT.
	Wait time.Duration
}

// RowVersion is a data row and the version a client read of it.
type RowVersion struct {
	Key     string
	Version int64
}

// Resp answers a Req.
type Resp struct {
	OK bool
	// Err says why not: "closed" (the server ended the connection), "aborted"
	// (the transaction was aborted), "busy" (held by Owner), "timeout" (lock
	// wait timeout), "version" (compare-and-swap mismatch).
	Err   string
	Owner string
	// Token is the grant's sequence number (increases with every grant of
	// any lock): the fencing token.
	Token   uint64
	Value   int64
	Version int64
}

// MessageTypes returns one value of every message type of the system.
func MessageTypes() []any { return []any{Req{}, Resp{}} }
