package redislockexample

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bsm/redislock"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/storage"
)

// config is a 60 s run of three clients, each with its own redislock over
// go-redis with default options, TTL 1 s, paused for 3 s right after its
// read in the critical section (Kleppmann's GC pause).
func config(seed uint64, fence bool) libmode.Config {
	cfg := libmode.Config{
		Seed:    seed,
		NewLock: func(c *libmode.Client) (libmode.Lock, error) { return New(c, time.Second, fence), nil },
		Close:   func(l libmode.Lock) error { return l.(*Lock).Close() },
		Faults:  []libmode.Fault{libmode.PauseInCriticalSection{After: 5 * time.Second, For: 3 * time.Second}},
	}
	if fence {
		cfg.Storage = storage.Fenced
	}
	return cfg
}

// TestGCPauseLosesAnUpdate: redislock, unfenced storage: the paused
// holder's write lands after its lease ran out and another client's
// grant, and overwrites that client's write. The servers' record shows
// the servers kept their promises (no two grants at once): the client
// outlived its lease.
func TestGCPauseLosesAnUpdate(t *testing.T) {
	res := libmode.Run(t, config(1, false))
	t.Log(res.Summary())
	assert.Equal(t, models.Invalid, res.Verdict("critical-sections"))
	assert.Contains(t, res.Kinds, "gc-pause")
	require.NotEmpty(t, res.Outlived, "the servers' record explains the lost update")
	assert.Empty(t, res.Breaches)
	assert.Equal(t, libmode.PauseNote, res.Note)
	assert.Equal(t, 60*time.Second, res.Virtual.Truncate(time.Second))
}

// TestFencingTokenKeepsTheDataSafe: the user's own code takes a fencing
// token after each grant; fenced storage refuses the paused holder's
// stale write. The lock still broke (mutual exclusion is invalid); the
// data is safe.
func TestFencingTokenKeepsTheDataSafe(t *testing.T) {
	res := libmode.Run(t, config(1, true))
	t.Log(res.Summary())
	assert.Equal(t, models.Valid, res.Verdict("critical-sections"))
	assert.Equal(t, models.Valid, res.Verdict("fencing-tokens"))
	assert.Equal(t, models.Invalid, res.Verdict("mutual-exclusion"))
	assert.Empty(t, res.LostUpdates)
	rejected := slices.ContainsFunc(res.Events, func(e history.Event) bool { return e.F == history.FWrite && e.Type == history.Fail })
	assert.True(t, rejected, "the storage refused the stale write")
}

// TestSameSeedSameHistory: the same seed gives the same history, 100 times.
func TestSameSeedSameHistory(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 10
	}
	if r, err := strconv.Atoi(os.Getenv("REPEATS")); err == nil && r > 0 {
		n = r
	}
	cfg := config(7, false)
	cfg.Duration = 20 * time.Second
	first := libmode.Run(t, cfg).Events
	same := 1
	for range n - 1 {
		if slices.EqualFunc(first, libmode.Run(t, cfg).Events, eventEqual) {
			same++
		}
	}
	t.Logf("%d of %d runs of seed 7 gave the same history (%d events)", same, n, len(first))
	assert.Equal(t, n, same)
}

func eventEqual(a, b history.Event) bool { return a.String() == b.String() }

// TestRetriesRunInVirtualTime: with a retry strategy, Obtain waits on
// time.NewTicker and select until its context's deadline (the TTL, when
// the context has none): in the bubble those are virtual, so a minute of
// contended retries takes well under a second, and the lock is still
// broken by the pause.
func TestRetriesRunInVirtualTime(t *testing.T) {
	cfg := config(1, false)
	inner := cfg.NewLock
	cfg.NewLock = func(c *libmode.Client) (libmode.Lock, error) {
		l, err := inner(c)
		l.(*Lock).Options = &redislock.Options{RetryStrategy: redislock.LinearBackoff(20 * time.Millisecond)}
		return l, err
	}
	res := libmode.Run(t, cfg)
	t.Log(res.Summary())
	assert.Equal(t, models.Invalid, res.Verdict("critical-sections"))
	assert.Equal(t, models.Valid, res.Verdict("liveness"), "retrying, most acquires succeed")
}
