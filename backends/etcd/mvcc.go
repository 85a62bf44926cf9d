package etcd

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/sorted"
)

// KV is a key as etcd stores it: its value and its three revisions.
type KV struct {
	Key   string
	Value string
	// CreateRev is the revision that created the key (0: the key does not
	// exist); it is the fencing token of a lock held by this key.
	CreateRev int64
	// ModRev is the revision of the last change.
	ModRev int64
	// Version counts the changes since creation (1 after the create).
	Version int64
	// Lease is the lease the key is attached to (0: none).
	Lease int64
}

// EventType is what a watch event reports.
type EventType string

// Event types.
const (
	EventPut    EventType = "PUT"
	EventDelete EventType = "DELETE"
)

// Event is one change of the keyspace, as a watch delivers it.
type Event struct {
	Type EventType
	// KV is the key after the change (for a delete: its key and ModRev =
	// the deleting revision).
	KV KV
}

// Target is what a compare looks at.
type Target string

// Compare targets.
const (
	TargetCreate  Target = "create"
	TargetMod     Target = "mod"
	TargetVersion Target = "version"
	TargetValue   Target = "value"
)

// Compare is one condition of a Txn: Target(Key) Result Int (or Value).
type Compare struct {
	Key    string
	Target Target
	// Result is "=", "!=", "<" or ">".
	Result string
	Int    int64
	Value  string
}

// OpType names a keyspace operation.
type OpType string

// Operation types.
const (
	OpPut    OpType = "put"
	OpGet    OpType = "get"
	OpDelete OpType = "delete"
)

// Order is the sort of a range read.
type Order string

// Orders of a range read.
const (
	// OrderKey sorts by key (the default).
	OrderKey Order = ""
	// OrderFirstCreate returns the key with the lowest create revision first.
	OrderFirstCreate Order = "first-create"
	// OrderLastCreate returns the key with the highest create revision first.
	OrderLastCreate Order = "last-create"
)

// Op is a Put, Get or Delete, alone or inside a Txn.
type Op struct {
	Type   OpType
	Key    string
	Prefix bool // the range of keys starting with Key
	Value  string
	Lease  int64
	// Order, Limit and MaxCreateRev shape a Get (clientv3's WithFirstCreate,
	// WithLastCreate, WithMaxCreateRev); Limit 0: no limit.
	Order        Order
	Limit        int
	MaxCreateRev int64
}

// OpResult is the outcome of one Op.
type OpResult struct {
	Kvs     []KV
	Deleted int64
}

// Txn is If(Compares) Then(ops) Else(ops), applied atomically at one revision.
type Txn struct {
	If   []Compare
	Then []Op
	Else []Op
}

// CommandType names a command of the replicated log.
type CommandType string

// Command types.
const (
	CmdTxn         CommandType = "txn" // Put, Get and Delete are one-op transactions
	CmdLeaseGrant  CommandType = "lease-grant"
	CmdLeaseRevoke CommandType = "lease-revoke"
	// CmdCheckpoint records a keep-alive in the log (leader-change-extends=false).
	CmdCheckpoint CommandType = "lease-checkpoint"
)

// Command is one entry of the replicated log.
type Command struct {
	Type  CommandType
	Txn   Txn
	Lease int64
	TTL   time.Duration
	// Stamp is the proposing leader's wall clock (lease checkpoints).
	Stamp time.Duration
	// Expired marks a revoke the leader proposed because the lease expired.
	Expired bool
}

// Result is the outcome of an applied command.
type Result struct {
	// Revision is the store's revision after the command.
	Revision  int64
	Succeeded bool
	Results   []OpResult
	Lease     int64
	TTL       time.Duration
	// Err is set when the command was refused as a whole (a Put to a lease
	// that does not exist): nothing changed.
	Err string
	// Events are the changes the command made (for watches).
	Events []Event
	// Revoked are the keys a lease revoke deleted.
	Revoked []string
}

// ErrLeaseNotFound is the Err of a command that names a lease that does not
// exist (expired or revoked).
const ErrLeaseNotFound = "etcdserver: requested lease not found"

// lease is a lease as the replicated state knows it.
type lease struct {
	id  int64
	ttl time.Duration
	// keys attached to the lease.
	keys map[string]bool
	// renewed is the wall-clock stamp of the last checkpointed keep-alive.
	renewed time.Duration
}

// Store is etcd's MVCC keyspace and lease table: the state machine every
// member applies the log to. It keeps every event for watches from a revision
// (no compaction).
type Store struct {
	rev    int64
	kvs    map[string]*KV
	leases map[int64]*lease
	events []Event
}

// NewStore returns an empty store at revision 1 (etcd's first revision).
func NewStore() *Store {
	return &Store{rev: 1, kvs: map[string]*KV{}, leases: map[int64]*lease{}}
}

// Revision is the current revision.
func (s *Store) Revision() int64 { return s.rev }

// Get returns key's current value.
func (s *Store) Get(key string) (KV, bool) {
	kv, ok := s.kvs[key]
	if !ok {
		return KV{}, false
	}
	return *kv, true
}

// HasLease reports whether lease id exists.
func (s *Store) HasLease(id int64) bool { return s.leases[id] != nil }

// LeaseIDs lists the leases, sorted.
func (s *Store) LeaseIDs() []int64 {
	return sorted.Keys(s.leases)
}

// LeaseInfo returns a lease's TTL, the stamp of its last checkpointed
// keep-alive and its keys (sorted).
func (s *Store) LeaseInfo(id int64) (ttl, renewed time.Duration, keys []string, ok bool) {
	l := s.leases[id]
	if l == nil {
		return 0, 0, nil, false
	}
	return l.ttl, l.renewed, sortedSet(l.keys), true
}

// EventsSince returns the events at revision >= rev on key (or the prefix).
func (s *Store) EventsSince(key string, prefix bool, rev int64) []Event {
	i, _ := slices.BinarySearchFunc(s.events, rev, func(e Event, r int64) int { return cmp.Compare(e.KV.ModRev, r) })
	var out []Event
	for _, e := range s.events[i:] {
		if Matches(key, prefix, e.KV.Key) {
			out = append(out, e)
		}
	}
	return out
}

// Matches reports whether k is key, or starts with key when prefix is set.
func Matches(key string, prefix bool, k string) bool {
	if prefix {
		return strings.HasPrefix(k, key)
	}
	return k == key
}

// Apply applies one command of the log at raft index index.
func (s *Store) Apply(index uint64, c Command) Result {
	switch c.Type {
	case CmdTxn:
		return s.txn(c.Txn)
	case CmdLeaseGrant:
		id := int64(index) // unique and the same on every member
		s.leases[id] = &lease{id: id, ttl: c.TTL, keys: map[string]bool{}, renewed: c.Stamp}
		return Result{Revision: s.rev, Succeeded: true, Lease: id, TTL: c.TTL}
	case CmdLeaseRevoke:
		return s.revoke(c.Lease)
	case CmdCheckpoint:
		if l := s.leases[c.Lease]; l != nil {
			l.renewed = c.Stamp
			return Result{Revision: s.rev, Succeeded: true, Lease: c.Lease, TTL: l.ttl}
		}
		return Result{Revision: s.rev, Err: ErrLeaseNotFound}
	}
	panic(fmt.Sprintf("etcd: unknown command %q", c.Type))
}

func (s *Store) revoke(id int64) Result {
	l := s.leases[id]
	if l == nil {
		return Result{Revision: s.rev, Err: ErrLeaseNotFound}
	}
	keys := sortedSet(l.keys)
	delete(s.leases, id)
	res := Result{Succeeded: true, Lease: id, Revoked: keys}
	if len(keys) > 0 {
		s.rev++
		for _, k := range keys {
			res.Events = append(res.Events, s.del(k))
		}
	}
	res.Revision = s.rev
	return res
}

func (s *Store) txn(t Txn) Result {
	ops, ok := branch(t.If, s.compare, t.Then, t.Else)
	writes := false
	for _, op := range ops {
		if op.Type == OpPut && op.Lease != 0 && s.leases[op.Lease] == nil {
			return Result{Revision: s.rev, Err: ErrLeaseNotFound}
		}
		writes = writes || op.Type == OpPut || (op.Type == OpDelete && len(s.rangeOf(op)) > 0)
	}
	if writes {
		s.rev++
	}
	res := Result{Succeeded: ok}
	for _, op := range ops {
		var r OpResult
		switch op.Type {
		case OpGet:
			r.Kvs = s.get(op)
		case OpPut:
			res.Events = append(res.Events, s.put(op))
		case OpDelete:
			for _, kv := range s.rangeOf(op) {
				res.Events = append(res.Events, s.del(kv.Key))
				r.Deleted++
			}
		}
		res.Results = append(res.Results, r)
	}
	res.Revision = s.rev
	return res
}

// branch is etcd's choice of a Txn's ops, the same in both its APIs (Txn and
// KVOp's, with their own compares): the Then ops when every compare of ifs
// holds (ok), else the Else ops. The compares are evaluated in order up to
// the first that fails.
func branch[C, O any](ifs []C, holds func(C) bool, then, els []O) (ops []O, ok bool) {
	for _, c := range ifs {
		if !holds(c) {
			return els, false
		}
	}
	return then, true
}

// compare is etcd's applyCompare on c's key: the KV API's compare
// (compareKV) over the range of that key alone.
func (s *Store) compare(c Compare) bool {
	return s.compareKV(KVCompare{Key: c.Key, Target: c.Target, Result: c.Result, Int: c.Int, Value: c.Value})
}

func cmpResult(c int, result string) bool {
	switch result {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case ">":
		return c > 0
	}
	panic(fmt.Sprintf("etcd: unknown compare result %q", result))
}

// rangeOf returns the keys an op names, sorted by key.
func (s *Store) rangeOf(op Op) []KV {
	if !op.Prefix {
		if kv, ok := s.kvs[op.Key]; ok {
			return []KV{*kv}
		}
		return nil
	}
	var out []KV
	for k, kv := range s.kvs { // determinism:ok sorted below
		if strings.HasPrefix(k, op.Key) {
			out = append(out, *kv)
		}
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func (s *Store) get(op Op) []KV {
	kvs := s.rangeOf(op)
	if op.MaxCreateRev > 0 {
		kvs = slices.DeleteFunc(kvs, func(kv KV) bool { return kv.CreateRev > op.MaxCreateRev })
	}
	switch op.Order {
	case OrderFirstCreate:
		slices.SortStableFunc(kvs, func(a, b KV) int { return cmp.Compare(a.CreateRev, b.CreateRev) })
		op.Limit = 1
	case OrderLastCreate:
		slices.SortStableFunc(kvs, func(a, b KV) int { return cmp.Compare(b.CreateRev, a.CreateRev) })
		op.Limit = 1
	}
	if op.Limit > 0 && len(kvs) > op.Limit {
		kvs = kvs[:op.Limit]
	}
	return kvs
}

func (s *Store) put(op Op) Event {
	kv, ok := s.kvs[op.Key]
	if !ok {
		kv = &KV{Key: op.Key, CreateRev: s.rev}
		s.kvs[op.Key] = kv
	}
	if kv.Lease != 0 && kv.Lease != op.Lease {
		if l := s.leases[kv.Lease]; l != nil {
			delete(l.keys, op.Key)
		}
	}
	kv.Value, kv.ModRev, kv.Lease = op.Value, s.rev, op.Lease
	kv.Version++
	if op.Lease != 0 {
		s.leases[op.Lease].keys[op.Key] = true
	}
	e := Event{Type: EventPut, KV: *kv}
	s.events = append(s.events, e)
	return e
}

func (s *Store) del(key string) Event {
	kv := s.kvs[key]
	delete(s.kvs, key)
	if kv.Lease != 0 {
		if l := s.leases[kv.Lease]; l != nil {
			delete(l.keys, key)
		}
	}
	e := Event{Type: EventDelete, KV: KV{Key: key, ModRev: s.rev}}
	s.events = append(s.events, e)
	return e
}

func sortedSet(m map[string]bool) []string { return sorted.Keys(m) }
