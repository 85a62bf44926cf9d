package etcd

import (
	"strings"

	"github.com/locklab/locklab/lockapi"
)

// userLocks are the locks of a user's lock (package userlock), in a record
// of grants: lock key L -> workload key k. The user's lock keeps the lock of
// a workload key k in etcd under a lock key L (LockKey(k), by default k): the
// key L itself (a put-if-absent lock) or keys under L/ (a queue, as
// clientv3's Mutex makes). Its holder is the existing key among them with
// the lowest create revision (ties by name), and its owner that key's value
// (or, when the value is empty, the key's name): a lock whose Lease.Owner is
// the same string is matched with the history. The grant's client is the
// node whose put created the key. A key without a lease holds the lock until
// it is deleted.
//
// What the record cannot see: the lock keys must be known (WatchLock, called
// before the first acquire of a key); a lock that keeps its state under other
// keys (a counter, a separate owner key) is judged by its holder key only;
// what the value means to the lock (an owner id, a timestamp) is opaque.
type userLocks map[string]string

// RecordUserGrants makes the cluster record in log every grant, renewal and
// release of a user's lock keys (scope "etcd"), with the convention of
// userLocks; WatchLock names the keys. Call it before the run.
func (c *Cluster) RecordUserGrants(log *lockapi.GrantLog) {
	c.userLocks = userLocks{}
	c.user = newGrantRecord(log, c.userLocks)
}

// WatchLock tells the record that the lock of workload key key is kept under
// the etcd key lockKey (and the keys under lockKey/). Without a record it
// does nothing.
func (c *Cluster) WatchLock(key, lockKey string) {
	if c.userLocks != nil {
		c.userLocks[lockKey] = key
	}
}

func (u userLocks) key(lock string) string { return u[lock] }

// lockOf is the lock key the changed key belongs to: the longest watched L
// that is the key or a prefix of it followed by "/".
func (u userLocks) lockOf(_ *grantRecord, e Event) (string, bool) {
	key := e.KV.Key
	best, found := "", false
	for l := range u { // determinism:ok the longest match is unique
		if (key == l || strings.HasPrefix(key, l+"/")) && (!found || len(l) > len(best)) {
			best, found = l, true
		}
	}
	return best, found
}

// holderOf is the holder of lock key l in st: the key l or under l/ with the
// lowest create revision.
func (userLocks) holderOf(st *Store, l string) (holder, bool) {
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
