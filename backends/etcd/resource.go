package etcd

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/locklab/locklab/lockapi"
)

// ResourcePrefix is the prefix of the keys that hold a resource kept in etcd.
const ResourcePrefix = "resource/"

// Preset loads the resource's initial values (a workload's rows, by cell
// name) into every member's keyspace before the run, as a data directory
// restored before the cluster starts: each cell resource/<name> at revision
// 1, the store's first, so the revisions the run makes (the locks' tokens)
// are the same as without it. A member that restarts replays its log over
// the same values.
func (c *Cluster) Preset(initial map[string]int64) {
	c.initial = maps.Clone(initial)
	for _, s := range c.servers {
		if s.store != nil {
			s.store.preset(c.initial)
		}
	}
}

// preset puts the initial values in st.
func (st *Store) preset(initial map[string]int64) {
	for _, k := range slices.Sorted(maps.Keys(initial)) {
		key := ResourcePrefix + k
		st.kvs[key] = &KV{Key: key, Value: strconv.FormatInt(initial[k], 10), CreateRev: 1, ModRev: 1, Version: 1}
	}
}

// GuardedStore is the protected data kept in etcd itself (resource=etcd): each
// cell is the key resource/<name>, read with Get and written only by
// Txn(If CreateRevision(lock key) == token Then Put) — clientv3's
// Txn(If(mutex.IsOwner())).Then(Put). A write by a client whose lock key is
// gone (its lease expired) or was replaced fails: safe by construction.
type GuardedStore struct {
	lock *Lock
}

var _ lockapi.Storage = (*GuardedStore)(nil)

// NewGuardedStore returns the resource client that writes under lock.
func NewGuardedStore(lock *Lock) *GuardedStore { return &GuardedStore{lock: lock} }

// Read returns the cell's value (0 if never written).
func (r *GuardedStore) Read(key string, token uint64) (int64, error) {
	res, err := r.lock.get(Op{Key: ResourcePrefix + key})
	if err != nil {
		return 0, fmt.Errorf("etcd: read %s: %w", key, err)
	}
	kvs := res.Results[0].Kvs
	if len(kvs) == 0 {
		return 0, nil
	}
	v, err := strconv.ParseInt(kvs[0].Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd: read %s: value %q: %w", key, kvs[0].Value, err)
	}
	return v, nil
}

// Write puts value if the lock held with token is still ours.
func (r *GuardedStore) Write(key string, value int64, token uint64) error {
	h, ok := r.lock.heldKey(token)
	if !ok {
		return fmt.Errorf("etcd: write %s: no lock held with token %d: %w", key, token, lockapi.ErrRejected)
	}
	res, err := r.lock.txn(r.lock.env, Txn{
		If:   []Compare{{Key: h.key, Target: TargetCreate, Result: "=", Int: h.rev}},
		Then: []Op{{Type: OpPut, Key: ResourcePrefix + key, Value: strconv.FormatInt(value, 10)}},
	})
	switch {
	case err != nil:
		return fmt.Errorf("etcd: write %s: %w", key, err)
	case !res.Succeeded:
		return fmt.Errorf("etcd: write %s: lock key %s is no longer create revision %d: %w", key, h.key, h.rev,
			lockapi.ErrRejected)
	}
	return nil
}
