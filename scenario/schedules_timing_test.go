package scenario

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOnlyTimingTellsAMeasuredTimeFromOtherMisses(t *testing.T) {
	timing := fmt.Errorf("availability gap 3s, expected between 5s and 11s: %w", ErrTiming)
	story := errors.New(`story does not mention "lease-expired"`)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no failure is not a timing miss", nil, false},
		{"a measured time out of range", timing, true},
		{"a story event not seen", story, false},
		{"two timing misses", errors.Join(timing, timing), true},
		{"a timing miss beside a story miss", errors.Join(timing, story), false},
		{"nested", errors.Join(errors.Join(timing), timing), true},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, OnlyTiming(tc.err)) })
	}
}

func TestAllOfReportsEveryFailure(t *testing.T) {
	timing := func(Result) error { return fmt.Errorf("gap: %w", ErrTiming) }
	story := func(Result) error { return errors.New("story") }
	ok := func(Result) error { return nil }
	assert.NoError(t, AllOf(ok, ok)(Result{}))
	assert.True(t, OnlyTiming(AllOf(ok, timing)(Result{})))
	err := AllOf(timing, story)(Result{})
	assert.ErrorContains(t, err, "story", "a later failure is not hidden by an earlier one")
	assert.False(t, OnlyTiming(err))
}

func TestAvailabilityGapWithinMarksItsRangeMissAsTiming(t *testing.T) {
	err := AvailabilityGapWithin(time.Hour, 2*time.Hour)(Result{})
	assert.False(t, OnlyTiming(err), "no gap at all is not a measured time")
}
