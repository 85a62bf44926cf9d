package models

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// wedgedHistory: c1 holds k until 1 s; c1's next acquire, invoked at 2 s
// under a partition of c1 (2 s to 40 s), ends fail at 5 s; c2 and c3 try
// every second from 6 s to the end (59.5 s), in vain. okAt, if positive,
// makes c2's attempt at that second succeed (held 50 ms).
func wedgedHistory(okAt int) string {
	var b strings.Builder
	b.WriteString("0 p1 c1 invoke acquire k\n10 p1 c1 ok acquire k owner=o1\n1000 p1 c1 invoke release k owner=o1\n1010 p1 c1 ok release k owner=o1\n")
	b.WriteString("2000 nemesis start partition c1\n2000 p1 c1 invoke acquire k\n5000 p1 c1 fail acquire k\n")
	for s := 6; s < 60; s++ {
		c := 2 + s%2
		t := s * 1000
		if s == 40 {
			b.WriteString("40000 nemesis stop partition c1\n")
		}
		if s == okAt {
			fmt.Fprintf(&b, "%d p%d c%d invoke acquire k\n%d p%d c%d ok acquire k owner=o2\n%d p%d c%d invoke release k owner=o2\n%d p%d c%d ok release k owner=o2\n",
				t, c, c, t+10, c, c, t+50, c, c, t+60, c, c)
			continue
		}
		fmt.Fprintf(&b, "%d p%d c%d invoke acquire k\n%d p%d c%d fail acquire k\n", t, c, c, t+500, c, c)
	}
	return b.String()
}

// TestAWedgedLockIsALivenessFailure: a grant without a lease that the
// servers' record shows standing to the end, while nobody believes it holds
// the lock and the others fail to take it for longer than the stall limit,
// is invalid although a fault covers most of the stall; a grant that ends by
// a lease, a lock taken again, one that a client holds at the end, a history
// without the record, or a wedge younger than the stall limit are not.
func TestAWedgedLockIsALivenessFailure(t *testing.T) {
	standing := ServerGrant{Key: "k", Owner: "o1b", Client: "c1", Server: "redis", At: 3_000_000_000, Standing: true}
	leased := standing
	leased.Standing, leased.Lease = false, true
	late := standing
	late.At = 55_000_000_000
	tests := []struct {
		name    string
		history string
		grants  []ServerGrant
		want    Result
		wedged  bool
		phrases []string
	}{
		{"standing grant, others fail to the end", wedgedHistory(0), []ServerGrant{standing}, Invalid, true,
			[]string{`wedged by the grant of "k" to c1 (owner "o1b") by redis at 3.000s, which has no lease and was never released`,
				"left standing by the partition c1 fault from 2.000s to 40.000s", "c2, c3 tried 54 time(s)",
				"faults do not excuse it"}},
		{"without the servers' record: excused by the fault, not judged", wedgedHistory(0), nil, Invalid, false,
			[]string{"clients waited 19.5s"}},
		{"the grant had a lease", wedgedHistory(0), []ServerGrant{leased}, Invalid, false, []string{"clients waited 19.5s"}},
		{"the lock was taken again (a stall after it, no wedge)", wedgedHistory(50), []ServerGrant{standing}, Invalid, false,
			[]string{"clients waited 10.01s"}},
		{"a grant made in the last seconds", wedgedHistory(0), []ServerGrant{late}, Invalid, false, []string{"clients waited 19.5s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Grants: tc.grants}
			checks, _, err := cfg.Select([]string{"liveness"}, nil)
			require.NoError(t, err)
			v := Run(checks[0], parseHistory(t, tc.history))
			assert.Equal(t, tc.want, v.Result, describe(v))
			for _, p := range tc.phrases {
				assert.Contains(t, describe(v), p)
			}
			assert.Equal(t, tc.wedged, strings.Contains(v.Reason, "wedged by"), v.Reason)
		})
	}
}

// TestAGrantOfAnAcquireRecordedAsFailIsADisagreement: the record's grant
// to c1 at 3 s falls in c1's acquire that returned fail: told, with when;
// a grant of an acquire that returned ok, or with a quorum, is not.
func TestAGrantOfAnAcquireRecordedAsFailIsADisagreement(t *testing.T) {
	events, err := history.Pair(parseHistory(t, wedgedHistory(0)))
	require.NoError(t, err)
	during := ServerGrant{Key: "k", Owner: "o1b", Client: "c1", Server: "redis", At: 3_000_000_000}
	after := during
	after.At = 5_200_000_000
	first := ServerGrant{Key: "k", Owner: "o1", Client: "c1", Server: "redis", At: 5_000_000}
	notes := GrantDisagreements(events, []ServerGrant{first, during, after}, 1, 3)
	require.Len(t, notes, 2, "%q", notes)
	assert.Contains(t, notes[0], `c1's acquire of "k" invoked at 2.000s returned fail at 5.000s, but redis granted it to c1 (owner "o1b") at 3.000s, while it was waiting`)
	assert.Contains(t, notes[1], "at 5.200s, 200ms after it gave up")
	assert.Len(t, GrantDisagreements(events, []ServerGrant{first, during, after}, 1, 1), 2, "one told, one counted")
	assert.Contains(t, GrantDisagreements(events, []ServerGrant{during, after}, 1, 1)[1], "disagree on 1 more acquire(s)")
	assert.Empty(t, GrantDisagreements(events, []ServerGrant{during}, 3, 3), "with a quorum a grant of one instance is no promise")
	assert.Empty(t, GrantDisagreements(events, []ServerGrant{first}, 1, 3))
}
