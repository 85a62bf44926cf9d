package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLeakedReentrantLockIsExplained: a renewal that succeeds after its owner
// released every hold the history shows is told from the servers' record
// when the record counts holds: a retried acquire the server applied more
// than once left holds no release undid (Redisson under a pause of its
// server: the queued attempts all apply at the resume), the lock leaked.
// Without such a record, or without any hold left, the wording is the
// service's own fault: it renewed a lock nobody held.
func TestLeakedReentrantLockIsExplained(t *testing.T) {
	const retried = `
0     p0 c1 invoke acquire k
5000  p0 c1 info   acquire k
5100  p1 c1 invoke acquire k
9000  p1 c1 ok     acquire k owner=o1 deadline=19000
9100  p1 c1 invoke release k owner=o1
9200  p1 c1 ok     release k owner=o1
12000 p2 c1 invoke renew k owner=o1
12010 p2 c1 ok     renew k owner=o1 deadline=22000
`
	const plain = `
5100  p1 c1 invoke acquire k
9000  p1 c1 ok     acquire k owner=o1 deadline=19000
9100  p1 c1 invoke release k owner=o1
9200  p1 c1 ok     release k owner=o1
12000 p2 c1 invoke renew k owner=o1
12010 p2 c1 ok     renew k owner=o1 deadline=22000
`
	ms := int64(1e6)
	// The server applies three attempts at 8.9 s; the release leaves two.
	leaked := []ServerGrant{{Key: "k", Owner: "o1", Client: "c1", Server: "redis", At: 8900 * ms, Lease: true,
		Holds: []HoldCount{{8900 * ms, 1}, {8900 * ms, 2}, {8900 * ms, 3}, {9150 * ms, 2}}}}
	// One attempt applied, released at once: nothing left at the renewal.
	released := []ServerGrant{{Key: "k", Owner: "o1", Client: "c1", Server: "redis", At: 8900 * ms, Lease: true,
		Ended: 9150 * ms, Holds: []HoldCount{{8900 * ms, 1}}}}
	// A lock that counts no holds: the grant lasts past the renewal.
	inForce := []ServerGrant{{Key: "k", Owner: "o1", Client: "c1", Server: "redis", At: 8900 * ms, Lease: true}}
	tests := []struct {
		name    string
		history string
		grants  []ServerGrant
		reason  []string // in the verdict's reason
		lines   []string // in the explanation
	}{
		{"a retried acquire applied three times", retried, leaked,
			[]string{"c1's retried acquire (outcome unknown, invoked 0.000s) was applied more than once",
				"the servers' record still counted 2 holds for c1 after its releases, so the lock leaked"},
			[]string{"c1's acquire invoked 0.000s came back with an unknown outcome at 5.000s",
				"The servers' record: redis applied 3 of c1's acquire attempts on \"k\" (owner \"o1\") at one moment, 8.900s: " +
					"its hold count rose from 0 to 3, where c1's client took at most 1 hold at once; the count was still 2 at the renewal (12.000s)"}},
		{"the attempts of an acquire that returned ok applied three times", plain, leaked,
			[]string{"c1's acquire attempts were applied more than once, each one more hold of the reentrant lock: " +
				"the servers' record still counted 2 holds for c1 after its releases"}, nil},
		{"no record: the acquire of unknown outcome is the suspect", retried, nil,
			[]string{"c1's lease was renewed after it had released every hold the history shows: its acquire of unknown outcome (invoked 0.000s) " +
				"may have taken effect after all", "(the servers' record was not kept)"}, nil},
		{"a record without hold counts: the grant still in force", retried, inForce,
			[]string{"may have taken effect after all (on a reentrant lock each attempt applied is one more hold), leaving the lock its own: " +
				"the servers' record shows its grant still in force"},
			[]string{"The servers' record: c1's grant of \"k\" by redis at 8.900s was still in force at the renewal (12.000s)."}},
		{"the record shows the lock released, an acquire of unknown outcome: the service renewed a free lock", retried, released,
			[]string{"c1's lease was renewed while nobody held the lock"}, nil},
		{"no record, no acquire of unknown outcome: the service renewed a free lock", plain, nil,
			[]string{"c1's lease was renewed while nobody held the lock"}, nil},
		{"the record shows the lock released: the service renewed a free lock", plain, released,
			[]string{"c1's lease was renewed while nobody held the lock"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := LockService{Leases: true, Grants: tc.grants}.Check(parseHistory(t, tc.history))
			require.Equal(t, Invalid, v.Result, describe(v))
			for _, want := range tc.reason {
				assert.Contains(t, v.Reason, want)
			}
			require.NotNil(t, v.Counterexample)
			text := describe(v)
			for _, want := range tc.lines {
				assert.Contains(t, text, want)
			}
		})
	}
}
