package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

func TestCriticalSections(t *testing.T) {
	tests := []struct {
		name    string
		history string
		want    Result
		explain string // a phrase the explanation must contain
	}{
		{name: "one client after another", want: Valid, history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0
			2   p0 c1 invoke write k value=1
			3   p0 c1 ok     write k value=1
			4   p1 c2 invoke read k
			5   p1 c2 ok     read k value=1
			6   p1 c2 invoke write k value=2
			7   p1 c2 ok     write k value=2`},
		{name: "lost update: both read 0, both wrote 1", want: Invalid, explain: "Lost update", history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0
			2   p1 c2 invoke read k
			3   p1 c2 ok     read k value=0
			4   p0 c1 invoke write k value=1
			5   p0 c1 ok     write k value=1
			6   p1 c2 invoke write k value=1
			7   p1 c2 ok     write k value=1`},
		{name: "stale read after a completed section", want: Invalid, explain: "cannot follow", history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0
			2   p0 c1 invoke write k value=1
			3   p0 c1 ok     write k value=1
			4   p1 c2 invoke read k
			5   p1 c2 ok     read k value=0`},
		{name: "read of a value nobody wrote", want: Invalid, history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=7`},
		{name: "fenced: the stale write was rejected", want: Valid, history: `
			0   p0 c1 invoke read k token=1
			1   p0 c1 ok     read k value=0 token=1
			2   p1 c2 invoke read k token=2
			3   p1 c2 ok     read k value=0 token=2
			4   p1 c2 invoke write k value=1 token=2
			5   p1 c2 ok     write k value=1 token=2
			6   p0 c1 invoke write k value=1 token=1
			7   p0 c1 fail   write k value=1 token=1`},
		{name: "unknown write later observed", want: Valid, history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0
			2   p0 c1 invoke write k value=1
			3   p0 c1 info   write k value=1
			4   p1 c2 invoke read k
			5   p1 c2 ok     read k value=1
			6   p1 c2 invoke write k value=2
			7   p1 c2 ok     write k value=2`},
		{name: "unknown write never observed", want: Valid, history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0
			2   p0 c1 invoke write k value=1
			3   p0 c1 info   write k value=1
			4   p1 c2 invoke read k
			5   p1 c2 ok     read k value=0
			6   p1 c2 invoke write k value=1
			7   p1 c2 ok     write k value=1`},
		{name: "unknown write landing late breaks a later section", want: Invalid, history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0
			2   p0 c1 invoke write k value=1
			3   p0 c1 info   write k value=1
			4   p1 c2 invoke read k
			5   p1 c2 ok     read k value=0
			6   p1 c2 invoke write k value=1
			7   p1 c2 ok     write k value=1
			8   p2 c3 invoke read k
			9   p2 c3 ok     read k value=1
			10  p2 c3 invoke write k value=2
			11  p2 c3 ok     write k value=2
			12  p3 c4 invoke read k
			13  p3 c4 ok     read k value=1`},
		{name: "keys are independent", want: Valid, history: `
			0   p0 c1 invoke read a
			1   p0 c1 ok     read a value=0
			2   p1 c2 invoke read b
			3   p1 c2 ok     read b value=0
			4   p0 c1 invoke write a value=1
			5   p0 c1 ok     write a value=1
			6   p1 c2 invoke write b value=1
			7   p1 c2 ok     write b value=1`},
		{name: "failed reads are not sections", want: Unknown, history: `
			0   p0 c1 invoke read k
			1   p0 c1 fail   read k`},
		{name: "empty history", want: Unknown, history: ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := parseHistory(t, tc.history)
			v := Run(CriticalSections{Initial: history.Ptr(int64(0))}, evs)
			assert.Equal(t, tc.want, v.Result, describe(v))
			assert.Equal(t, "critical-sections", v.Check)
			if tc.want == Invalid {
				require.NotNil(t, v.Counterexample)
				assert.NotEmpty(t, v.Counterexample.Events)
				if tc.explain != "" {
					assert.Contains(t, describe(v), tc.explain)
				}
			}
		})
	}
}

func TestCriticalSectionsUnknownInitialValue(t *testing.T) {
	evs := parseHistory(t, `
		0   p0 c1 invoke read k
		1   p0 c1 ok     read k value=41
		2   p0 c1 invoke write k value=42
		3   p0 c1 ok     write k value=42`)
	assert.Equal(t, Valid, Run(CriticalSections{}, evs).Result, "with no initial value any first read is fine")
	assert.Equal(t, Invalid, Run(CriticalSections{Initial: history.Ptr(int64(0))}, evs).Result)
}

type panicky struct{}

func (panicky) Name() string                         { return "panicky" }
func (panicky) Check(events []history.Event) Verdict { panic("bug in the check") }

func TestACrashingCheckIsUnknownNeverValid(t *testing.T) {
	v := Run(panicky{}, nil)
	assert.Equal(t, Unknown, v.Result)
	assert.Contains(t, v.Reason, "bug in the check")
}

func TestMerge(t *testing.T) {
	assert.Equal(t, Valid, Merge(Valid, Valid))
	assert.Equal(t, Unknown, Merge(Valid, Unknown, Valid))
	assert.Equal(t, Invalid, Merge(Unknown, Invalid, Valid))
	assert.Equal(t, Unknown, Merge(), "nothing checked is not valid")
}
