package models

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// contention writes, in the notation of parseHistory, a history of attempts
// acquire attempts on key k, one every 50 ms, of which ok succeed, spread
// evenly and all by c1; the others are made by c2..c<clients>, round robin,
// and fail. Each grant is held until just before the next successful attempt
// (the last until the end), so the failures happen while the lock is held.
// Attempts with an index in faulted run inside a partition of the server.
func contention(clients, attempts, ok int, faulted ...int) string {
	var b strings.Builder
	isOK := map[int]bool{}
	for i := range ok {
		isOK[i*attempts/ok] = true
	}
	inFault := map[int]bool{}
	for _, i := range faulted {
		inFault[i] = true
	}
	next, holding := 2, false
	for i := range attempts {
		t := 50 * i
		if inFault[i] && !inFault[i-1] {
			fmt.Fprintf(&b, "%d nemesis start partition redis\n", t)
		}
		if isOK[i] {
			if holding {
				fmt.Fprintf(&b, "%d p1 c1 invoke release k owner=o\n%d p1 c1 ok release k owner=o\n", t, t)
			}
			fmt.Fprintf(&b, "%d p1 c1 invoke acquire k\n%d p1 c1 ok acquire k owner=o\n", t, t+10)
			holding = true
		} else {
			c := next
			next = 2 + (next-1)%(clients-1)
			fmt.Fprintf(&b, "%d p%d c%d invoke acquire k\n%d p%d c%d fail acquire k\n", t, c, c, t+40, c, c)
		}
		if inFault[i] && !inFault[i+1] {
			fmt.Fprintf(&b, "%d nemesis stop partition redis\n", t+45)
		}
	}
	return b.String()
}

// TestLivenessJudgesTheShareOfSuccessfulAcquires: a history in which almost
// no acquire succeeds is a liveness failure by default, named with its rate
// and the clients that never got the lock; a healthy one is valid; failures
// during faults, or in a history too short to judge, are not held against
// the lock.
func TestLivenessJudgesTheShareOfSuccessfulAcquires(t *testing.T) {
	tests := []struct {
		name    string
		history string
		options []string
		want    Result
		phrases []string
	}{
		{"nobody ever acquires", contention(5, 40, 0), nil, Invalid,
			[]string{"only 0.0% of 40 acquire attempts succeeded (at least 50.0% required)", "none of the 4 clients acquired the lock", "although the lock was free 100% of the time"}},
		{"4.6% succeed (1000 clients on one lock)", contention(20, 130, 6), nil, Invalid,
			[]string{"only 4.6% of 130 acquire attempts succeeded", "19 of 20 clients never acquired the lock", "the lock was held"}},
		{"4.6% succeed, judged at the user's share", contention(20, 130, 6), []string{"min-success=4%"}, Valid,
			[]string{"4.6% of 130 acquire attempts succeeded (at least 4.0% required)"}},
		{"min-success=0 turns the share off", contention(5, 40, 0), []string{"min-success=0"}, Valid,
			[]string{"0.0% of 40 acquire attempts succeeded"}},
		{"healthy: 99% succeed", contention(5, 100, 99), nil, Valid,
			[]string{"99.0% of 100 acquire attempts succeeded (at least 50.0% required)"}},
		{"half succeed", contention(5, 40, 20), nil, Valid, []string{"50.0% of 40"}},
		{"too few attempts to judge", contention(3, 3, 0), nil, Valid,
			[]string{"too few outside faults to judge the share: 3, at least 10 needed"}},
		{"min-attempts lowers that bar", contention(3, 3, 0), []string{"min-attempts=3"}, Invalid,
			[]string{"only 0.0% of 3 acquire attempts succeeded"}},
		{"failures during faults are excused", contention(5, 40, 10, notMultiples(40, 4)...), nil, Valid,
			[]string{"25.0% of 40 acquire attempts succeeded (100.0% of the 10 made while no fault was active"}},
		{"and only those", contention(5, 60, 10, rangeOf(1, 11)...), nil, Invalid,
			[]string{"only 18.0% of the 50 acquire attempts made while no fault was active (16.7% of all 60) succeeded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cfg Config
			for _, o := range tc.options {
				k, v, _ := strings.Cut(o, "=")
				require.NoError(t, cfg.Set(k, v))
			}
			checks, _, err := cfg.Select([]string{"liveness"}, nil)
			require.NoError(t, err)
			v := Run(checks[0], parseHistory(t, tc.history))
			assert.Equal(t, tc.want, v.Result, describe(v))
			for _, p := range tc.phrases {
				assert.Contains(t, describe(v), p)
			}
			if v.Result == Invalid {
				require.NotNil(t, v.Counterexample)
				assert.NotEmpty(t, v.Counterexample.Explanation)
			}
		})
	}
}

// notMultiples are the numbers below n that are not multiples of k.
func notMultiples(n, k int) []int {
	var out []int
	for i := range n {
		if i%k != 0 {
			out = append(out, i)
		}
	}
	return out
}

func rangeOf(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestLivenessNamesANestedAcquireOfANonReentrantLock: c1 takes the lock and
// asks for it again while holding it; the nested attempt waits out its
// budget, and so does everyone else. The explanation says so.
func TestLivenessNamesANestedAcquireOfANonReentrantLock(t *testing.T) {
	var b strings.Builder
	for r := range 4 {
		t0 := r * 5200
		fmt.Fprintf(&b, "%d p1 c1 invoke acquire k\n%d p1 c1 ok acquire k owner=o%d\n", t0, t0+2, r)
		fmt.Fprintf(&b, "%d p1 c1 invoke acquire k\n", t0+2)
		for c := 2; c <= 3; c++ {
			fmt.Fprintf(&b, "%d p%d c%d invoke acquire k\n", t0+3, c, c)
		}
		fmt.Fprintf(&b, "%d p1 c1 fail acquire k\n", t0+5002)
		for c := 2; c <= 3; c++ {
			fmt.Fprintf(&b, "%d p%d c%d fail acquire k\n", t0+5003, c, c)
		}
		fmt.Fprintf(&b, "%d p1 c1 invoke release k owner=o%d\n%d p1 c1 ok release k owner=o%d\n", t0+5100, r, t0+5102, r)
	}
	v := Availability{}.Check(parseHistory(t, b.String()))
	assert.Equal(t, Invalid, v.Result, describe(v))
	assert.Contains(t, v.Reason, "only 25.0% of 16 acquire attempts succeeded")
	assert.Contains(t, v.Reason, "4 of the 12 failed attempts were made by a client that already held the lock")
	assert.Equal(t, 4.0, v.Stats["acquire-failed-self-holder"])
	assert.Equal(t, 2.0, v.Stats["clients-never-acquired"])
}

func TestParseMinSuccess(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		err  string
	}{
		{"0.5", 0.5, ""},
		{"0", 0, ""},
		{"1", 1, ""},
		{"95%", 0.95, ""},
		{" 5% ", 0.05, ""},
		{"1.5", 0, "must be between 0 and 1"},
		{"-0.1", 0, "must be between 0 and 1"},
		{"NaN", 0, "must be between 0 and 1"},
		{"half", 0, "want a share between 0 and 1 or a percentage"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMinSuccess(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tc.want, *got, 1e-12)
		})
	}
	var c Config
	require.NoError(t, c.Set("min-success", "0"))
	require.NotNil(t, c.MinSuccess, "a typed 0 is kept, not taken for the default")
	assert.Zero(t, *c.MinSuccess)
	require.ErrorContains(t, c.Set("min-attempts", "0"), "must be at least 1")
}

// TestLivenessDefaultsAreDocumented keeps the zero Availability and the
// defaults in step.
func TestLivenessDefaultsAreDocumented(t *testing.T) {
	c := Availability{}.withDefaults(history.PairRecorded(nil))
	assert.Equal(t, DefaultMinSuccess, *c.MinSuccess)
	assert.Equal(t, DefaultMinAttempts, c.MinAttempts)
	assert.Equal(t, DefaultStallMax, c.StallMax)
	assert.Equal(t, DefaultRecoveryMax, c.RecoveryMax)
}

// TestKeyStallsPackedAndLoose: the stall sweep gives the same stalls whether
// the times fit its packed form or span too much for it.
func TestKeyStallsPackedAndLoose(t *testing.T) {
	for _, base := range []int64{0, -5, 1 << 61} {
		name := fmt.Sprintf("times from %d", base)
		wants := []want{{key: "k", start: 0, end: 10}, {key: "k", start: 1 << 61, end: 1<<61 + 4}}
		hs := []*holding{{Key: "k", Start: 5, End: 7}}
		if base != 1<<61 { // the second want only when the span is wide
			wants = wants[:1]
		}
		for i := range wants {
			if base != 1<<61 {
				wants[i].start, wants[i].end = wants[i].start+base, wants[i].end+base
			}
		}
		if base != 1<<61 {
			hs[0].Start, hs[0].End = hs[0].Start+base, hs[0].End+base
		}
		got := keyStalls("k", wants, hs, nil, nil, 1<<62)
		want := []Stall{{Key: "k", Start: 0, End: 5}, {Key: "k", Start: 7, End: 10}}
		if base == 1<<61 {
			want = append(want, Stall{Key: "k", Start: 1 << 61, End: 1<<61 + 4})
		} else {
			for i := range want {
				want[i].Start, want[i].End = want[i].Start+base, want[i].End+base
			}
		}
		assert.Equal(t, want, got, name)
	}
}

// lockDelayed writes, in the notation of parseHistory, a history of 60 s on
// key k: c1 acquires k at 0 and its session expires at 1 s (its lease runs
// out then); from then c2..c5 try every 500 ms, and all fail. When delayUntil
// is not 0, the master cb1 recorded its lock-delay of k, from 1 s to
// delayUntil (ms; -1: still running at the end). With pause, c1 was paused
// from 500 ms to 5 s.
func lockDelayed(delayUntil int, pause bool) string {
	var b strings.Builder
	b.WriteString("0 p1 c1 invoke acquire k\n10 p1 c1 ok acquire k owner=o1 deadline=1000\n")
	if pause {
		b.WriteString("500 nemesis start pause c1\n")
	}
	b.WriteString("1000 nemesis start session-expired cb1,c1\n1000 nemesis stop session-expired cb1,c1\n")
	if delayUntil != 0 {
		b.WriteString("1000 nemesis start lock-delay cb1 key=k\n")
	}
	for i, t := 0, 1500; t < 60000; i, t = i+1, t+500 {
		if pause && t == 5000 {
			b.WriteString("5000 nemesis stop pause c1\n")
		}
		if t == delayUntil {
			fmt.Fprintf(&b, "%d nemesis stop lock-delay cb1 key=k\n", t)
		}
		c := 2 + i%4
		fmt.Fprintf(&b, "%d p%d c%d invoke acquire k\n%d p%d c%d fail acquire k\n", t, c, c, t+100, c, c)
	}
	return b.String()
}

// TestLivenessCountsALockDelayAsHeldBack: a lock the service held back by
// design (a lock-delay event of its key) is not free. Clients refused
// throughout a lock-delay are no stall, no starvation and no slow recovery
// (issue 28: Chubby's lock-delay after a session expiry made the check call
// the lock free 66% of the time); the same history without the event is
// flagged, and a wait that outlasts the lock-delay still is.
func TestLivenessCountsALockDelayAsHeldBack(t *testing.T) {
	tests := []struct {
		name    string
		history string
		want    Result
		phrases []string
	}{
		{"refused throughout a lock-delay", lockDelayed(-1, false), Valid,
			[]string{"nobody held the lock but the service held it back by design (lock-delay) 98% of the time; the 117 acquire attempts made then are not judged",
				"longest stall 10ms", "slowest recovery after a fault 58.6s (58.6s of it held back by lock-delay)"}},
		{"the same history without the lock-delay", lockDelayed(0, false), Invalid,
			[]string{"clients waited 58.1s for \"k\" while no client believed it held it", "only 0.8% of 118 acquire attempts succeeded",
				"although the lock was free 98% of the time"}},
		{"refused long after the lock-delay ended", lockDelayed(20000, false), Invalid,
			[]string{"clients waited 39.6s for \"k\" while no client believed it held it",
				"(58.6s of trying, 19s of it held back by lock-delay, not counted; limit 30s)",
				"only 1.2% of the 81 acquire attempts made while no fault was active and no lock-delay held the lock back",
				"free 66% of the time (held 2%, held back by lock-delay 32%)"}},
		{"a recovery after a fault, held back by lock-delay", lockDelayed(-1, true), Valid,
			[]string{"held it back by design (lock-delay) 98% of the time"}},
		{"the same recovery without the lock-delay", lockDelayed(0, true), Invalid,
			[]string{"never granted the lock again after the pause c1 fault ending at 5.000s (54.6s of trying, limit 30s)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Run(Availability{}, parseHistory(t, tc.history))
			assert.Equal(t, tc.want, v.Result, describe(v))
			for _, p := range tc.phrases {
				assert.Contains(t, describe(v), p)
			}
		})
	}
}
