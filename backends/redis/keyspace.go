package redis

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/locklab/locklab/backends/redis/engine"
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
// A lock server holds a few keys: up to smallKeys they are kept in a slice
// searched in order (no hashing), beyond that in a map.
type Keyspace struct {
	small []keyEntry
	big   map[string]entry // nil until the keyspace outgrows small
	eng   *engine.DB       // the data set of Commands; nil until the first
}

type keyEntry struct {
	key string
	e   entry
}

// smallKeys is how many keys a keyspace holds before it moves them to a map.
const smallKeys = 8

// NewKeyspace returns an empty keyspace.
func NewKeyspace() *Keyspace { return &Keyspace{} }

// Clone copies the keyspace (a snapshot for persistence or replication).
func (k *Keyspace) Clone() *Keyspace {
	var c *Keyspace
	if k.big != nil {
		c = &Keyspace{big: maps.Clone(k.big)}
	} else {
		c = &Keyspace{small: slices.Clone(k.small)}
	}
	if k.eng != nil {
		c.eng = k.eng.Clone()
	}
	return c
}

// Len counts the keys, including ones that expired but were not touched since.
func (k *Keyspace) Len() int {
	if k.big != nil {
		return len(k.big)
	}
	return len(k.small)
}

// find is the index of key in small, or -1.
func (k *Keyspace) find(key string) int {
	for i := range k.small {
		if k.small[i].key == key {
			return i
		}
	}
	return -1
}

// get is key's entry, expired or not.
func (k *Keyspace) get(key string) (entry, bool) {
	if k.big != nil {
		e, ok := k.big[key]
		return e, ok
	}
	if i := k.find(key); i >= 0 {
		return k.small[i].e, true
	}
	return entry{}, false
}

// set stores e under key.
func (k *Keyspace) set(key string, e entry) {
	if k.big != nil {
		k.big[key] = e
		return
	}
	if i := k.find(key); i >= 0 {
		k.small[i].e = e
		return
	}
	if len(k.small) < smallKeys {
		k.small = append(k.small, keyEntry{key, e})
		return
	}
	k.big = make(map[string]entry, 2*smallKeys)
	for _, ke := range k.small {
		k.big[ke.key] = ke.e
	}
	k.small = nil
	k.big[key] = e
}

// del removes key.
func (k *Keyspace) del(key string) {
	if k.big != nil {
		delete(k.big, key)
		return
	}
	if i := k.find(key); i >= 0 {
		last := len(k.small) - 1
		k.small[i] = k.small[last]
		k.small[last] = keyEntry{}
		k.small = k.small[:last]
	}
}

// lookup returns the live entry for key, deleting it if it expired by wall.
func (k *Keyspace) lookup(key string, wall time.Duration) (entry, bool) {
	e, ok := k.get(key)
	if !ok {
		return entry{}, false
	}
	if e.expireAt != 0 && wall >= e.expireAt {
		k.del(key)
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
		k.set(c.Key, entry{value: c.Value, expireAt: wall + c.TTL})
		return Reply{OK: true}, true
	case SetNXFence:
		if _, ok := k.lookup(c.Key, wall); ok {
			return Reply{}, false
		}
		k.set(c.Key, entry{value: c.Value, expireAt: wall + c.TTL})
		return Reply{OK: true, Int: k.incr(c.FenceKey, wall)}, true
	case Get:
		e, ok := k.lookup(c.Key, wall)
		return Reply{OK: ok, Value: e.value}, false
	case Del:
		if _, ok := k.lookup(c.Key, wall); !ok {
			return Reply{}, false
		}
		k.del(c.Key)
		return Reply{OK: true, Int: 1}, true
	case DelIfValue:
		if e, ok := k.lookup(c.Key, wall); !ok || e.value != c.Value {
			return Reply{Value: e.value}, false
		}
		k.del(c.Key)
		return Reply{OK: true, Int: 1}, true
	case ExpireIfValue:
		e, ok := k.lookup(c.Key, wall)
		if !ok || e.value != c.Value {
			return Reply{}, false
		}
		e.expireAt = wall + c.TTL
		k.set(c.Key, e)
		return Reply{OK: true, Int: 1}, true
	case Incr:
		return Reply{OK: true, Int: k.incr(c.Key, wall)}, true
	case HoldLock:
		e, ok := k.lookup(c.Key, wall)
		if ok && e.value != c.Owner {
			return Reply{}, false
		}
		e.value, e.count, e.expireAt = c.Owner, e.count+1, wall+c.TTL
		k.set(c.Key, e)
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
			k.del(c.Key)
			return Reply{OK: true}, true
		}
		e.expireAt = wall + c.TTL
		k.set(c.Key, e)
		return Reply{OK: true, Int: e.count}, true
	case Command:
		_, changed := k.exec(c.Args, wall)
		return Reply{}, changed
	}
	panic(fmt.Sprintf("redis: unknown command %T", cmd))
}

func (k *Keyspace) incr(key string, wall time.Duration) int64 {
	e, _ := k.lookup(key, wall)
	n, _ := strconv.ParseInt(e.value, 10, 64)
	n++
	e.value = strconv.FormatInt(n, 10)
	k.set(key, e)
	return n
}
