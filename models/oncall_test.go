package models

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// TestOnCallWritesInATransactionApplyAtTheirCommit (issue 28, item 2): c1
// takes doctor 1 off call inside a transaction, then c2 takes doctor 2 off
// call. Nobody is on call only if c1's transaction committed; if its commit
// failed or never came (aborted, lost in a crash) doctor 1 stayed on call,
// and if the commit's outcome is unknown the check cannot tell. A committed
// write applies at its commit: doctor 2 back on call before it is fine.
func TestOnCallWritesInATransactionApplyAtTheirCommit(t *testing.T) {
	const c1 = `
		10  p0 c1 invoke write oncall/d1 value=0 owner=c1#1
		10  p9 c1 invoke begin oncall/d1 owner=c1#1
		10  p9 c1 ok     begin oncall/d1 owner=c1#1
		11  p0 c1 ok     write oncall/d1 value=0`
	const c2 = `
		30  p1 c2 invoke write oncall/d2 value=0 owner=c2#1
		31  p1 c2 ok     write oncall/d2 value=0`
	commit := func(outcome string) string {
		return `
		20  p9 c1 invoke commit owner=c1#1
		21  p9 c1 ` + outcome + ` commit owner=c1#1`
	}
	tests := []struct {
		name    string
		history string
		want    Result
	}{
		{"no transaction (autocommit): nobody on call", `
		10  p0 c1 invoke write oncall/d1 value=0 owner=c1#1
		11  p0 c1 ok     write oncall/d1 value=0` + c2, Invalid},
		{"commit ok: nobody on call", c1 + commit("ok") + c2, Invalid},
		{"commit fail: doctor 1 stayed on call", c1 + commit("fail") + c2, Valid},
		{"no commit (aborted): doctor 1 stayed on call", c1 + c2, Valid},
		{"commit info: maybe nobody on call", c1 + commit("info") + c2, Unknown},
		{"doctor 2 back on call before the commit", c1 + `
		12  p1 c2 invoke write oncall/d2 value=0 owner=c2#1
		13  p1 c2 ok     write oncall/d2 value=0
		14  p2 c3 invoke write oncall/d2 value=1 owner=c3#1
		15  p2 c3 ok     write oncall/d2 value=1` + commit("ok"), Valid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Run(OnCall{Initial: history.Ptr(int64(1))}, parseHistory(t, tc.history))
			require.Equal(t, tc.want, v.Result, describe(v))
		})
	}
}
