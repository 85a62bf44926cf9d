package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunShapesFollowTheChainADesignDeclares: Chubby hands its lock over a
// lock-delay after the master expired the session, so its runs fit the
// lease and then the lock-delay (84 s), not the two longest timeouts
// (grace + lock-delay, 2 min); a design that declares no chain has its two
// longest timeouts chained.
func TestRunShapesFollowTheChainADesignDeclares(t *testing.T) {
	p, err := FindMatrixPreset("matrix")
	require.NoError(t, err)
	c, err := p.Config()
	require.NoError(t, err)
	shapes := map[string]Shape{}
	for _, row := range c.Rows {
		if _, seen := shapes[row.System]; !seen {
			sh, _ := rowShape(c, row)
			shapes[row.System] = sh
		}
	}
	require.Contains(t, shapes, "chubby")
	require.Contains(t, shapes, "redis")
	chubby := shapes["chubby"]
	assert.Equal(t, 84*time.Second, time.Duration(chubby.Time))
	assert.Contains(t, chubby.Timeouts, "lease 12s + lock-delay 1m0s")
	assert.NotContains(t, chubby.Timeouts, "lock-delay 1m0s + grace 45s")
	assert.Equal(t, 107, chubby.Guided, "the guided budget scales with the run length")
	redis := shapes["redis"]
	assert.Equal(t, 24*time.Second, time.Duration(redis.Time))
	assert.Contains(t, redis.Timeouts, "ttl 10s + down-after 3s", "two longest timeouts chained: %v", redis.Timeouts)
}
