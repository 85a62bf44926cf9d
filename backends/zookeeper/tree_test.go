package zookeeper

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTree: the data tree's rules, as the lock recipe relies on them.
func TestTree(t *testing.T) {
	tr := newTree()
	zxid := uint64(0)
	apply := func(x txn) change { zxid++; return tr.apply(x, zxid) }

	require.Equal(t, CodeOK, apply(txn{Op: "session", Session: 1, Timeout: 10}).code)
	require.Equal(t, CodeOK, apply(txn{Op: "session", Session: 2, Timeout: 10}).code)

	a := apply(txn{Op: "create", Session: 1, Path: "/lock/k/_c_a-lock-", Ephemeral: true, Sequential: true})
	require.Equal(t, CodeOK, a.code)
	assert.Equal(t, "/lock/k/_c_a-lock-0000000000", a.path, "the sequence is the parent's cversion")
	assert.Equal(t, []string{"/lock", "/lock/k", a.path}, a.created, "missing parents are created as containers")
	assert.Equal(t, zxid, a.stat.Czxid)
	assert.Equal(t, int64(1), a.stat.EphemeralOwner)

	b := apply(txn{Op: "create", Session: 2, Path: "/lock/k/_c_b-lock-", Ephemeral: true, Sequential: true})
	assert.Equal(t, "/lock/k/_c_b-lock-0000000001", b.path)
	assert.Greater(t, b.stat.Czxid, a.stat.Czxid, "czxid grows with every create: a fencing token")

	assert.Equal(t, CodeExpired, apply(txn{Op: "create", Session: 9, Path: "/lock/k/x", Ephemeral: true}).code,
		"an ephemeral node needs a live session")

	closed := apply(txn{Op: "close", Session: 1, Expired: true})
	assert.Equal(t, []string{a.path}, closed.deleted, "a session's end deletes its ephemeral nodes")
	assert.Equal(t, []string{"_c_b-lock-0000000001"}, tr.nodes["/lock/k"].children)
	assert.Equal(t, CodeExpired, apply(txn{Op: "close", Session: 1}).code)

	assert.Equal(t, CodeNoNode, apply(txn{Op: "delete", Path: a.path}).code)
	assert.Equal(t, CodeNodeExists, apply(txn{Op: "delete", Path: "/lock/k"}).code, "a node with children stays")
	c := apply(txn{Op: "create", Session: 2, Path: "/lock/k/_c_c-lock-", Ephemeral: true, Sequential: true})
	assert.Equal(t, "/lock/k/_c_c-lock-0000000003", c.path, "the delete bumped cversion too")
	assert.Equal(t, []int64{2}, tr.sessionIDs())
}

func TestSortBySequence(t *testing.T) {
	names := []string{"_c_ff-lock-0000000012", "_c_00-lock-0000000013", "_c_aa-lock-0000000002"}
	sortBySequence(names)
	assert.Equal(t, []string{"_c_aa-lock-0000000002", "_c_ff-lock-0000000012", "_c_00-lock-0000000013"}, names,
		"the guid prefix does not decide the order, the sequence does")
	assert.Equal(t, uint64(12), sequence("_c_ff-lock-0000000012"))
	assert.Equal(t, uint64(0), sequence("short"))
}
