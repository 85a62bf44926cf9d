package redis

import (
	"fmt"
	"maps"
	"strconv"
	"time"
)

// entry is one key. Redis strings are stored in value; the reentrant hash lock
// keeps its single owner in value and the hold count in count.
type entry struct {
	value    string
	count    int64
	expireAt time.Duration // server wall clock (Unix ns); 0 = no expiry
}

// Keyspace is the data of one Redis instance, with TTLs on the server's wall
// clock. It is a pure data structure: the wall-clock reading is an argument.
type Keyspace struct {
	data map[string]entry
}

// NewKeyspace returns an empty keyspace.
func NewKeyspace() *Keyspace { return &Keyspace{data: map[string]entry{}} }

// Clone copies the keyspace (a snapshot for persistence or replication).
func (k *Keyspace) Clone() *Keyspace { return &Keyspace{data: maps.Clone(k.data)} }

// Len counts the keys, including ones that expired but were not touched since.
func (k *Keyspace) Len() int { return len(k.data) }

// lookup returns the live entry for key, deleting it if it expired by wall.
func (k *Keyspace) lookup(key string, wall time.Duration) (entry, bool) {
	e, ok := k.data[key]
	if !ok {
		return entry{}, false
	}
	if e.expireAt != 0 && wall >= e.expireAt {
		delete(k.data, key)
		return entry{}, false
	}
	return e, true
}

// Apply executes one command at server wall-clock time wall and returns the
// reply and whether the keyspace changed (for persistence and replication).
func (k *Keyspace) Apply(cmd any, wall time.Duration) (Reply, bool) {
	switch c := cmd.(type) {
	case SetNX:
		if _, ok := k.lookup(c.Key, wall); ok {
			return Reply{}, false
		}
		k.data[c.Key] = entry{value: c.Value, expireAt: wall + c.TTL}
		return Reply{OK: true}, true
	case SetNXFence:
		if _, ok := k.lookup(c.Key, wall); ok {
			return Reply{}, false
		}
		k.data[c.Key] = entry{value: c.Value, expireAt: wall + c.TTL}
		return Reply{OK: true, Int: k.incr(c.FenceKey, wall)}, true
	case Get:
		e, ok := k.lookup(c.Key, wall)
		return Reply{OK: ok, Value: e.value}, false
	case Del:
		if _, ok := k.lookup(c.Key, wall); !ok {
			return Reply{}, false
		}
		delete(k.data, c.Key)
		return Reply{OK: true, Int: 1}, true
	case DelIfValue:
		if e, ok := k.lookup(c.Key, wall); !ok || e.value != c.Value {
			return Reply{Value: e.value}, false
		}
		delete(k.data, c.Key)
		return Reply{OK: true, Int: 1}, true
	case ExpireIfValue:
		e, ok := k.lookup(c.Key, wall)
		if !ok || e.value != c.Value {
			return Reply{}, false
		}
		e.expireAt = wall + c.TTL
		k.data[c.Key] = e
		return Reply{OK: true, Int: 1}, true
	case Incr:
		return Reply{OK: true, Int: k.incr(c.Key, wall)}, true
	case HoldLock:
		e, ok := k.lookup(c.Key, wall)
		if ok && e.value != c.Owner {
			return Reply{}, false
		}
		e.value, e.count, e.expireAt = c.Owner, e.count+1, wall+c.TTL
		k.data[c.Key] = e
		r := Reply{OK: true}
		if c.FenceKey != "" && e.count == 1 {
			r.Int = k.incr(c.FenceKey, wall)
		}
		return r, true
	case UnholdLock:
		e, ok := k.lookup(c.Key, wall)
		if !ok || e.value != c.Owner {
			return Reply{}, false
		}
		e.count--
		if e.count <= 0 {
			delete(k.data, c.Key)
			return Reply{OK: true}, true
		}
		e.expireAt = wall + c.TTL
		k.data[c.Key] = e
		return Reply{OK: true, Int: e.count}, true
	}
	panic(fmt.Sprintf("redis: unknown command %T", cmd))
}

func (k *Keyspace) incr(key string, wall time.Duration) int64 {
	e, _ := k.lookup(key, wall)
	n, _ := strconv.ParseInt(e.value, 10, 64)
	n++
	e.value = strconv.FormatInt(n, 10)
	k.data[key] = e
	return n
}
