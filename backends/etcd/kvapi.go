package etcd

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// This file is the generic KV and lease API of the members: what etcd's gRPC
// KV and Lease services answer, with every option a clientv3 call can carry
// (ranges, revisions, sorting, prevKV, ignore-value/lease, compares over
// ranges). The simulated clientv3 of a user's lock (package etcdclient, package
// userlock) speaks it. It has message types of its own (KVRequest,
// LeaseTTLRequest), entries of the log of their own (kept apart from the
// Commands of the built-in lock client), so the built-in system's messages,
// log and behaviour are what they were.

// KVRequest carries one KV call (Range, Put, DeleteRange or Txn) to a member.
// A serializable Range is answered by the member from what it has applied;
// everything else goes through the leader's log.
type KVRequest struct {
	Op KVOp
}

// KVResponse answers a KVRequest.
type KVResponse struct {
	// NotLeader: the member did not propose the call (see Response).
	NotLeader bool
	Leader    uint64
	// Member is the raft id of the member that answered, Term its raft term.
	Member uint64
	Term   uint64
	Result KVResult
}

// LeaseTTLRequest asks the leader's lessor how long a lease has left
// (etcd's LeaseTimeToLive), with its keys when Keys is set.
type LeaseTTLRequest struct {
	Lease int64
	Keys  bool
}

// LeaseTTLResponse answers a LeaseTTLRequest. Found is false when the lease
// does not exist (etcd then answers TTL -1).
type LeaseTTLResponse struct {
	NotLeader bool
	Leader    uint64
	Member    uint64
	Term      uint64
	Revision  int64
	Found     bool
	// Remaining is the time left on the leader's clock; Granted the lease's TTL.
	Remaining, Granted time.Duration
	Keys               []string
}

// UserMessageTypes returns one value of every message type of the generic
// KV API (for a schedule's delay "match"), besides MessageTypes.
func UserMessageTypes() []any {
	return []any{KVRequest{}, KVResponse{}, LeaseTTLRequest{}, LeaseTTLResponse{}}
}

// KVOpType names a call of the generic KV API.
type KVOpType string

// The calls of the generic KV API.
const (
	KVRange  KVOpType = "range"
	KVPut    KVOpType = "put"
	KVDelete KVOpType = "delete-range"
	KVTxn    KVOpType = "txn"
)

// SortTarget is what a Range sorts by (etcd's RangeRequest.SortTarget).
type SortTarget int

// Sort targets, numbered as etcd numbers them.
const (
	SortByKey SortTarget = iota
	SortByVersion
	SortByCreate
	SortByMod
	SortByValue
)

// SortOrder is the order of a Range (etcd's RangeRequest.SortOrder).
type SortOrder int

// Sort orders, numbered as etcd numbers them.
const (
	SortNone SortOrder = iota
	SortAscend
	SortDescend
)

// KVOp is one call of the generic KV API, as etcd's RangeRequest,
// PutRequest, DeleteRangeRequest or TxnRequest carries it.
type KVOp struct {
	Type KVOpType
	// Key and End bound the keys: End "" is Key alone, End "\x00" every key
	// from Key on, otherwise [Key, End). Key "\x00" with End "\x00" is every key.
	Key, End string
	// Put.
	Value                    string
	Lease                    int64
	IgnoreValue, IgnoreLease bool
	// PrevKV: a Put or DeleteRange returns the keys as they were.
	PrevKV bool
	// Range.
	Rev                        int64 // 0: the current revision
	Limit                      int64
	SortTarget                 SortTarget
	SortOrder                  SortOrder
	KeysOnly, CountOnly        bool
	MinModRev, MaxModRev       int64
	MinCreateRev, MaxCreateRev int64
	Serializable               bool
	// Txn.
	If         []KVCompare
	Then, Else []KVOp
}

// KVCompare is a compare of a Txn: every key in [Key, End) (Key alone when End
// is "") must satisfy Target Result Int (or Value).
type KVCompare struct {
	Key, End string
	// Target is TargetCreate, TargetMod, TargetVersion, TargetValue or TargetLease.
	Target Target
	// Result is "=", "!=", "<" or ">".
	Result string
	Int    int64
	Value  string
}

// TargetLease compares a key's lease.
const TargetLease Target = "lease"

// KVResult is the outcome of a KVOp.
type KVResult struct {
	// Revision is the store's revision after the call (etcd's header revision).
	Revision int64
	// Err is etcd's error text when the call was refused: nothing changed.
	Err string
	// Range.
	Kvs   []KV
	Count int64
	More  bool
	// Put and DeleteRange.
	PrevKvs []KV
	Deleted int64
	// Txn.
	Succeeded bool
	Responses []KVResult
	// Events are the changes the call made (for watches and the record).
	Events []Event
}

// etcd's error texts for refused calls (rpctypes), as clientv3 reports them.
const (
	ErrTextKeyNotFound   = "etcdserver: key not found"
	ErrTextFutureRev     = "etcdserver: mvcc: required revision is a future revision"
	ErrTextDuplicateKey  = "etcdserver: duplicate key given in txn request"
	ErrTextEmptyKey      = "etcdserver: key is not provided"
	ErrTextValueProvided = "etcdserver: value is provided"
	ErrTextLeaseProvided = "etcdserver: lease is provided"
	ErrTextTooManyOps    = "etcdserver: too many operations in txn request"
)

// maxTxnOps is etcd's default --max-txn-ops.
const maxTxnOps = 128

// ReadKV answers a Range from what the store has applied (a serializable read).
func (s *Store) ReadKV(op KVOp) KVResult {
	r := s.rangeKV(op)
	r.Revision = s.rev
	return r
}

// ApplyKV applies one call of the generic KV API, as an entry of the log.
func (s *Store) ApplyKV(op KVOp) KVResult {
	if err := checkKV(op); err != "" {
		return KVResult{Revision: s.rev, Err: err}
	}
	var res KVResult
	switch op.Type {
	case KVRange:
		res = s.rangeKV(op)
	case KVTxn:
		ops, ok := branch(op.If, s.compareKV, op.Then, op.Else)
		if err := s.refuseWrites(ops); err != "" {
			return KVResult{Revision: s.rev, Err: err}
		}
		if writesKV(s, ops) {
			s.rev++
		}
		res.Succeeded = ok
		for _, o := range ops {
			r := s.writeKV(o)
			res.Events = append(res.Events, r.Events...)
			r.Events = nil
			res.Responses = append(res.Responses, r)
		}
	default:
		if err := s.refuseWrites([]KVOp{op}); err != "" {
			return KVResult{Revision: s.rev, Err: err}
		}
		if writesKV(s, []KVOp{op}) {
			s.rev++
		}
		res = s.writeKV(op)
	}
	res.Revision = s.rev
	for i := range res.Responses {
		res.Responses[i].Revision = s.rev
	}
	return res
}

// checkKV refuses what etcd refuses before it looks at the keyspace.
func checkKV(op KVOp) string {
	switch op.Type {
	case KVRange, KVDelete:
		if op.Key == "" {
			return ErrTextEmptyKey
		}
	case KVPut:
		switch {
		case op.Key == "":
			return ErrTextEmptyKey
		case op.IgnoreValue && op.Value != "":
			return ErrTextValueProvided
		case op.IgnoreLease && op.Lease != 0:
			return ErrTextLeaseProvided
		}
	case KVTxn:
		if len(op.Then) > maxTxnOps || len(op.Else) > maxTxnOps {
			return ErrTextTooManyOps
		}
		for _, ops := range [][]KVOp{op.Then, op.Else} {
			for _, o := range ops {
				if o.Type == KVTxn {
					return "locklab: a txn nested in a txn is not modelled by the simulated etcd"
				}
				if err := checkKV(o); err != "" {
					return err
				}
			}
			if duplicateKeys(ops) {
				return ErrTextDuplicateKey
			}
		}
	}
	return ""
}

// duplicateKeys reports whether two writes of one branch touch the same key
// (etcd refuses a txn that puts a key twice, or puts a key it deletes).
func duplicateKeys(ops []KVOp) bool {
	for i, a := range ops {
		for _, b := range ops[i+1:] {
			switch {
			case a.Type == KVPut && b.Type == KVPut && a.Key == b.Key:
				return true
			case a.Type == KVPut && b.Type == KVDelete && inRange(b.Key, b.End, a.Key),
				a.Type == KVDelete && b.Type == KVPut && inRange(a.Key, a.End, b.Key):
				return true
			}
		}
	}
	return false
}

// refuseWrites is etcd's check of a branch before it applies: a put to a
// lease that does not exist, or ignore-value/ignore-lease on a missing key.
func (s *Store) refuseWrites(ops []KVOp) string {
	for _, o := range ops {
		if o.Type != KVPut {
			continue
		}
		if o.Lease != 0 && s.leases[o.Lease] == nil {
			return ErrLeaseNotFound
		}
		if _, ok := s.kvs[o.Key]; !ok && (o.IgnoreValue || o.IgnoreLease) {
			return ErrTextKeyNotFound
		}
	}
	return ""
}

// writesKV reports whether ops change the keyspace (a new revision).
func writesKV(s *Store, ops []KVOp) bool {
	for _, o := range ops {
		if o.Type == KVPut || (o.Type == KVDelete && len(s.inRange(o.Key, o.End)) > 0) {
			return true
		}
	}
	return false
}

// writeKV applies one op at the revision already taken.
func (s *Store) writeKV(op KVOp) KVResult {
	var r KVResult
	switch op.Type {
	case KVRange:
		r = s.rangeKV(op)
	case KVPut:
		prev, had := s.kvs[op.Key]
		put := Op{Key: op.Key, Value: op.Value, Lease: op.Lease}
		if had {
			if op.PrevKV {
				r.PrevKvs = []KV{*prev}
			}
			if op.IgnoreValue {
				put.Value = prev.Value
			}
			if op.IgnoreLease {
				put.Lease = prev.Lease
			}
		}
		r.Events = append(r.Events, s.put(put))
	case KVDelete:
		for _, kv := range s.inRange(op.Key, op.End) {
			if op.PrevKV {
				r.PrevKvs = append(r.PrevKvs, kv)
			}
			r.Events = append(r.Events, s.del(kv.Key))
			r.Deleted++
		}
	}
	return r
}

// inRange reports whether k is in the range of Key and End (see KVOp).
func inRange(key, end, k string) bool {
	switch end {
	case "":
		return k == key
	case "\x00":
		return k >= key
	}
	return k >= key && k < end
}

// inRange returns the current keys in the range, sorted by key.
func (s *Store) inRange(key, end string) []KV {
	if end == "" {
		if kv, ok := s.kvs[key]; ok {
			return []KV{*kv}
		}
		return nil
	}
	var out []KV
	for k, kv := range s.kvs { // determinism:ok sorted below
		if inRange(key, end, k) {
			out = append(out, *kv)
		}
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// at returns the keys in the range as they were at revision rev, sorted by
// key, replayed from the store's events (there is no compaction). The
// resource's preset values (resource=etcd), which are not events, are not
// seen at a past revision.
func (s *Store) at(key, end string, rev int64) []KV {
	state := map[string]KV{}
	for _, e := range s.events {
		if e.KV.ModRev > rev {
			break
		}
		if !inRange(key, end, e.KV.Key) {
			continue
		}
		if e.Type == EventPut {
			state[e.KV.Key] = e.KV
		} else {
			delete(state, e.KV.Key)
		}
	}
	out := make([]KV, 0, len(state))
	for _, kv := range state { // determinism:ok sorted below
		out = append(out, kv)
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// rangeKV is etcd's Range: the keys (at a past revision if asked), filtered
// by mod and create revision, sorted, limited; Count is the number of keys in
// the range before the filters and the limit, as etcd counts.
func (s *Store) rangeKV(op KVOp) KVResult {
	if op.Rev > s.rev {
		return KVResult{Err: ErrTextFutureRev}
	}
	var kvs []KV
	if op.Rev > 0 && op.Rev < s.rev {
		kvs = s.at(op.Key, op.End, op.Rev)
	} else {
		kvs = s.inRange(op.Key, op.End)
	}
	r := KVResult{Count: int64(len(kvs))}
	if op.CountOnly {
		return r
	}
	kvs = slices.DeleteFunc(kvs, func(kv KV) bool {
		return (op.MinModRev > 0 && kv.ModRev < op.MinModRev) || (op.MaxModRev > 0 && kv.ModRev > op.MaxModRev) ||
			(op.MinCreateRev > 0 && kv.CreateRev < op.MinCreateRev) || (op.MaxCreateRev > 0 && kv.CreateRev > op.MaxCreateRev)
	})
	order := op.SortOrder
	if op.SortTarget != SortByKey && order == SortNone {
		order = SortAscend
	}
	if order != SortNone {
		by := func(a, b KV) int {
			switch op.SortTarget {
			case SortByVersion:
				return cmp.Compare(a.Version, b.Version)
			case SortByCreate:
				return cmp.Compare(a.CreateRev, b.CreateRev)
			case SortByMod:
				return cmp.Compare(a.ModRev, b.ModRev)
			case SortByValue:
				return strings.Compare(a.Value, b.Value)
			}
			return strings.Compare(a.Key, b.Key)
		}
		if order == SortDescend {
			asc := by
			by = func(a, b KV) int { return asc(b, a) }
		}
		slices.SortStableFunc(kvs, by)
	}
	if op.Limit > 0 && int64(len(kvs)) > op.Limit {
		kvs, r.More = kvs[:op.Limit], true
	}
	if op.KeysOnly {
		for i := range kvs {
			kvs[i].Value = ""
		}
	}
	r.Kvs = kvs
	return r
}

// compareKV is etcd's applyCompare: every key in the range must satisfy the
// compare; with no key, a value compare fails and the others compare a
// missing key's zero revisions, version and lease.
func (s *Store) compareKV(c KVCompare) bool {
	kvs := s.inRange(c.Key, c.End)
	if len(kvs) == 0 {
		if c.Target == TargetValue {
			return false
		}
		kvs = []KV{{Key: c.Key}}
	}
	for _, kv := range kvs {
		var d int
		switch c.Target {
		case TargetValue:
			d = bytes.Compare([]byte(kv.Value), []byte(c.Value))
		case TargetCreate:
			d = cmp.Compare(kv.CreateRev, c.Int)
		case TargetMod:
			d = cmp.Compare(kv.ModRev, c.Int)
		case TargetVersion:
			d = cmp.Compare(kv.Version, c.Int)
		case TargetLease:
			d = cmp.Compare(kv.Lease, c.Int)
		default:
			panic(fmt.Sprintf("etcd: unknown compare target %q", c.Target))
		}
		if !cmpResult(d, c.Result) {
			return false
		}
	}
	return true
}
