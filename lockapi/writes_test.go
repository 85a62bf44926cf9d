package lockapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteLogLostUpdates: the record's lost updates are the committed
// writes derived from a read that did not return the write in force when
// they were applied; a duplicate of a request loses nothing of its own, a
// write not committed takes no effect, and a write left out is as if never
// applied.
func TestWriteLogLostUpdates(t *testing.T) {
	type step struct {
		read      bool
		client    string
		request   uint64
		value     int64
		committed bool
		commit    int // with !read && !committed: commit the write at this index later (-1: never)
		stale     bool
		parent    int // with stale: the index of the write the read returned (-1: the initial value)
	}
	r := func(c string, v int64) step { return step{read: true, client: c, value: v} }
	rs := func(c string, v int64, parent int) step {
		return step{read: true, client: c, value: v, stale: true, parent: parent}
	}
	w := func(c string, req uint64, v int64) step {
		return step{client: c, request: req, value: v, committed: true}
	}
	tests := []struct {
		name  string
		steps []step
		skip  []int // indexes in Writes left out
		want  [][2]int64
	}{
		{"a +1 chain", []step{r("c1", 0), w("c1", 1, 1), r("c2", 1), w("c2", 2, 2)}, nil, nil},
		{"two writes from the same read", []step{r("c1", 0), r("c2", 0), w("c1", 1, 1), w("c2", 2, 1)}, nil,
			[][2]int64{{1, 1}}},
		{"a late write rolls the counter back", []step{r("c1", 0), r("c2", 0), w("c2", 2, 1), r("c3", 1), w("c3", 3, 2),
			w("c1", 1, 1)}, nil, [][2]int64{{2, 1}}},
		{"a duplicate right after its request loses nothing", []step{r("c1", 0), w("c1", 1, 1), w("c1", 1, 1)}, nil, nil},
		{"a late duplicate rolls back", []step{r("c1", 0), w("c1", 1, 1), r("c2", 1), w("c2", 2, 2), w("c1", 1, 1)}, nil,
			[][2]int64{{2, 1}}},
		{"a blind write loses nothing", []step{r("c1", 0), w("c1", 1, 1), w("c2", 2, 5)}, nil, nil},
		{"an uncommitted write takes no effect", []step{r("c1", 0), r("c2", 0),
			{client: "c1", request: 1, value: 1, commit: -1}, w("c2", 2, 1)}, nil, nil},
		{"a write left out is as if never applied", []step{r("c1", 0), r("c2", 0), w("c2", 2, 1), w("c1", 1, 1)},
			[]int{1}, nil},
		{"a read while a write left out was in force reads the write before", []step{r("c1", 0), r("c2", 0), w("c1", 1, 1),
			w("c2", 2, 1), r("c3", 1), w("c3", 3, 2)}, []int{1}, nil},
		{"a stale read of the initial value, then a write over the write in force", []step{r("c1", 0), w("c1", 1, 1),
			rs("c2", 0, -1), w("c2", 2, 1)}, nil, [][2]int64{{1, 1}}},
		{"a stale read of an earlier write, then a write over the write in force", []step{r("c1", 0), w("c1", 1, 1),
			r("c2", 1), w("c2", 2, 2), rs("c3", 1, 0), w("c3", 3, 2)}, nil, [][2]int64{{2, 2}}},
		{"a read that was not stale loses nothing", []step{r("c1", 0), w("c1", 1, 1), rs("c2", 1, 0), w("c2", 2, 2)},
			nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewWriteLog()
			l.Record(true)
			at := time.Duration(0)
			for _, s := range tc.steps {
				at += time.Millisecond
				if s.stale {
					l.ReadOf("storage", "k", s.client, s.value, at, s.parent)
					continue
				}
				if s.read {
					l.Read("storage", "k", s.client, s.value, at)
					continue
				}
				l.Applied("storage", "storage", "k", s.client, s.request, 0, s.value, at, s.committed)
			}
			var got [][2]int64
			for _, u := range l.LostUpdatesWithout(func(i int, _ AppliedWrite) bool {
				for _, j := range tc.skip {
					if i == j {
						return true
					}
				}
				return false
			}) {
				got = append(got, [2]int64{u.Lost.Value, u.By.Value})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestWriteLogStaleReads: a read that returned a write other than the one in
// force is a stale read of the record, whether or not a write derives from
// it; a read of the write in force is not.
func TestWriteLogStaleReads(t *testing.T) {
	tests := []struct {
		name   string
		parent int // the write the read returned (-1: the initial value)
		value  int64
		want   []StaleRead
	}{
		{"a read of the write in force", 1, 2, nil},
		{"a read of the write before", 0, 1, []StaleRead{{Resource: "etcd", Key: "k", Client: "c3", Value: 1,
			At: 3 * time.Second, Returned: 0, InForce: 1}}},
		{"a read of the initial value", -1, 0, []StaleRead{{Resource: "etcd", Key: "k", Client: "c3", Value: 0,
			At: 3 * time.Second, Returned: -1, InForce: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewWriteLog()
			l.Record(true)
			l.Applied("etcd", "etcd1", "k", "c1", 1, 0, 1, time.Second, true)
			l.Applied("etcd", "etcd1", "k", "c2", 2, 0, 2, 2*time.Second, true)
			l.ReadOf("etcd", "k", "c3", tc.value, 3*time.Second, tc.parent)
			assert.Equal(t, tc.want, l.StaleReads())
		})
	}
}

// TestWriteLogRecordsOnlyWhenAsked: a new log records nothing until
// Record(true), and a nil log is safe to call.
func TestWriteLogRecordsOnlyWhenAsked(t *testing.T) {
	l := NewWriteLog()
	l.Read("storage", "k", "c1", 0, 0)
	assert.Equal(t, -1, l.Applied("storage", "storage", "k", "c1", 1, 0, 1, 0, true))
	assert.Empty(t, l.Writes())
	var none *WriteLog
	none.Record(true)
	none.Read("storage", "k", "c1", 0, 0)
	assert.Equal(t, -1, none.Applied("storage", "storage", "k", "c1", 1, 0, 1, 0, true))
	assert.Nil(t, none.LostUpdates())
	l.Record(true)
	l.Read("storage", "k", "c1", 0, time.Second)
	i := l.Applied("storage", "storage", "k", "c1", 1, 7, 1, 2*time.Second, false)
	l.Commit(i, 3*time.Second)
	ws := l.Writes()
	require.Len(t, ws, 1)
	assert.Equal(t, AppliedWrite{Resource: "storage", Server: "storage", Key: "k", Client: "c1", Request: 1, Token: 7, Value: 1,
		At: 2 * time.Second, Committed: true, CommittedAt: 3 * time.Second, HasRead: true, ReadAt: time.Second, Parent: -1, Replaced: -1}, ws[0])
}
