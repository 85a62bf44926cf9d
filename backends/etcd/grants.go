package etcd

import (
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// grantScope is the scope of every grant: the one keyspace the raft group keeps.
const grantScope = "etcd"

// grantRecord records a lock's grants as the ground truth of a simulated
// run, from the entries the members apply: the built-in lock's (recipeLocks)
// or a user's lock's (userLocks), which say which keys are a lock's and
// which of them holds it. Each log entry is recorded once, when the first
// member applies it, in true time. A grant starts when its key becomes the
// holder and ends when a client deletes the key (a release when that client
// created it, a removal of someone else's lock otherwise), when the owner
// revokes its lease (a release), or, when the leader revokes an expired
// lease, at the latest end a leader promised the lease's client: TTL from
// the lease's grant or from any keep-alive a leader answered, in true time.
// A revocation before that promise ran out (an isolated old leader still
// renewing, a leader whose clock runs fast) leaves the grant open past the
// next holder's: a breach of the record. A nil record records nothing.
type grantRecord struct {
	log      *lockapi.GrantLog
	locks    lockRule
	recorded uint64                  // the highest log index recorded
	promised map[int64]time.Duration // lease -> latest end promised to its client (true time)
	holders  map[string]holder       // lock -> its holder
	creators map[string]string       // key -> the client node whose put created it
	clients  map[uint64]string       // command id -> the client node that asked
}

// lockRule says which keys are a lock's, which of them holds it and the
// lock's name in the record.
type lockRule interface {
	// lockOf is the lock the changed key of e belongs to (t: the record so
	// far, before e).
	lockOf(t *grantRecord, e Event) (string, bool)
	// holderOf is the holder of lock in st.
	holderOf(st *Store, lock string) (holder, bool)
	// key is the workload's key of lock, as the record names it.
	key(lock string) string
}

type holder struct {
	owner, key string
	lease      int64
}

func newGrantRecord(log *lockapi.GrantLog, locks lockRule) *grantRecord {
	return &grantRecord{log: log, locks: locks, promised: map[int64]time.Duration{}, holders: map[string]holder{},
		creators: map[string]string{}, clients: map[uint64]string{}}
}

func (t *grantRecord) on() bool { return t != nil && t.log.Recording() }

// asked notes that client's request is the command with id.
func (t *grantRecord) asked(id uint64, client string) {
	if t.on() {
		t.clients[id] = client
	}
}

// promise notes that a leader promised lease's client the lease for ttl from
// now (true time: a leader whose clock runs fast breaks the promise), and
// renews the grants held under it.
func (t *grantRecord) promise(lease int64, ttl, now time.Duration) {
	if !t.on() {
		return
	}
	until := now + ttl
	if until <= t.promised[lease] {
		return
	}
	t.promised[lease] = until
	for _, lock := range sorted.Keys(t.holders) {
		if h := t.holders[lock]; h.lease == lease {
			t.log.Renewed(grantScope, t.locks.key(lock), h.owner, now, until)
		}
	}
}

// applied records what the entry at index did (refused: its error; events:
// the keys it changed), the first time a member (s) applied it: the locks
// whose keys it changed may have a new holder.
func (t *grantRecord) applied(s *Server, index, id uint64, cmd Command, refused string, events []Event) {
	if !t.on() || index <= t.recorded {
		return
	}
	t.recorded = index
	if refused != "" || len(events) == 0 {
		return
	}
	now := s.node.World().Now()
	var locks []string
	for _, e := range events {
		lock, ok := t.locks.lockOf(t, e)
		if !ok {
			continue
		}
		if e.Type == EventPut && e.KV.Version == 1 {
			t.creators[e.KV.Key] = t.clients[id]
		}
		if !slices.Contains(locks, lock) {
			locks = append(locks, lock)
		}
	}
	for _, lock := range locks {
		key := t.locks.key(lock)
		was, held := t.holders[lock]
		next, ok := t.locks.holderOf(s.store, lock)
		if held && ok && was == next {
			continue
		}
		if held {
			delete(t.holders, lock)
			switch by := t.clients[id]; {
			case cmd.Type == CmdTxn && by != "":
				t.log.Removed(grantScope, key, was.owner, by, now) // a release when by is the owner's client
			case cmd.Type == CmdTxn || (cmd.Type == CmdLeaseRevoke && !cmd.Expired):
				t.log.Released(grantScope, key, was.owner, now) // the owner deleted its key or revoked its lease
			}
		}
		if ok {
			t.holders[lock] = next
			t.log.Granted(grantScope, s.node.Name(), key, next.owner, t.creators[next.key], now, t.promised[next.lease])
		}
	}
}

// recipeLocks are the locks of the built-in recipes. A lock is held by a key
// put under a lease: with the queue mutex the key of lowest create revision
// under <lock>/ (owner: that key, as the client names it), with the txn lock
// the key <lock> itself (owner: its value). A deletion of the key by another
// client (with the txn lock, a retried unlock by name whose first attempt
// applied deletes the next holder's key) is a removal of the owner's lock,
// which does not end the promise made to it.
type recipeLocks struct{ mutex bool }

// RecordGrants makes the cluster record in log every grant, renewal and
// release of a lock (scope "etcd"). Call it before the run.
func (c *Cluster) RecordGrants(log *lockapi.GrantLog) {
	c.truth = newGrantRecord(log, recipeLocks{mutex: c.opts.Lock == LockMutex})
}

func (recipeLocks) key(lock string) string { return lock }

// lockOf is the lock a changed key belongs to: a key put under a lease is a
// lock's key (a deleted key is one if it was).
func (r recipeLocks) lockOf(t *grantRecord, e Event) (string, bool) {
	if e.Type == EventPut && e.KV.Lease == 0 {
		return "", false
	}
	if e.Type == EventDelete {
		if _, known := t.creators[e.KV.Key]; !known {
			return "", false
		}
	}
	if !r.mutex {
		return e.KV.Key, true
	}
	i := strings.LastIndexByte(e.KV.Key, '/')
	if i < 0 {
		return "", false
	}
	return e.KV.Key[:i], true
}

// holderOf is the holder of lock in st.
func (r recipeLocks) holderOf(st *Store, lock string) (holder, bool) {
	if !r.mutex {
		kv, ok := st.Get(lock)
		if !ok || kv.Lease == 0 {
			return holder{}, false
		}
		return holder{owner: kv.Value, key: kv.Key, lease: kv.Lease}, true
	}
	kvs := st.Apply(0, Command{Type: CmdTxn, Txn: Txn{Then: []Op{{Type: OpGet, Key: lock + "/", Prefix: true,
		Order: OrderFirstCreate, Limit: 1}}}}).Results[0].Kvs
	if len(kvs) == 0 || kvs[0].Lease == 0 {
		return holder{}, false
	}
	return holder{owner: kvs[0].Key, key: kvs[0].Key, lease: kvs[0].Lease}, true
}

// clientName is the name of the client node that sent m.
func clientName(n *sim.Node, m sim.Message) string { return n.World().Nodes()[m.From].Name() }
