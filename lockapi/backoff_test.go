package lockapi_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// TestBackoffDrawsAsSimUniform: the shared back-off draws what
// sim.Uniform(r, 0, max) drew, value for value and draw for draw, so the
// simulated clients that moved to it keep their histories.
func TestBackoffDrawsAsSimUniform(t *testing.T) {
	for _, max := range []time.Duration{0, -time.Second, time.Nanosecond, 100 * time.Millisecond, time.Hour} {
		a, b := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
		for range 100 {
			assert.Equal(t, time.Duration(sim.Uniform(a, 0, int64(max))), lockapi.Backoff(b, max), "max %v", max)
		}
		assert.Equal(t, a.Uint64(), b.Uint64(), "max %v: as many draws", max)
	}
}
