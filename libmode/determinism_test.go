package libmode

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// faulty is a run with a pause in the critical section, a holding and a
// lossy partition, a clock jump, a delay and a crash.
func faulty(seed uint64) Config {
	cfg := setLockConfig(false)
	cfg.Seed = seed
	cfg.Faults = []Fault{
		PauseInCriticalSection{After: time.Second, For: 2 * time.Second},
		Partition{At: 4 * time.Second, For: time.Second, Clients: []string{"c2"}},
		Partition{At: 6 * time.Second, For: time.Second, Clients: []string{"c3"}, Lossy: true},
		ClockJump{Instance: "redis-1", At: 8 * time.Second, By: time.Second},
		Delay{At: 3 * time.Second, For: time.Second, By: 50 * time.Millisecond, Clients: []string{"c1"}},
		Crash{Instance: "redis-1", At: 9 * time.Second, For: 10 * time.Millisecond},
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

// TestSameScheduleSameHistory: a schedule with a pause anchored at a
// client's read and ended at another's read (invoked, +5 ms), a one-way
// delay and a clock jump after a grant gives the same history in every
// repeat.
func TestSameScheduleSameHistory(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 10
	}
	cfg := setLockConfig(false)
	sched := `{"faults": [
		{"kind": "pause", "targets": ["c1"], "at": "1s", "after": {"node": "c1", "f": "read"},
		 "until": {"node": "c2", "f": "read", "type": "invoke", "delay": "5ms"}},
		{"kind": "delay", "from": ["c3"], "to": ["redis-1"], "at": "3s", "duration": "1s", "amount": "30ms"},
		{"kind": "clock-jump", "targets": ["redis-1"], "after": {"node": "c3", "f": "acquire", "nth": 4}, "amount": "500ms"}]}`
	first := Replay(t, cfg, sched)
	same := 0
	for range n {
		if sameEvents(first.Events, Replay(t, cfg, sched).Events) {
			same++
		}
	}
	t.Logf("%d of %d repeats of the schedule gave the same history (%d events)", same, n, len(first.Events))
	assert.Equal(t, n, same)
	assert.False(t, first.Safe(), "the anchored pause loses an update")
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

// TestExplore: seeds draw a pause of random length at a random moment;
// exploration finds a seed whose pause outlives the 1 s lease, and none
// with pauses shorter than the lease.
func TestExplore(t *testing.T) {
	draw := func(longest time.Duration) func(seed uint64) Config {
		return func(seed uint64) Config {
			r := rand.New(rand.NewPCG(seed, 0))
			cfg := setLockConfig(false)
			cfg.Faults = []Fault{PauseInCriticalSection{
				After: time.Duration(r.Int64N(int64(5 * time.Second))),
				For:   time.Duration(r.Int64N(int64(longest))) + time.Millisecond,
			}}
			return cfg
		}
	}
	res, found := Explore(t, 20, draw(3*time.Second))
	require.True(t, found)
	t.Logf("found with seed %d: %s", res.Seed, res.Faults)
	assert.Contains(t, res.Kinds, "gc-pause")
	_, found = Explore(t, 5, draw(500*time.Millisecond))
	assert.False(t, found, "a pause shorter than the lease, minus the hold, breaks nothing")
}
