package models

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// TestLeaseExplanationNamesTheGrant: when a grant breaks the contract, the
// explanation names that grant, and no release is blamed for a lock it did
// not release (issue 10, item 3).
func TestLeaseExplanationNamesTheGrant(t *testing.T) {
	tests := []struct {
		fixture   string
		short     string   // the verdict's reason names this grant
		blameless []string // no explanation line blames these releases
	}{
		{"lease-grant-breaks-contract", "c5 was granted the lock while c2 held it and its lease had not run out",
			[]string{"c5's release", "c2's release", "released c2's lock"}},
		{"lease-granted-early", "c2 was granted the lock while c1 held it and its lease had not run out",
			[]string{"c1's release", "c2's release"}},
		{"lease-concurrent-grants", "c3 and c4 were both granted the lock, each before the other's lease could have run out",
			[]string{"c4's release", "released c3's lock"}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture, func(t *testing.T) {
			fx := loadFixture(t, "testdata/histories/"+tc.fixture+".txtar")
			v := Run(LockService{Leases: true}, fx.events)
			require.Equal(t, Invalid, v.Result, v.Reason)
			assert.Contains(t, v.Reason, tc.short)
			require.NotNil(t, v.Counterexample)
			text := strings.Join(v.Counterexample.Explanation, "\n")
			assert.Contains(t, text, "broke the contract")
			for _, b := range tc.blameless {
				assert.NotContains(t, v.Reason+"\n"+text, b)
			}
		})
	}
}

// TestLeaseExplanationSaysWhosePromiseBroke: a grant that broke the holder's
// lease as its client counted it is blamed on the lock service unless the
// history shows the service ending the holder's hold once its own promise had
// run out: ZooKeeper's session expiry, naming the holder's lock node and the
// leader's last contact plus the session timeout. Then the broken promise is
// the client's: its deadline outlived the server's session timeout (issue 28,
// item 4: Curator's on-suspend=continue, a 16.7 s deadline against a 10 s
// session).
func TestLeaseExplanationSaysWhosePromiseBroke(t *testing.T) {
	const grants = `
0     p1 c1 invoke acquire k
100   p1 c1 ok     acquire k owner=/lock/k/_c_1-lock-0000000001 deadline=16767
500   p2 c2 invoke acquire k
10100 nemesis start session-expired zk1,c1
10100 nemesis stop session-expired zk1,c1
10200 p2 c2 ok     acquire k owner=/lock/k/_c_2-lock-0000000002 deadline=26867
`
	const detail = "session 0x1 of c1 expired on leader zk1 (no contact for its timeout); node deleted: /lock/k/_c_1-lock-0000000001"
	serverBroke := []string{"the lock service broke the lease model", "c2 was granted the lock while c1 held it and its lease had not run out"}
	tests := []struct {
		name             string
		key, owner       string
		promised         int64 // ms; 0: none recorded
		reason, explains []string
	}{
		{"the session expired when its promise ran out", "k", "/lock/k/_c_1-lock-0000000001", 10050,
			[]string{"a client's own lease deadline broke the lease model", "c2 was granted the lock while c1's lease had not run out by its own deadline (16.767s)",
				"after the lock service had ended c1's hold (10.100s, session-expired)", "the promise broken is the client's, not the server's"},
			[]string{"The lock service ended c1's hold at 10.100s, when its own promise had run out (10.050s): session 0x1 of c1 expired",
				"the lock service kept its promise", "c1's own deadline (16.767s) outlived the end of its hold on the server by 6.667s"}},
		{"the session expired before its promise ran out", "k", "/lock/k/_c_1-lock-0000000001", 12000,
			append(serverBroke, "the lock service ended c1's hold at 10.100s, before its own promise ran out (12.000s, session-expired)"),
			[]string{"The lock service ended c1's hold at 10.100s, before its own promise to it ran out (12.000s): session 0x1 of c1 expired",
				"this grant broke the contract"}},
		{"no promise recorded", "k", "/lock/k/_c_1-lock-0000000001", 0, serverBroke, []string{"this grant broke the contract"}},
		{"another node deleted", "k", "/lock/k/_c_3-lock-0000000003", 10050, serverBroke, []string{"this grant broke the contract"}},
		{"another lock's node", "j", "/lock/k/_c_1-lock-0000000001", 10050, serverBroke, []string{"this grant broke the contract"}},
		{"no lock node named", "", "", 10050, serverBroke, []string{"this grant broke the contract"}},
	}
	// c2 asks before c1's grant returned: the grants overlap, and the
	// session's expiry at its promise still tells whose promise broke.
	concurrent := strings.Replace(strings.Replace(grants, "500   p2 c2 invoke acquire k\n", "", 1),
		"100   p1 c1 ok", "50    p2 c2 invoke acquire k\n100   p1 c1 ok", 1)
	tests = append(tests, struct {
		name             string
		key, owner       string
		promised         int64
		reason, explains []string
	}{"overlapping grants, the session expired when its promise ran out", "k", "/lock/k/_c_1-lock-0000000001", 10050,
		[]string{"a client's own lease deadline broke the lease model", "after the lock service had ended c1's hold (10.100s, session-expired)"},
		[]string{"c1's own deadline (16.767s) outlived the end of its hold on the server by 6.667s"}})
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hist := grants
			if i == len(tests)-1 {
				hist = concurrent
				assert.NotContains(t, concurrent, "500   p2")
			}
			events := parseHistory(t, hist)
			for i := range events {
				if e := &events[i]; e.Process == history.NemesisProcess {
					e.Key, e.Owner, e.Detail = tc.key, tc.owner, detail
					if tc.promised > 0 {
						e.Deadline = history.Ptr(tc.promised * 1e6)
					}
				}
			}
			v := Run(LockService{Leases: true}, events)
			require.Equal(t, Invalid, v.Result, v.Reason)
			for _, s := range tc.reason {
				assert.Contains(t, v.Reason, s)
			}
			require.NotNil(t, v.Counterexample)
			text := strings.Join(v.Counterexample.Explanation, "\n")
			for _, s := range tc.explains {
				assert.Contains(t, text, s)
			}
		})
	}
}

// TestInOrderBoundsAReleaseOfUnknownOutcome: with InOrder, a release of
// unknown outcome lands before its owner's next acquire or release that
// returned ok, or never, so it cannot free a holding the owner took later
// under the same name (raftkv, random faults, seed 367: c2's release that
// timed out at 16 s explained c5's grant at 29.96 s while c2 held the lock
// it took at 29.93 s). Without a later ok request of its owner it may
// still land at any time.
func TestInOrderBoundsAReleaseOfUnknownOutcome(t *testing.T) {
	hist := func(again bool) string {
		deadline := func(ms int) string { return " deadline=" + strconv.Itoa(ms) }
		h := `
0     p0 c2 invoke acquire k
100   p0 c2 ok     acquire k owner=a` + deadline(3000) + `
900   p0 c2 invoke release k owner=a
4000  p0 c2 info   release k owner=a
`
		if again {
			h += `
5000  p2 c2 invoke acquire k
5100  p2 c2 ok     acquire k owner=a` + deadline(15000) + `
5200  p2 c2 invoke release k owner=a
5300  p2 c2 ok     release k owner=a
`
		}
		return h + `
9900  p2 c2 invoke acquire k
10000 p2 c2 ok     acquire k owner=a` + deadline(20000) + `
10050 p1 c5 invoke acquire k
10100 p1 c5 ok     acquire k owner=b` + deadline(20100) + `
10200 p2 c2 invoke release k owner=a
10300 p2 c2 fail   release k owner=a
10400 p1 c5 invoke release k owner=b
10500 p1 c5 ok     release k owner=b
`
	}
	tests := []struct {
		name    string
		again   bool // c2 acquires and releases (ok) between its unknown release and the breach
		inOrder bool
		want    Result
	}{
		{"superseded, in order", true, true, Invalid},
		{"superseded, any order", true, false, Valid},
		{"not superseded, in order", false, true, Valid},
		{"not superseded, any order", false, false, Valid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Run(LockService{Leases: true, InOrder: tc.inOrder}, parseHistory(t, hist(tc.again)))
			require.Equal(t, tc.want, v.Result, describe(v))
			if tc.want == Invalid {
				assert.Contains(t, v.Reason, "c5 was granted the lock while c2 held it")
			}
		})
	}
}

// TestAnUncountedLockIsFreedByOneRelease: etcd's Mutex takes a lock once per
// session. On seed 354 of etcd (resource=etcd, random faults) c1's release of
// k/b certainly failed (no leader reachable), so c1 still held the lock; its
// next acquire returned the same key and create revision (the same grant
// again, not a nested one) and its one release deleted the key: c5's grant
// after it is legal. A reentrant lock that counts nested grants (Redisson,
// Curator, RheaKV) still holds the lock once for c1 after that release, so
// there the same history is INVALID.
func TestAnUncountedLockIsFreedByOneRelease(t *testing.T) {
	const regrant = `
6900  p1 c1 invoke acquire k
6945  p1 c1 ok     acquire k owner=k/b token=96 deadline=17956
10057 p2 c1 invoke release k owner=k/b token=96
13068 p2 c1 fail   release k owner=k/b
14863 p5 c5 invoke acquire k
16200 p2 c1 invoke acquire k
16204 p2 c1 ok     acquire k owner=k/b token=96 deadline=17956
16311 p2 c1 invoke release k owner=k/b token=96
16315 p2 c1 ok     release k owner=k/b
16496 p5 c5 ok     acquire k owner=k/3 token=101 deadline=17933
16605 p5 c5 invoke release k owner=k/3 token=101
16610 p5 c5 ok     release k owner=k/3
`
	const nested = `
0   p1 c1 invoke acquire k
10  p1 c1 ok     acquire k owner=k/b token=5 deadline=10000
20  p1 c1 invoke acquire k
30  p1 c1 ok     acquire k owner=k/b token=5 deadline=10000
40  p1 c1 invoke release k owner=k/b token=5
50  p1 c1 ok     release k owner=k/b
60  p2 c2 invoke acquire k
70  p2 c2 ok     acquire k owner=k/3 token=7 deadline=10070
`
	tests := []struct {
		name      string
		history   string
		uncounted bool
		want      Result
	}{
		{"seed 354: the same grant again, one release frees it", regrant, true, Valid},
		{"seed 354 on a counted lock: c1 still holds it once", regrant, false, Invalid},
		{"a nested acquire, one release: the uncounted lock is free", nested, true, Valid},
		{"a nested acquire, one release: the counted lock is still held", nested, false, Invalid},
	}
	for _, tc := range tests {
		for _, leases := range []bool{true, false} {
			c := LockService{Leases: leases, Uncounted: tc.uncounted}
			t.Run(c.Name()+"/"+tc.name, func(t *testing.T) {
				events := parseHistory(t, tc.history)
				if !leases {
					for i := range events {
						events[i].Deadline = nil
					}
				}
				v := Run(c, events)
				assert.Equal(t, tc.want, v.Result, v.Reason)
			})
		}
	}
}

// TestNestingOption: -o nesting=counted|uncounted sets Config.Uncounted, and
// the lease and mutex checks of the suite follow it.
func TestNestingOption(t *testing.T) {
	tests := []struct {
		val       string
		uncounted bool
		err       string
	}{
		{"counted", false, ""},
		{"uncounted", true, ""},
		{"once", false, "want counted or uncounted"},
	}
	for _, tc := range tests {
		t.Run(tc.val, func(t *testing.T) {
			var c Config
			err := c.Set("nesting", tc.val)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.uncounted, c.Uncounted)
			for _, check := range c.Suite() {
				if l, ok := check.(LockService); ok {
					assert.Equal(t, tc.uncounted, l.Uncounted, l.Name())
				}
			}
		})
	}
}

// TestReleaseRefusedAsNotHeldEndsTheHold: a release that failed because the
// lock was no longer its owner's (NotHeld: ZooKeeper's session expired and
// took the lock node with it) ends the owner's holding between its call and
// its answer, as a release that succeeded would; one that failed for any
// other reason leaves the owner holding until its lease runs out (issue 28,
// item 8: under cuts that hold, c2's release waits at the cut, its session
// expires, c1 is granted the lock, and the release is answered at the heal).
func TestReleaseRefusedAsNotHeldEndsTheHold(t *testing.T) {
	// c2 renews its lease until 24.611s, then asks to release at 15.283s;
	// the release is answered at 19.002s. c1's grant comes before the call
	// (the first %s) or while the release waits (the second).
	const leased = `
0     p1 c2 invoke acquire k
1279  p1 c2 ok     acquire k owner=n0 deadline=17946
7942  p2 c2 invoke renew k owner=n0
7944  p2 c2 ok     renew k owner=n0 deadline=24611
%s
15283 p1 c2 invoke release k owner=n0
%s
19002 p1 c2 fail   release k owner=n0
19182 p1 c2 invoke acquire k
`
	const afterRelease = `
15312 p0 c1 invoke acquire k
18006 p0 c1 ok     acquire k owner=n7 deadline=34673`
	const beforeRelease = `
12000 p0 c1 invoke acquire k
14000 p0 c1 ok     acquire k owner=n7 deadline=30000`
	const mutex = `
0     p1 c2 invoke acquire k
1279  p1 c2 ok     acquire k owner=n0
15283 p1 c2 invoke release k owner=n0
15290 p1 c2 fail   release k owner=n0
15312 p0 c1 invoke acquire k
18006 p0 c1 ok     acquire k owner=n7
`
	gone := NotHeld + ": session expired, n0 deleted with it"
	tests := []struct {
		name    string
		history string
		leases  bool
		detail  string // of the failed release
		want    Result
		reason  string
	}{
		{"lease: not held, the grant while the release waited", fmt.Sprintf(leased, "", afterRelease), true, gone, Valid, ""},
		{"lease: another failure, the grant while the release waited", fmt.Sprintf(leased, "", afterRelease), true,
			"delete n0: refused", Invalid, "c1 was granted the lock while c2 held it and its lease had not run out"},
		{"lease: no reason, the grant while the release waited", fmt.Sprintf(leased, "", afterRelease), true,
			"", Invalid, "c1 was granted the lock while c2 held it and its lease had not run out"},
		{"lease: not held, the grant before the release", fmt.Sprintf(leased, beforeRelease, ""), true, gone, Invalid,
			"c1 was granted the lock while c2 held it and its lease had not run out"},
		{"mutex: not held, a grant after the failed release", mutex, false, gone, Valid, ""},
		{"mutex: another failure, a grant after the failed release", mutex, false, "delete n0: refused", Invalid,
			"c1 was granted the lock while c2 held it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events := parseHistory(t, tc.history)
			for i := range events {
				if e := &events[i]; e.F == history.FRelease && e.Type == history.Fail {
					e.Detail = tc.detail
				}
			}
			v := Run(LockService{Leases: tc.leases}, events)
			require.Equal(t, tc.want, v.Result, v.Reason)
			assert.Contains(t, v.Reason, tc.reason)
		})
	}
}
