package lockapi

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const s = time.Second

// TestGrantLogBreaches: the record's holdings and broken promises, one story
// per case.
func TestGrantLogBreaches(t *testing.T) {
	tests := []struct {
		name     string
		quorum   int
		record   func(l *GrantLog)
		holdings []Holding
		breaches []string
	}{
		{
			name: "a release, then the next grant: nothing broken",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Released("r", "k", "a", 5*s)
				l.Granted("r", "redis", "k", "b", "c2", 6*s, 16*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 5 * s}, {"k", "b", "c2", 6 * s, 16 * s}},
		},
		{
			name: "a grant after the lease ran out: nothing broken",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Granted("r", "redis", "k", "b", "c2", 10*s, 20*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 10 * s}, {"k", "b", "c2", 10 * s, 20 * s}},
		},
		{
			name: "a restart lost the key and the server granted it again",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Granted("r", "redis", "k", "b", "c2", 3*s, 13*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 10 * s}, {"k", "b", "c2", 3 * s, 13 * s}},
			breaches: []string{`"k": c1 as a from 0.000s to 10.000s and c2 as b from 3.000s to 13.000s overlap from 3.000s to 10.000s`},
		},
		{
			name: "two primaries at once: each release ends its own owner's grant",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Granted("r", "replica1", "k", "b", "c2", 3*s, 13*s)
				l.Released("r", "k", "a", 4*s)
				l.Released("r", "k", "b", 5*s)
				l.Granted("r", "redis", "k", "c", "c3", 6*s, 16*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 4 * s}, {"k", "b", "c2", 3 * s, 5 * s}, {"k", "c", "c3", 6 * s, 16 * s}},
			breaches: []string{`"k": c1 as a from 0.000s to 4.000s and c2 as b from 3.000s to 5.000s overlap from 3.000s to 4.000s`},
		},
		{
			name: "a renewal extends the promise",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Renewed("r", "k", "a", 8*s, 18*s)
				l.Renewed("r", "k", "x", 9*s, 30*s) // not x's: ignored
				l.Granted("r", "redis", "k", "b", "c2", 12*s, 22*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 18 * s}, {"k", "b", "c2", 12 * s, 22 * s}},
			breaches: []string{`"k": c1 as a from 0.000s to 18.000s and c2 as b from 12.000s to 22.000s overlap from 12.000s to 18.000s`},
		},
		{
			name: "the server revokes a lock without a lease (a transaction aborted), then grants it: the revocation is broken, the next grant is not",
			record: func(l *GrantLog) {
				l.Granted("db", "db", "k", "a", "c1", 0, 0)
				l.Revoked("db", "k", "a", "db", 5*s)
				l.Granted("db", "db", "k", "b", "c2", 5*s, 0)
				l.Released("db", "k", "b", 6*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 5 * s}, {"k", "b", "c2", 5 * s, 6 * s}},
			breaches: []string{`"k": db deleted the lock of c1 as a from 0.000s to 5.000s at 5.000s`},
		},
		{
			name: "a revocation after the lease ran out breaks nothing",
			record: func(l *GrantLog) {
				l.Granted("db", "db", "k", "a", "c1", 0, 10*s)
				l.Revoked("db", "k", "a", "db", 12*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 10 * s}},
		},
		{
			name: "a plain DEL by another client removes the lock under its owner",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Removed("r", "k", "a", "c2", 4*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 10 * s}},
			breaches: []string{`"k": c2 deleted the lock of c1 as a from 0.000s to 10.000s at 4.000s`},
		},
		{
			name: "a plain DEL by the owner's client is its release",
			record: func(l *GrantLog) {
				l.Granted("r", "redis", "k", "a", "c1", 0, 10*s)
				l.Removed("r", "k", "a", "c1", 4*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, 4 * s}},
		},
		{
			name: "a lock without leases is held until released",
			record: func(l *GrantLog) {
				l.Granted("control/a", "control", "k", "a", "c1", 0, 0)
				l.Granted("control/b", "control", "k", "b", "c2", 1*s, 0)
				l.Released("control/b", "k", "b", 2*s)
			},
			holdings: []Holding{{"k", "a", "c1", 0, math.MaxInt64}, {"k", "b", "c2", 1 * s, 2 * s}},
			breaches: []string{`"k": c1 as a from 0.000s to the end and c2 as b from 1.000s to 2.000s overlap from 1.000s to 2.000s`},
		},
		{
			name:   "quorum: one instance lost a's value, b got a majority",
			quorum: 3,
			record: func(l *GrantLog) {
				for _, i := range []string{"a", "b", "c"} {
					l.Granted(i, i, "k", "A", "c1", 0, 10*s)
				}
				for _, i := range []string{"a", "d", "e"} {
					l.Granted(i, i, "k", "B", "c2", 2*s, 12*s)
				}
				l.Released("b", "k", "A", 4*s)
				l.Released("c", "k", "A", 4*s)
			},
			holdings: []Holding{{"k", "A", "c1", 0, 4 * s}, {"k", "B", "c2", 2 * s, 12 * s}},
			breaches: []string{`"k": c1 as A from 0.000s to 4.000s and c2 as B from 2.000s to 12.000s overlap from 2.000s to 4.000s`},
		},
		{
			name:   "quorum: a minority is no holding, and a removal on one instance breaks nothing",
			quorum: 3,
			record: func(l *GrantLog) {
				l.Granted("a", "a", "k", "A", "c1", 0, 10*s)
				l.Granted("b", "b", "k", "A", "c1", 0, 10*s)
				l.Removed("a", "k", "A", "c2", 1*s)
				for _, i := range []string{"c", "d", "e"} {
					l.Granted(i, i, "k", "B", "c2", 2*s, 12*s)
				}
			},
			holdings: []Holding{{"k", "B", "c2", 2 * s, 12 * s}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewGrantLog(tc.quorum)
			tc.record(l)
			assert.Equal(t, tc.holdings, l.Holdings())
			var got []string
			for _, b := range l.Breaches() {
				got = append(got, b.String())
			}
			assert.Equal(t, tc.breaches, got)
		})
	}
}

func TestGrantLogPromised(t *testing.T) {
	l := NewGrantLog(1)
	l.Granted("r", "redis", "k", "a", "c1", 1*s, 11*s)
	l.Renewed("r", "k", "a", 8*s, 18*s)
	assert.Equal(t, time.Duration(0), l.Promised("k", "a", 0), "not granted yet")
	assert.Equal(t, 11*s, l.Promised("k", "a", 5*s))
	assert.Equal(t, 18*s, l.Promised("k", "a", 9*s))
	assert.Equal(t, time.Duration(0), l.Promised("k", "b", 9*s))

	q := NewGrantLog(3)
	for i, at := range []time.Duration{1 * s, 2 * s, 3 * s, 4 * s} {
		q.Granted(string(rune('a'+i)), "x", "k", "A", "c1", at, at+10*s)
	}
	assert.Equal(t, time.Duration(0), q.Promised("k", "A", 2*s), "two instances are no majority")
	assert.Equal(t, 11*s, q.Promised("k", "A", 3*s), "the third-latest end promised by then")
	assert.Equal(t, 12*s, q.Promised("k", "A", 4*s))
}

func TestNilGrantLogRecordsNothing(t *testing.T) {
	var l *GrantLog
	require.NotPanics(t, func() {
		l.Granted("r", "redis", "k", "a", "c1", 0, s)
		l.Renewed("r", "k", "a", 0, s)
		l.Released("r", "k", "a", s)
		l.Removed("r", "k", "a", "c2", s)
	})
	assert.Nil(t, l.Grants())
	assert.Nil(t, l.Holdings())
	assert.Nil(t, l.Breaches())
	assert.Zero(t, l.Promised("k", "a", s))
}

// TestGrantLogCountsHolds: a reentrant lock's hold counts go with the
// owner's open grant, in order, and end with it; a count for an owner
// without an open grant is dropped.
func TestGrantLogCountsHolds(t *testing.T) {
	l := NewGrantLog(1)
	l.Counted("s", "k", "o1", 1, 1) // no grant yet
	l.Granted("s", "redis", "k", "o1", "c1", 2, 12)
	l.Counted("s", "k", "o1", 2, 1)
	l.Renewed("s", "k", "o1", 2, 13)
	l.Counted("s", "k", "o1", 2, 2)
	l.Counted("s", "k", "o1", 5, 1)
	l.Released("s", "k", "o1", 6)
	l.Counted("s", "k", "o1", 7, 1) // released: no open grant
	l.Granted("s", "redis", "k", "o2", "c2", 8, 18)
	gs := l.Grants()
	require.Len(t, gs, 2)
	assert.Equal(t, []HoldCount{{2, 1}, {2, 2}, {5, 1}}, gs[0].Holds)
	assert.Nil(t, gs[1].Holds)
}
