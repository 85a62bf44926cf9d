package workloads

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
)

func TestOutcome(t *testing.T) {
	assert.Equal(t, history.OK, Outcome(nil))
	assert.Equal(t, history.Info, Outcome(fmt.Errorf("x: %w", lockapi.ErrUnknown)))
	assert.Equal(t, history.Fail, Outcome(fmt.Errorf("x: %w", lockapi.ErrNotAcquired)))
	assert.Equal(t, history.Fail, Outcome(errors.New("refused")))
}

func TestFencedCounterOptions(t *testing.T) {
	w := DefaultFencedCounter()
	assert.NoError(t, w.Set("keys", "3"))
	assert.NoError(t, w.Set("hold", "1s"))
	assert.Equal(t, []string{"k0", "k1", "k2"}, w.Keys)
	assert.Equal(t, time.Second, w.Hold)
	assert.ErrorContains(t, w.Set("keys", "0"), "at least 1")
	assert.ErrorContains(t, w.Set("hold", "long"), `hold="long"`)
	assert.ErrorContains(t, w.Set("colour", "red"), `no option "colour"`)
	assert.EqualError(t, w.Set("think", "-1s"), `fenced-counter option think="-1s": must not be negative`,
		"a negative pause would crash the client's random draw")
	require.NoError(t, w.Set("keys", "1"))
	assert.Equal(t, DefaultFencedCounter().Keys, w.Keys, "keys=1 is the default, the single key k")
}
