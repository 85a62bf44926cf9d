package userlocktest_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/userlock/internal/locktest"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// recorder is a testing.TB that keeps what Expect reports instead of
// failing the test; Fatalf ends the call it is in.
type recorder struct {
	testing.TB
	errors []string
}

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}

// report runs f against a recorder and returns what it reported.
func report(t *testing.T, f func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != (fatal{}) {
				panic(p)
			}
		}()
		f(r)
	}()
	return r.errors
}

// The lock under test is the raw-API ZooKeeper lock with sequence numbers as
// tokens: unfenced, a session expiry during a pause breaks the critical
// sections; fenced, it does not.
func TestExpectAcceptsTheVerdictsTheRunShows(t *testing.T) {
	locktest.RegisterZooKeeperRaw(t, "userlocktest-zk", true)
	I, V := models.Invalid, models.Valid
	errs := report(t, func(tb testing.TB) {
		r := userlocktest.Expect(tb, "userlocktest-zk", "gc-pause", map[string]models.Result{"critical-sections": I})
		assert.NotEmpty(t, r.Grants, "the servers' record comes with the run")
		assert.NotEmpty(t, r.Kinds())
		userlocktest.Expect(tb, "userlocktest-zk", "gc-pause-fenced", map[string]models.Result{"critical-sections": V, "fencing-tokens": V})
	})
	assert.Empty(t, errs)
}

func TestExpectRejectsWhatTheRunDoesNotShow(t *testing.T) {
	locktest.RegisterZooKeeperRaw(t, "userlocktest-zk", true)
	I, V := models.Invalid, models.Valid
	for _, tc := range []struct {
		name    string
		variant string
		want    map[string]models.Result
		report  string
	}{
		{"a violation the run does not have", "gc-pause-fenced", map[string]models.Result{"critical-sections": I},
			"userlocktest-zk/gc-pause-fenced: critical-sections is valid, want invalid"},
		{"a pass where the run has a violation", "gc-pause", map[string]models.Result{"critical-sections": V},
			"userlocktest-zk/gc-pause: critical-sections is invalid, want valid"},
		{"a check that does not run", "gc-pause", map[string]models.Result{"no-such-check": V},
			"userlocktest-zk/gc-pause: the check no-such-check did not run"},
		{"a variant the lock does not have", "slow-ness", nil, `variant "slow-ness"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := report(t, func(tb testing.TB) { userlocktest.Expect(tb, "userlocktest-zk", tc.variant, tc.want) })
			require.Len(t, errs, 1, "%q", errs)
			assert.Contains(t, errs[0], tc.report)
		})
	}
}

func TestVariantOfAnUnknownLockNamesIt(t *testing.T) {
	errs := report(t, func(tb testing.TB) { userlocktest.Variant(tb, "no-such-lock", "gc-pause") })
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "no-such-lock")
}

// TestExpectDataSafeTakesTheFencedDesignsExitCode: fenced, the paused
// holder's write is refused: the lock broke (mutual exclusion invalid) but
// the data is safe, exit code 5, which ExpectDataSafe accepts; unfenced, the
// data is lost (exit 1), which it reports.
func TestExpectDataSafeTakesTheFencedDesignsExitCode(t *testing.T) {
	locktest.RegisterZooKeeperRaw(t, "userlocktest-zk", true)
	var fenced userlocktest.Run
	errs := report(t, func(tb testing.TB) { fenced = userlocktest.ExpectDataSafe(tb, "userlocktest-zk", "gc-pause-fenced") })
	assert.Empty(t, errs)
	assert.Equal(t, models.Invalid, fenced.Verdict("mutual-exclusion"), "the lock broke")
	assert.Equal(t, judge.ExitDataSafe, fenced.ExitCode())

	errs = report(t, func(tb testing.TB) { userlocktest.ExpectDataSafe(tb, "userlocktest-zk", "gc-pause") })
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "userlocktest-zk/gc-pause: the data is not safe: exit code 1, want 0 or 5 (critical-sections invalid")
}
