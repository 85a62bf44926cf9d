package libmode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/storage"
)

// setLock is a lock a user might write over go-redis: SET NX PX, released
// by a compare-and-delete script; with fence, a token from INCR after the
// grant.
type setLock struct {
	rdb   *redis.Client
	name  string
	ttl   time.Duration
	fence bool
	n     int
}

var unlock = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

func (l *setLock) Acquire(ctx context.Context, key string) (Lease, error) {
	l.n++
	owner := fmt.Sprintf("%s-%d", l.name, l.n)
	ok, err := l.rdb.SetNX(ctx, key, owner, l.ttl).Result()
	if err != nil {
		return Lease{}, err
	}
	if !ok {
		return Lease{}, lockapi.ErrNotAcquired
	}
	lease := Lease{Owner: owner, Valid: l.ttl}
	if l.fence {
		tok, err := l.rdb.Incr(ctx, key+":token").Result()
		if err != nil {
			return Lease{}, err
		}
		lease.Token, lease.HasToken = uint64(tok), true
	}
	return lease, nil
}

func (l *setLock) Release(ctx context.Context, lease Lease) error {
	n, err := unlock.Run(ctx, l.rdb, []string{"k"}, lease.Owner).Int()
	if err != nil {
		return err
	}
	if n == 0 {
		return lockapi.ErrNotHeld
	}
	return nil
}

func setLockConfig(fence bool) Config {
	return Config{
		Duration: 10 * time.Second,
		NewLock: func(c *Client) (Lock, error) {
			return &setLock{rdb: redis.NewClient(c.RedisOptions(0)), name: c.Name(), ttl: time.Second, fence: fence}, nil
		},
		Close: func(l Lock) error { return l.(*setLock).rdb.Close() },
	}
}

func TestNoFaultsAllValid(t *testing.T) {
	res := Run(t, setLockConfig(false))
	t.Log(res.Summary())
	require.NotEmpty(t, res.Events)
	assert.Equal(t, models.Valid, res.Verdict("critical-sections"))
	assert.Equal(t, models.Valid, res.Verdict("mutual-exclusion"))
	assert.Empty(t, res.Breaches)
	assert.Empty(t, res.LostUpdates)
	acquired := 0
	for _, e := range res.Events {
		if e.F == history.FAcquire && e.Type == history.OK {
			acquired++
		}
	}
	assert.Greater(t, acquired, 10)
	assert.Equal(t, 10*time.Second, res.Virtual.Truncate(10*time.Second))
}

func TestGCPauseLosesAnUpdate(t *testing.T) {
	cfg := setLockConfig(false)
	cfg.Faults = []Fault{PauseInCriticalSection{After: 2 * time.Second, For: 3 * time.Second}}
	res := Run(t, cfg)
	t.Log(res.Summary())
	assert.Equal(t, models.Invalid, res.Verdict("critical-sections"))
	assert.Contains(t, res.Kinds, "gc-pause")
	assert.Empty(t, res.Breaches, "the servers kept their promises: the client outlived its lease")
	assert.NotEmpty(t, res.Outlived, "the servers' record explains the lost update")
	assert.NotEmpty(t, res.LostUpdates, "the storage's record shows the lost update")
	assert.Equal(t, PauseNote, res.Note)
}

func TestFencedStaysValid(t *testing.T) {
	cfg := setLockConfig(true)
	cfg.Storage = storage.Fenced
	cfg.Faults = []Fault{PauseInCriticalSection{After: 2 * time.Second, For: 3 * time.Second}}
	res := Run(t, cfg)
	t.Log(res.Summary())
	assert.Equal(t, models.Valid, res.Verdict("critical-sections"))
	assert.Equal(t, models.Invalid, res.Verdict("mutual-exclusion"), "the lock itself still broke")
	assert.Empty(t, res.LostUpdates)
}

func TestPartitionHolding(t *testing.T) {
	cfg := setLockConfig(false)
	cfg.Faults = []Fault{Partition{At: 2 * time.Second, For: 5 * time.Second, Clients: []string{"c1"}}}
	res := Run(t, cfg)
	t.Log(res.Summary())
	assert.NotEqual(t, models.Result(""), res.Verdict("critical-sections"))
	var started bool
	for _, e := range res.Events {
		started = started || (e.Type == history.Start && e.F == "partition")
	}
	assert.True(t, started)
}

// TestCrashRestart: an instance that restarts empty forgets the holder's
// lock and grants it again (the servers' record shows two owners at
// once); with persistence it keeps the lock.
func TestCrashRestart(t *testing.T) {
	for _, persist := range []bool{false, true} {
		t.Run(fmt.Sprintf("persist=%v", persist), func(t *testing.T) {
			cfg := setLockConfig(false)
			cfg.Hold = 800 * time.Millisecond
			cfg.Faults = []Fault{Crash{Instance: "redis-1", At: 3 * time.Second, For: 10 * time.Millisecond, Persist: persist}}
			res := Run(t, cfg)
			t.Log(res.Summary())
			var crashed bool
			for _, e := range res.Events {
				crashed = crashed || (e.Type == history.Start && e.F == "crash")
			}
			assert.True(t, crashed)
			if persist {
				assert.Empty(t, res.Breaches)
				assert.Equal(t, models.Valid, res.Verdict("critical-sections"))
				return
			}
			assert.NotEmpty(t, res.Breaches, "the restarted instance granted the lock again")
			assert.Contains(t, res.Kinds, "restart-regrant")
			assert.Equal(t, models.Invalid, res.Verdict("mutual-exclusion"))
		})
	}
}

// TestDelay: a delay of every message of c1 slows its calls by about
// the delay (twice: there and back), and breaks nothing by itself.
func TestDelay(t *testing.T) {
	cfg := setLockConfig(false)
	cfg.Faults = []Fault{Delay{At: 2 * time.Second, For: 3 * time.Second, By: 200 * time.Millisecond, Clients: []string{"c1"}}}
	res := Run(t, cfg)
	t.Log(res.Summary())
	var slowest int64
	invoked := map[int]int64{}
	for _, e := range res.Events {
		if e.Process != 0 || e.F != history.FAcquire {
			continue
		}
		if e.Type == history.Invoke {
			invoked[e.Process] = e.Time
		} else if e.Time >= int64(2*time.Second) && e.Time < int64(5*time.Second) {
			slowest = max(slowest, e.Time-invoked[e.Process])
		}
	}
	assert.GreaterOrEqual(t, slowest, int64(400*time.Millisecond))
	assert.Equal(t, models.Valid, res.Verdict("critical-sections"))
}

func TestRefusesBadConfigurations(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Crash{Instance: "redis-9", At: time.Second, For: time.Second}, `no instance "redis-9"`},
		{Crash{Instance: "redis-1", At: time.Second}, "positive downtime"},
		{Delay{At: time.Second, For: time.Second}, "positive By"},
		{PauseClient{Client: "c9", At: time.Second, For: time.Second}, `no client "c9"`},
		{Partition{For: time.Second, Lossy: true, Reject: true}, "not both"},
		{ClockJump{Instance: "redis-1", At: time.Second}, "non-zero By"},
	} {
		cfg := setLockConfig(false)
		cfg.Faults = []Fault{tc.f}
		_, err := cfg.withDefaults()
		require.Error(t, err, tc.f.String())
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), "fault 0")
	}
	_, err := (Config{}).withDefaults()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NewLock is not set")
}

// TestWriteHistory: the history a run writes reads back as it was, for
// `locklab check` and its report.
func TestWriteHistory(t *testing.T) {
	cfg := setLockConfig(false)
	cfg.Faults = []Fault{PauseInCriticalSection{After: 2 * time.Second, For: 3 * time.Second}}
	res := Run(t, cfg)
	path := filepath.Join(t.TempDir(), "history.jsonl")
	require.NoError(t, res.WriteHistory(path))
	back, err := history.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, sameEvents(res.Events, back))
	if os.Getenv("LIBMODE_KEEP_HISTORY") != "" {
		require.NoError(t, res.WriteHistory(os.Getenv("LIBMODE_KEEP_HISTORY")))
	}
}

// TestBothProtocols: go-redis speaks RESP3 (HELLO 3, its default) or RESP2
// (Protocol 2) to the simulated instance; the lock works either way.
func TestBothProtocols(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			cfg := setLockConfig(false)
			cfg.Duration = 5 * time.Second
			cfg.NewLock = func(c *Client) (Lock, error) {
				opts := c.RedisOptions(0)
				opts.Protocol = proto
				return &setLock{rdb: redis.NewClient(opts), name: c.Name(), ttl: time.Second}, nil
			}
			res := Run(t, cfg)
			assert.Equal(t, models.Valid, res.Verdict("critical-sections"))
			var released int
			for _, e := range res.Events {
				if e.F == history.FRelease && e.Type == history.OK {
					released++
				}
			}
			assert.Greater(t, released, 5, "acquire (SET NX PX) and release (EVALSHA) answered")
		})
	}
}

// TestNewLockFails: a lock that cannot be built fails the test at once,
// naming the client (run in a process of its own, as the failure is the
// test's).
func TestNewLockFails(t *testing.T) {
	if os.Getenv("LIBMODE_NEWLOCK_HELPER") == "1" {
		cfg := setLockConfig(false)
		inner := cfg.NewLock
		cfg.NewLock = func(c *Client) (Lock, error) {
			if c.Name() == "c2" {
				return nil, fmt.Errorf("no such library")
			}
			return inner(c)
		}
		Run(t, cfg)
		return
	}
	if testing.Short() {
		t.Skip("starts the test binary again")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewLockFails$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LIBMODE_NEWLOCK_HELPER=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "libmode: build the lock of c2: no such library")
	assert.NotContains(t, string(out), "panic")
}
