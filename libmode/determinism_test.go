package libmode

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// faulty is a run with a pause in the critical section, a holding and a
// lossy partition and a clock jump.
func faulty(seed uint64) Config {
	cfg := setLockConfig(false)
	cfg.Seed = seed
	cfg.Faults = []Fault{
		PauseInCriticalSection{After: time.Second, For: 2 * time.Second},
		Partition{At: 4 * time.Second, For: time.Second, Clients: []string{"c2"}},
		Partition{At: 6 * time.Second, For: time.Second, Clients: []string{"c3"}, Lossy: true},
		ClockJump{Instance: "redis-1", At: 8 * time.Second, By: time.Second},
	}
	return cfg
}

func sameEvents(a, b []history.Event) bool {
	return slices.EqualFunc(a, b, func(x, y history.Event) bool { return x.String() == y.String() })
}

// TestSameSeedSameHistory: the same seed gives the same history in every
// repeat, and another seed another history.
func TestSameSeedSameHistory(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 10
	}
	first := Run(t, faulty(5)).Events
	same := 0
	for range n {
		if sameEvents(first, Run(t, faulty(5)).Events) {
			same++
		}
	}
	t.Logf("%d of %d repeats of seed 5 gave the same history (%d events)", same, n, len(first))
	assert.Equal(t, n, same)
	assert.False(t, sameEvents(first, Run(t, faulty(6)).Events), "seed 6 gives another history")
}

// TestTimePerSimulatedMinute logs the real time 60 s of simulated time
// take (a measurement, never asserted): three clients of a SET NX lock
// over go-redis, one instance, the faults of faulty.
func TestTimePerSimulatedMinute(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement")
	}
	var walls []time.Duration
	for range 5 {
		cfg := faulty(5)
		cfg.Duration = 60 * time.Second
		res := Run(t, cfg)
		walls = append(walls, res.Wall)
	}
	slices.Sort(walls)
	t.Logf("60 s simulated: median %v of real time (min %v, max %v, 5 runs)", walls[2], walls[0], walls[4])
}
