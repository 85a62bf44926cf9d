package etcd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func put(key, value string, lease int64) Op {
	return Op{Type: OpPut, Key: key, Value: value, Lease: lease}
}

func txn(ops ...Op) Command { return Command{Type: CmdTxn, Txn: Txn{Then: ops}} }

func TestStoreRevisionsPerKey(t *testing.T) {
	s := NewStore()
	s.Apply(1, txn(put("a", "1", 0)))             // rev 2
	s.Apply(2, txn(put("b", "1", 0)))             // rev 3
	s.Apply(3, txn(put("a", "2", 0)))             // rev 4
	s.Apply(4, txn(Op{Type: OpDelete, Key: "b"})) // rev 5
	s.Apply(5, txn(Op{Type: OpDelete, Key: "b"})) // nothing deleted: no new revision
	a, ok := s.Get("a")
	require.True(t, ok)
	assert.Equal(t, KV{Key: "a", Value: "2", CreateRev: 2, ModRev: 4, Version: 2}, a)
	_, ok = s.Get("b")
	assert.False(t, ok)
	assert.Equal(t, int64(5), s.Revision())
	s.Apply(6, txn(put("b", "x", 0)))
	b, _ := s.Get("b")
	assert.Equal(t, int64(6), b.CreateRev, "a key created again gets a new create revision")
	assert.Equal(t, int64(1), b.Version)
}

func TestTxnCompares(t *testing.T) {
	s := NewStore()
	s.Apply(1, txn(put("k", "v", 0))) // create 2, mod 2, version 1
	tests := []struct {
		name string
		cmp  Compare
		want bool
	}{
		{"create = 2", Compare{Key: "k", Target: TargetCreate, Result: "=", Int: 2}, true},
		{"create = 0 on an existing key", Compare{Key: "k", Target: TargetCreate, Result: "=", Int: 0}, false},
		{"create = 0 on a missing key", Compare{Key: "missing", Target: TargetCreate, Result: "=", Int: 0}, true},
		{"mod > 1", Compare{Key: "k", Target: TargetMod, Result: ">", Int: 1}, true},
		{"version < 1", Compare{Key: "k", Target: TargetVersion, Result: "<", Int: 1}, false},
		{"value = v", Compare{Key: "k", Target: TargetValue, Result: "=", Value: "v"}, true},
		{"value != v", Compare{Key: "k", Target: TargetValue, Result: "!=", Value: "v"}, false},
		{"value of a missing key", Compare{Key: "missing", Target: TargetValue, Result: "!=", Value: "v"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Apply(2, Command{Type: CmdTxn, Txn: Txn{If: []Compare{tc.cmp},
				Then: []Op{{Type: OpGet, Key: "k"}}, Else: []Op{{Type: OpGet, Key: "missing"}}}})
			assert.Equal(t, tc.want, r.Succeeded)
			assert.Equal(t, int64(2), r.Revision, "a read-only txn makes no revision")
		})
	}
}

func TestRangeReadsByCreateRevision(t *testing.T) {
	s := NewStore()
	s.Apply(1, txn(put("lock/c", "", 0))) // rev 2
	s.Apply(2, txn(put("lock/a", "", 0))) // rev 3
	s.Apply(3, txn(put("lock/b", "", 0))) // rev 4
	s.Apply(4, txn(put("other", "", 0)))
	get := func(op Op) []string {
		op.Type = OpGet
		var keys []string
		for _, kv := range s.Apply(5, txn(op)).Results[0].Kvs {
			keys = append(keys, kv.Key)
		}
		return keys
	}
	assert.Equal(t, []string{"lock/a", "lock/b", "lock/c"}, get(Op{Key: "lock/", Prefix: true}))
	assert.Equal(t, []string{"lock/c"}, get(Op{Key: "lock/", Prefix: true, Order: OrderFirstCreate}))
	assert.Equal(t, []string{"lock/b"}, get(Op{Key: "lock/", Prefix: true, Order: OrderLastCreate}))
	assert.Equal(t, []string{"lock/a"}, get(Op{Key: "lock/", Prefix: true, Order: OrderLastCreate, MaxCreateRev: 3}),
		"the key just below revision 4: what a mutex waiter watches")
	assert.Empty(t, get(Op{Key: "lock/", Prefix: true, Order: OrderLastCreate, MaxCreateRev: 1}))
}

func TestLeasesOwnKeysAndRevokeDeletesThemAtOneRevision(t *testing.T) {
	s := NewStore()
	g := s.Apply(7, Command{Type: CmdLeaseGrant, TTL: 10 * time.Second})
	require.Equal(t, int64(7), g.Lease, "the lease id is the grant's raft index")
	s.Apply(8, txn(put("a", "", 7), put("b", "", 7))) // rev 2, one revision for the txn
	s.Apply(9, txn(put("c", "", 0)))                  // rev 3
	r := s.Apply(10, Command{Type: CmdLeaseRevoke, Lease: 7})
	assert.Equal(t, []string{"a", "b"}, r.Revoked)
	assert.Equal(t, int64(4), r.Revision)
	assert.Len(t, r.Events, 2)
	_, ok := s.Get("c")
	assert.True(t, ok)
	bad := s.Apply(11, txn(put("d", "", 7)))
	assert.Equal(t, ErrLeaseNotFound, bad.Err, "a put to a revoked lease is refused as a whole")
	_, ok = s.Get("d")
	assert.False(t, ok)
	assert.False(t, s.HasLease(7))
}

func TestEventsSinceARevision(t *testing.T) {
	s := NewStore()
	s.Apply(1, txn(put("k/1", "", 0)))              // 2
	s.Apply(2, txn(put("j", "", 0)))                // 3
	s.Apply(3, txn(Op{Type: OpDelete, Key: "k/1"})) // 4
	evs := s.EventsSince("k/", true, 3)
	require.Len(t, evs, 1)
	assert.Equal(t, Event{Type: EventDelete, KV: KV{Key: "k/1", ModRev: 4}}, evs[0])
	assert.Len(t, s.EventsSince("k/1", false, 0), 2)
}
