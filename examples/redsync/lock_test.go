//go:debug randseednop=0

package redsyncexample

import (
	"math/rand"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/models"
)

// config is a 60 s run of redsync with its defaults (expiry 8 s, 32 tries,
// retry delay 50-250 ms drawn from math/rand's global source) over five
// instances. redsync draws its retry delays from math/rand's global
// source: the test seeds it (randseednop=0 above makes rand.Seed work) so
// that the run is the seed's alone.
func config(seed uint64, faults ...libmode.Fault) libmode.Config {
	rand.Seed(int64(seed)) //nolint:staticcheck // redsync's retry delays come from the global source
	return libmode.Config{
		Seed:      seed,
		Instances: 5,
		NewLock:   func(c *libmode.Client) (libmode.Lock, error) { return New(c), nil },
		Close:     func(l libmode.Lock) error { return l.(*Lock).Close() },
		Faults:    faults,
	}
}

// TestGCPauseLosesAnUpdate: a holder paused for 10 s after its read (its
// lease is 8 s) writes after another client was granted the lock.
func TestGCPauseLosesAnUpdate(t *testing.T) {
	res := libmode.Run(t, config(1, libmode.PauseInCriticalSection{After: 5 * time.Second, For: 10 * time.Second}))
	t.Log(res.Summary())
	assert.Equal(t, models.Invalid, res.Verdict("critical-sections"))
	assert.Contains(t, res.Kinds, "gc-pause")
	require.NotEmpty(t, res.Outlived, "the servers' record explains the lost update")
	assert.Empty(t, res.Breaches, "a quorum never granted two owners at once")
}

// TestClockJumpOnOneInstance is the clock-jump counterexample: c1 reaches
// only redis-1..3, c2 only redis-3..5 (lossy cuts for the whole run), so
// their quorums meet on redis-3 alone. Its clock jumps 9 s forward (more
// than the 8 s expiry) at some moment; the test tries moments one second
// apart and stops at the first where the servers' record shows two
// quorums at once.
func TestClockJumpOnOneInstance(t *testing.T) {
	cuts := []libmode.Fault{
		libmode.Partition{At: 0, For: time.Hour, Clients: []string{"c1"}, Instances: []string{"redis-4", "redis-5"}, Reject: true},
		libmode.Partition{At: 0, For: time.Hour, Clients: []string{"c2"}, Instances: []string{"redis-1", "redis-2"}, Reject: true},
	}
	for at := 5 * time.Second; at <= 30*time.Second; at += time.Second {
		cfg := config(1, append(slices.Clone(cuts), libmode.ClockJump{Instance: "redis-3", At: at, By: 9 * time.Second})...)
		cfg.Clients, cfg.Hold = 2, 2*time.Second
		res := libmode.Run(t, cfg)
		if len(res.Breaches) == 0 {
			continue
		}
		t.Logf("found with the jump at %v:\n%s", at, res.Summary())
		assert.Equal(t, models.Invalid, res.Verdict("mutual-exclusion"))
		b := res.Breaches[0]
		assert.NotEqual(t, b.Held.Client, b.Other.Client)
		assert.LessOrEqual(t, b.Held.From, at, "the earlier quorum was granted before the jump")
		assert.GreaterOrEqual(t, b.Other.From, at, "the later one after it")
		require.NotEmpty(t, res.JumpBreaches, "the servers' record ties the breach to the jump")
		assert.Equal(t, "redis-3", res.JumpBreaches[0].Instance)
		return
	}
	t.Fatal("no jump moment from 5 s to 30 s broke the lock")
}

// TestSameSeedSameHistory: the same seed gives the same history.
func TestSameSeedSameHistory(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 5
	}
	if r, err := strconv.Atoi(os.Getenv("REPEATS")); err == nil && r > 0 {
		n = r
	}
	run := func() []history.Event {
		cfg := config(3, libmode.PauseInCriticalSection{After: 5 * time.Second, For: 10 * time.Second})
		cfg.Duration = 20 * time.Second
		return libmode.Run(t, cfg).Events
	}
	first := run()
	same := 1
	for range n - 1 {
		if slices.EqualFunc(first, run(), func(a, b history.Event) bool { return a.String() == b.String() }) {
			same++
		}
	}
	t.Logf("%d of %d runs of seed 3 gave the same history (%d events)", same, n, len(first))
	assert.Equal(t, n, same)
}
