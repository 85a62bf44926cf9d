package models

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

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
