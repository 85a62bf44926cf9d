package etcd

import (
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/sorted"
	"github.com/locklab/locklab/lockapi"
)

// userTruth records the grants of a user's lock (package userlock) as the
// ground truth of a simulated run. The user's lock keeps the lock of a
// workload key k in etcd under a lock key L (LockKey(k), by default k): the
// key L itself (a put-if-absent lock) or keys under L/ (a queue, as clientv3's
// Mutex makes). Its holder is the existing key among them with the lowest
// create revision (ties by name), and its owner that key's value (or, when
// the value is empty, the key's name): a lock whose Lease.Owner is the same
// string is matched with the history. The grant's client is the node whose
// put created the key.
//
// Each log entry is recorded once, when the first member applies it, in true
// time. A grant starts when its key becomes the holder; it ends when a client
// deletes the key (a release when that client created it, a removal of
// someone else's lock otherwise), when the owner revokes its lease (a
// release), or, when the leader revokes an expired lease, at the latest end a
// leader promised the lease (TTL from its grant or from any keep-alive a
// leader answered, in true time): a revocation before that promise ran out
// leaves the grant open past the next holder's, a breach of the record. A key
// without a lease holds the lock until it is deleted.
//
// What the record cannot see: the lock keys must be known (Watch, called
// before the first acquire of a key); a lock that keeps its state under other
// keys (a counter, a separate owner key) is judged by its holder key only;
// what the value means to the lock (an owner id, a timestamp) is opaque.
type userTruth struct {
	log      *lockapi.GrantLog
	recorded uint64
	locks    map[string]string       // lock key L -> workload key k
	promised map[int64]time.Duration // lease -> latest end promised (true time)
	holders  map[string]holder       // lock key -> its holder
	creators map[string]string       // key -> the client node whose put created it
	clients  map[uint64]string       // command id -> the client node that asked
}

// RecordUserGrants makes the cluster record in log every grant, renewal and
// release of a user's lock keys (scope "etcd"), with the convention of
// userTruth; Watch names the keys. Call it before the run.
func (c *Cluster) RecordUserGrants(log *lockapi.GrantLog) {
	c.user = &userTruth{log: log, locks: map[string]string{}, promised: map[int64]time.Duration{},
		holders: map[string]holder{}, creators: map[string]string{}, clients: map[uint64]string{}}
}

// WatchLock tells the record that the lock of workload key key is kept under
// the etcd key lockKey (and the keys under lockKey/). Without a record it
// does nothing.
func (c *Cluster) WatchLock(key, lockKey string) {
	if c.user != nil {
		c.user.locks[lockKey] = key
	}
}

func (t *userTruth) on() bool { return t != nil && t.log.Recording() }

func (t *userTruth) asked(id uint64, client string) {
	if t.on() {
		t.clients[id] = client
	}
}

// promise notes that a leader promised lease for ttl from now and renews the
// grants held under it.
func (t *userTruth) promise(lease int64, ttl, now time.Duration) {
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
			t.log.Renewed(grantScope, t.locks[lock], h.owner, now, until)
		}
	}
}

// lockOf is the lock key a key belongs to: the longest watched L that is the
// key or a prefix of it followed by "/".
func (t *userTruth) lockOf(key string) (string, bool) {
	best, found := "", false
	for l := range t.locks { // determinism:ok the longest match is unique
		if (key == l || strings.HasPrefix(key, l+"/")) && (!found || len(l) > len(best)) {
			best, found = l, true
		}
	}
	return best, found
}

// applied records what an entry changed, the first time a member applies it.
func (t *userTruth) applied(s *Server, index, id uint64, cmd Command, refused string, events []Event) {
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
		lock, ok := t.lockOf(e.KV.Key)
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
		key := t.locks[lock]
		was, held := t.holders[lock]
		next, ok := t.holderOf(s.store, lock)
		if held && ok && was == next {
			continue
		}
		if held {
			delete(t.holders, lock)
			switch by := t.clients[id]; {
			case cmd.Type == CmdTxn && by != "":
				t.log.Removed(grantScope, key, was.owner, by, now)
			case cmd.Type == CmdTxn || (cmd.Type == CmdLeaseRevoke && !cmd.Expired):
				t.log.Released(grantScope, key, was.owner, now)
			}
		}
		if ok {
			t.holders[lock] = next
			t.log.Granted(grantScope, s.node.Name(), key, next.owner, t.creators[next.key], now, t.promised[next.lease])
		}
	}
}

// holderOf is the holder of lock key l in st: the key l or under l/ with the
// lowest create revision.
func (t *userTruth) holderOf(st *Store, l string) (holder, bool) {
	var best KV
	found := false
	for _, kv := range st.inRange(l, "") {
		best, found = kv, true
	}
	for _, kv := range st.inRange(l+"/", prefixEnd(l+"/")) {
		if !found || kv.CreateRev < best.CreateRev {
			best, found = kv, true
		}
	}
	if !found {
		return holder{}, false
	}
	owner := best.Value
	if owner == "" {
		owner = best.Key
	}
	return holder{owner: owner, key: best.Key, lease: best.Lease}, true
}

// prefixEnd is the end of the range of keys starting with p (clientv3's
// GetPrefixRangeEnd).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}
