package database

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// Mode is how clients build a lock on the database.
type Mode string

// Lock modes.
const (
	// ModeUniqueRow: INSERT a row named after the lock with an expiry from
	// the client's wall clock; DELETE to release; an expired row is taken
	// over by an acquirer whose wall clock says it expired.
	ModeUniqueRow Mode = "unique-row"
	// ModeForUpdate: SELECT ... FOR UPDATE in a transaction held until
	// commit, or until the server drops the connection.
	ModeForUpdate Mode = "for-update"
	// ModeAdvisory: session-level advisory locks (pg_try_advisory_lock),
	// held until released or until the session ends.
	ModeAdvisory Mode = "advisory"
	// ModeOptimistic: no lock; a version column and compare-and-swap.
	ModeOptimistic Mode = "optimistic"
)

// Versions is what an optimistic write compares.
type Versions string

// Version choices.
const (
	// VersionsRow: a compare-and-swap on the written row's own version.
	VersionsRow Versions = "row"
	// VersionsPair: a compare-and-swap on the versions of every row read
	// since the acquire (the pair of rows the on-call decision rests on).
	VersionsPair Versions = "pair"
)

// Resource is where the protected data lives.
type Resource string

// Resource choices.
const (
	// ResourceStorage: the separate storage node.
	ResourceStorage Resource = "storage"
	// ResourceDB: a row of the same database, written in the lock's own
	// transaction (for-update), or in a transaction of its own.
	ResourceDB Resource = "db"
)

// Options configure the database and its lock clients.
type Options struct {
	// Mode is the lock recipe.
	Mode Mode
	// TTL is the lease a unique-row lock writes into its row.
	TTL time.Duration
	// Resource is where the protected data lives (optimistic: always db).
	Resource Resource
	// UnlockBeforeCommit releases a unique-row lock before the data's
	// transaction commits (the commit comes CommitDelay later).
	UnlockBeforeCommit bool
	// CommitDelay is how much later that commit comes.
	CommitDelay time.Duration
	// LockWaitTimeout bounds how long the server queues a SELECT FOR UPDATE.
	LockWaitTimeout time.Duration
	// ConnTimeout is how long the server waits without hearing from a
	// connection before it aborts its transaction and ends its session.
	ConnTimeout time.Duration
	// RequestTimeout bounds each request (lock waits get LockWaitTimeout more).
	RequestTimeout time.Duration
	// Versions is what an optimistic write compares: its own row's version
	// (row) or the versions of every row the critical section read (pair).
	Versions Versions
	// BackoffMax bounds the random back-off between try-lock attempts.
	BackoffMax time.Duration
}

// Table declares the options of the database system.
var Table = opt.Table[Options]{Owner: "database", Options: []opt.Option[Options]{
	opt.Var("mode", "the lock: unique-row (INSERT a row with an expiry from the client's wall clock), "+
		"for-update (SELECT FOR UPDATE held until commit), advisory (session-level advisory lock) or "+
		"optimistic (no lock: version column and compare-and-swap)", "for-update",
		func(o *Options) *Mode { return &o.Mode }, opt.Choice(ModeUniqueRow, ModeForUpdate, ModeAdvisory, ModeOptimistic)),
	opt.Var("ttl", "the lease a unique-row lock writes into its row (expiry = client wall clock + ttl)", "10s",
		func(o *Options) *time.Duration { return &o.TTL }, opt.Positive),
	opt.Var("resource", "where the protected data lives: storage (the storage node) or db (a row of this "+
		"database, written in the lock's transaction for for-update); optimistic always uses db", "storage",
		func(o *Options) *Resource { return &o.Resource }, opt.Choice(ResourceStorage, ResourceDB)),
	opt.Var("unlock-before-commit", "unique-row with resource=db: delete the lock row before the data's "+
		"transaction commits (it commits commit-delay later)", "false",
		func(o *Options) *bool { return &o.UnlockBeforeCommit }, opt.Bool),
	opt.Var("commit-delay", "how much later that commit comes", "200ms",
		func(o *Options) *time.Duration { return &o.CommitDelay }, opt.NonNegative),
	opt.Var("lock-wait-timeout", "how long the server queues a SELECT FOR UPDATE before it fails it", "5s",
		func(o *Options) *time.Duration { return &o.LockWaitTimeout }, opt.Positive),
	opt.Var("conn-timeout", "how long the server waits without hearing from a connection before it aborts "+
		"its transaction and ends its session (releasing its locks)", "5s",
		func(o *Options) *time.Duration { return &o.ConnTimeout }, opt.Positive),
	opt.Var("request-timeout", "bound on each request (a lock wait gets lock-wait-timeout more)", "500ms",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("versions", "optimistic: what a write compares: row (its own row's version) or pair (the versions "+
		"of every row read since the acquire, so a decision made on rows another client changed fails)", "row",
		func(o *Options) *Versions { return &o.Versions }, opt.Choice(VersionsRow, VersionsPair)),
	opt.Var("backoff-max", "bound on the random back-off between try-lock attempts", "50ms",
		func(o *Options) *time.Duration { return &o.BackoffMax }, opt.NonNegative),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Validate reports options that contradict each other.
func (o Options) Validate() error {
	if o.UnlockBeforeCommit && (o.Mode != ModeUniqueRow || o.Resource != ResourceDB) {
		return fmt.Errorf("database option unlock-before-commit: only with mode=unique-row and resource=db")
	}
	if o.Versions == VersionsPair && o.Mode != ModeOptimistic {
		return fmt.Errorf("database option versions=pair: only with mode=optimistic")
	}
	return nil
}

// Data is the resource the database protects with its locks: the row a
// client reads and writes.
func (o Options) Data() Resource {
	if o.Mode == ModeOptimistic {
		return ResourceDB
	}
	return o.Resource
}
