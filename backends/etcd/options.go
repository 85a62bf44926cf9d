package etcd

import (
	"fmt"
	"math"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// LockKind is the lock recipe the client uses.
type LockKind string

// Lock recipes.
const (
	// LockMutex is clientv3's concurrency.Mutex: put prefix/<lease-id> under
	// the session's lease; the holder is the key with the lowest create
	// revision; waiters watch the key just below theirs.
	LockMutex LockKind = "mutex"
	// LockTxn is the simple txn lock: If CreateRevision(key)==0 Then
	// Put(key, id, lease) Else Get(key); waiters watch the key's deletion.
	LockTxn LockKind = "txn"
)

// Unlock is how the mutex gives its key back.
type Unlock string

// Unlock choices.
const (
	// UnlockDelete deletes the key by name (clientv3 today): a stale retry
	// deletes a newer incarnation of the same session (etcd issue 22082).
	UnlockDelete Unlock = "delete"
	// UnlockGuarded deletes only if the key's create revision is still the
	// one acquired (Txn If IsOwner Then Delete): the fix.
	UnlockGuarded Unlock = "guarded"
)

// Resource is where the protected data lives.
type Resource string

// Resource choices.
const (
	// ResourceStorage: the separate protected storage node (unfenced or
	// fenced with the create revision).
	ResourceStorage Resource = "storage"
	// ResourceEtcd: a key in etcd itself, written by Txn(If IsOwner Then Put)
	// — the guarded write etcd documents, safe by construction.
	ResourceEtcd Resource = "etcd"
)

// Reads is the consistency of the client's reads.
type Reads string

// Read consistencies.
const (
	// ReadsLinearizable: reads go through the leader's log (etcd's default).
	ReadsLinearizable Reads = "linearizable"
	// ReadsSerializable: any member answers from what it has applied (may be stale).
	ReadsSerializable Reads = "serializable"
)

// Options configure an etcd cluster and its clients. Table declares each
// option's name, meaning and default; start from DefaultOptions.
type Options struct {
	// Members is the cluster size: 3 or 5 (etcd1, etcd2, ...).
	Members int
	// Lock is the lock recipe.
	Lock LockKind
	// TTL is the session lease's TTL (raised to the server's minimum).
	TTL time.Duration
	// LeaderChangeExtends: a new leader restarts every lease's TTL, plus an
	// election timeout (etcd's lessor Promote). false: keep-alives are
	// checkpointed in the log, and a new leader keeps each lease's expiry.
	LeaderChangeExtends bool
	// CheckAfterWait: after waiting for its predecessors, the mutex checks
	// that its key still exists (clientv3 since 3.4.4; false: 3.4.3, etcd
	// issue 11456).
	CheckAfterWait bool
	// Unlock is how the mutex deletes its key.
	Unlock Unlock
	// UnlockRetry, when positive, retries an unlock that failed, that long
	// after it failed, from a background process (the application's cleanup).
	UnlockRetry time.Duration
	// Resource is where the protected data lives.
	Resource Resource
	// Reads is the consistency of Get.
	Reads Reads
	// Tick is the raft tick (etcd's heartbeat interval) on each member's
	// monotonic clock.
	Tick time.Duration
	// ElectionTimeout is the shortest time without a leader before a member
	// campaigns (each draws its timeout in [t, 2t)).
	ElectionTimeout time.Duration
	// InitialLeader, when set, campaigns at the start.
	InitialLeader string
	// RequestTimeout bounds each request to a member.
	RequestTimeout time.Duration
	// RetryBudget bounds how long one request is retried across members.
	RetryBudget time.Duration
	// WatchProgress is how long a waiter waits for a watch event before it
	// re-registers its watch (possibly at another member).
	WatchProgress time.Duration
	// BackoffMax bounds the random back-off between retries.
	BackoffMax time.Duration
}

// Table declares the options of the etcd system.
var Table = opt.Table[Options]{Owner: "etcd", Options: []opt.Option[Options]{
	opt.Var("members", "size of the cluster (etcd1, etcd2, ...)", "3",
		func(o *Options) *int { return &o.Members }, opt.IntChoice(3, 5)),
	opt.Var("lock", "the lock recipe: mutex (clientv3 concurrency.Mutex: a queue of keys under a prefix, "+
		"the lowest create revision holds) or txn (If CreateRevision(key)==0 Then Put Else Get)", "mutex",
		func(o *Options) *LockKind { return &o.Lock }, opt.Choice(LockMutex, LockTxn)),
	opt.Var("ttl", "the session lease's TTL (the server raises it to its minimum, 1.5 election timeouts "+
		"rounded up to seconds); the session keeps it alive every ttl/3", "10s",
		func(o *Options) *time.Duration { return &o.TTL }, opt.Positive),
	opt.Var("leader-change-extends", "a new leader restarts every lease (TTL + election timeout from the "+
		"election, etcd's behaviour); false: keep-alives are checkpointed in the log and a new leader keeps "+
		"each lease's expiry", "true", func(o *Options) *bool { return &o.LeaderChangeExtends }, opt.Bool),
	opt.Var("check-after-wait", "after waiting for its predecessors the mutex checks that its own key "+
		"still exists (clientv3 since 3.4.4); false: 3.4.3, which returns success with a lost lease (etcd "+
		"issue 11456)", "true", func(o *Options) *bool { return &o.CheckAfterWait }, opt.Bool),
	opt.Var("unlock", "how the lock deletes its key: delete (by name, clientv3 today: a stale retry deletes "+
		"a newer incarnation, etcd issue 22082) or guarded (Txn If CreateRevision==mine Then Delete)", "delete",
		func(o *Options) *Unlock { return &o.Unlock }, opt.Choice(UnlockDelete, UnlockGuarded)),
	opt.Var("unlock-retry", "retry an unlock that failed, that long after it failed, from a background "+
		"process (the application's cleanup; 0s: never)", "0s",
		func(o *Options) *time.Duration { return &o.UnlockRetry }, opt.NonNegative),
	opt.Var("resource", "where the protected data lives: storage (the storage node, fenced or not) or etcd "+
		"(a key in etcd written by Txn If IsOwner Then Put: the guarded write)", "storage",
		func(o *Options) *Resource { return &o.Resource }, opt.Choice(ResourceStorage, ResourceEtcd)),
	opt.Var("reads", "consistency of reads: linearizable (through the leader's log) or serializable (any "+
		"member's applied state, possibly stale)", "linearizable",
		func(o *Options) *Reads { return &o.Reads }, opt.Choice(ReadsLinearizable, ReadsSerializable)),
	opt.Var("tick", "the raft tick (etcd's heartbeat interval) on each member's monotonic clock", "100ms",
		func(o *Options) *time.Duration { return &o.Tick }, opt.Positive),
	opt.Var("election-timeout", "shortest time without a leader before a member campaigns (each draws its "+
		"timeout in [t, 2t)); must exceed tick", "1s",
		func(o *Options) *time.Duration { return &o.ElectionTimeout }, opt.Positive),
	opt.Var("initial-leader", "the member that campaigns as soon as the cluster starts (empty: the seeded "+
		"election timers decide)", "",
		func(o *Options) *string { return &o.InitialLeader }, opt.Text("a member name etcd1..etcd<members>, or empty")),
	opt.Var("request-timeout", "bound on each request to a member", "500ms",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.Positive),
	opt.Var("retry-budget", "how long one request is retried across members, on the client's monotonic clock", "3s",
		func(o *Options) *time.Duration { return &o.RetryBudget }, opt.Positive),
	opt.Var("watch-progress", "how long a waiter waits for a watch event before it registers its watch "+
		"again (at another member if that one is gone)", "1s",
		func(o *Options) *time.Duration { return &o.WatchProgress }, opt.Positive),
	opt.Var("backoff-max", "bound on the random back-off between retries", "50ms",
		func(o *Options) *time.Duration { return &o.BackoffMax }, opt.NonNegative),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (o *Options) Set(key, value string) error { return Table.Set(o, key, value) }

// Validate checks combinations Set cannot see alone.
func (o Options) Validate() error {
	if o.InitialLeader != "" {
		if _, ok := memberID(o.InitialLeader, o.Members); !ok {
			return fmt.Errorf("etcd option initial-leader=%q: want a member name etcd1..etcd%d", o.InitialLeader, o.Members)
		}
	}
	if o.ElectionTimeout <= o.Tick {
		return fmt.Errorf("etcd options: election-timeout %v must exceed tick %v", o.ElectionTimeout, o.Tick)
	}
	return nil
}

// MinTTL is the server's minimum lease TTL: 1.5 election timeouts, rounded
// up to whole seconds (etcd's minLeaseTTL).
func (o Options) MinTTL() time.Duration {
	return time.Duration(math.Ceil((o.ElectionTimeout * 3 / 2).Seconds())) * time.Second
}

// EffectiveTTL is the TTL the server grants for the configured ttl.
func (o Options) EffectiveTTL() time.Duration { return max(o.TTL, o.MinTTL()) }

// MemberName is the name of the member with raft id (1-based).
func MemberName(id uint64) string { return fmt.Sprintf("etcd%d", id) }

func memberID(name string, members int) (uint64, bool) {
	var id uint64
	if _, err := fmt.Sscanf(name, "etcd%d", &id); err != nil || id < 1 || id > uint64(members) || MemberName(id) != name {
		return 0, false
	}
	return id, true
}
