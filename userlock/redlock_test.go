package userlock_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/userlock"
	userlive "github.com/locklab/locklab/userlock/live"
)

// redlockUser is the Redlock a user writes against []userlock.Redis, as the
// algorithm's description puts it: a random value as owner, SET NX PX on
// every instance in turn, the lock held when a majority granted it within
// the validity time (ttl - elapsed - drift), and released on every
// instance by a Lua compare-and-delete (also after a failed attempt).
type redlockUser struct {
	env       userlock.Env
	instances []userlock.Redis
}

const (
	redlockTTL   = 10 * time.Second
	redlockDrift = redlockTTL/100 + 2*time.Millisecond
)

func (l *redlockUser) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	deadline := l.env.Mono() + wait
	for {
		owner := fmt.Sprintf("%s-%016x", l.env.Name(), l.env.Rand().Uint64())
		start := l.env.Mono()
		granted := 0
		for _, rdb := range l.instances {
			if ok, err := rdb.SetNX(ctx, key, owner, redlockTTL).Result(); err == nil && ok {
				granted++
			}
		}
		validity := redlockTTL - (l.env.Mono() - start) - redlockDrift
		if granted > len(l.instances)/2 && validity > 0 {
			return userlock.Lease{Key: key, Owner: owner, Deadline: start + validity}, nil
		}
		l.unlock(key, owner)
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("%s: %d of %d instances granted: %w", key, granted, len(l.instances), userlock.ErrNotAcquired)
		}
		l.env.Sleep(time.Duration(l.env.Rand().Int64N(int64(100 * time.Millisecond))))
	}
}

func (l *redlockUser) Release(le userlock.Lease) error {
	if l.unlock(le.Key, le.Owner) == 0 {
		return userlock.ErrNotHeld
	}
	return nil
}

// unlock deletes owner's key on every instance; it returns how many held it.
func (l *redlockUser) unlock(key, owner string) int {
	n := 0
	for _, rdb := range l.instances {
		if d, err := release.Run(context.Background(), rdb, []string{key}, owner).Int64(); err == nil && d == 1 {
			n++
		}
	}
	return n
}

var userRedlock = userlock.RedlockLock{Spec: userlock.Spec{Name: "test-redlock", SafeRelease: true},
	New: func(env userlock.Env, instances []userlock.Redis) userlock.Lock {
		return &redlockUser{env: env, instances: instances}
	}}

// registerRedlock registers l's simulated system for the test.
func registerRedlock(t *testing.T, l userlock.RedlockLock) { registerSimulated(t, l.Simulated()) }

// redlockVariant is the staged Redlock scenario of l called name.
func redlockVariant(t *testing.T, l userlock.RedlockLock, name string) scenario.Test {
	return variantOf(t, l.RedlockScenarios(), name)
}

// TestKleppmannsClockJumpBreaksTheUsersRedlockAndTheRecordShowsIt: client
// 1's majority is redis-a, b and c; redis-c's wall clock jumps 20 s and
// expires its key there; client 2 wins redis-c, d and e while client 1
// still holds its lease. The record shows two majorities at once, and
// which instances granted whom.
func TestKleppmannsClockJumpBreaksTheUsersRedlockAndTheRecordShowsIt(t *testing.T) {
	registerRedlock(t, userRedlock)
	g := runBroken(t, redlockVariant(t, userRedlock, "clock-jump"))
	require.Equal(t, 3, g.Quorum(), "a majority of 5 instances")
	breaches := g.Breaches()
	require.NotEmpty(t, breaches, "the record: %v", g.Holdings())
	b := breaches[0]
	assert.ElementsMatch(t, []string{"c1", "c2"}, []string{b.Held.Client, b.Other.Client}, "two majorities at once: %v", b)
	granted := func(owner string) []string { // the instances that granted owner
		var out []string
		for _, gr := range g.Grants() {
			if gr.Owner == owner {
				out = append(out, gr.Scope)
			}
		}
		slices.Sort(out)
		return out
	}
	first, second := b.Held, b.Other
	if first.Client != "c1" {
		first, second = second, first
	}
	assert.Equal(t, []string{"redis-a", "redis-b", "redis-c"}, granted(first.Owner), "c1's majority")
	assert.Equal(t, []string{"redis-c", "redis-d", "redis-e"}, granted(second.Owner), "c2's majority, redis-c again")
}

// TestTheUsersRedlockHoldsWithoutFaultsAndWithMonotonicExpiry: no faults,
// and the clock jump against instances that expire keys on their monotonic
// clocks: every check valid.
func TestTheUsersRedlockHoldsWithoutFaultsAndWithMonotonicExpiry(t *testing.T) {
	registerRedlock(t, userRedlock)
	for _, c := range []struct {
		name string
		test scenario.Test
	}{
		{"no faults", scenario.Test{System: userRedlock.Name, Clients: 3, Seed: 1, Time: 20 * time.Second}},
		{"clock-jump-mono-expiry", redlockVariant(t, userRedlock, "clock-jump-mono-expiry")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, grants := runWithGrants(t, c.test)
			for _, check := range []string{"critical-sections", "lease", userlock.ConductCheck} {
				v := verdict(r, check)
				assert.Equal(t, models.Valid, v.Result, "%s: %s", check, v.Reason)
			}
			assert.Empty(t, grants.Breaches())
			assert.NotEmpty(t, grants.Holdings())
		})
	}
}

// TestARedlockRunIsDeterministic: the same seed gives a byte-identical
// history, with random faults.
func TestARedlockRunIsDeterministic(t *testing.T) {
	registerRedlock(t, userRedlock)
	assertByteIdenticalRuns(t, scenario.Test{System: userRedlock.Name, Clients: 3, Seed: 7, Time: 20 * time.Second,
		Nemesis: "random", SystemOptions: userlock.RedlockRead})
}

// registerLiveRedlock registers the live test's lock once per test binary.
var registerLiveRedlock sync.Once

// TestTheSameRedlockRunsLiveOnRedisServers: the user's Redlock, registered
// with userlive.RegisterRedlock, runs unchanged against five real redis-servers
// through one *goredis.Client each: without faults it takes the lock and
// every check is valid; under Kleppmann's clock jump (redis-c's wall clock
// moved by libfaketime, client 1 cut from redis-d and e by its proxies) the
// live verdict is the simulated one.
func TestTheSameRedlockRunsLiveOnRedisServers(t *testing.T) {
	needRedisServer(t, "starts five real redis-servers")
	l := userRedlock
	l.Name = "test-redlock-live"
	registerLiveRedlock.Do(func() { userlive.RegisterRedlock(l) }) // a live form cannot be unregistered

	t.Run("no faults", func(t *testing.T) {
		r, err := live.Run(context.Background(), scenario.Test{System: l.Name, Clients: 2, Seed: 1, Time: 3 * time.Second}, live.Config{})
		require.NoError(t, err)
		acquired := 0
		for _, e := range r.Events {
			if e.F == "acquire" && e.Type == history.OK {
				acquired++
			}
		}
		assert.Positive(t, acquired, "the clients took the lock on the real instances")
		v := verdict(r, "critical-sections")
		assert.Equal(t, models.Valid, v.Result, v.Reason)
	})
	t.Run("clock-jump", func(t *testing.T) {
		test := variantOf(t, l.RedlockScenarios(), "clock-jump")
		registerSimulated(t, userRedlock.Simulated())
		simTest := test
		simTest.System = userRedlock.Name
		sim, err := harness.Run(simTest)
		require.NoError(t, err)
		for _, check := range []string{"critical-sections", "lease"} {
			s := verdict(sim, check)
			assert.Equal(t, models.Invalid, s.Result, "%s simulated: %s", check, s.Reason)
		}
		// Real time races: up to 3 tries, as the live package's own
		// cross-validation allows, for the live verdicts to agree.
		var r scenario.Result
		for try := 1; try <= 3; try++ {
			r, err = live.Run(context.Background(), test, live.Config{})
			require.NoError(t, err)
			for _, f := range r.FaultOutcomes {
				require.True(t, f.Fired, "live fault %d (%s) did not fire: %s", f.Fault, f.Kind, f.DidNotFire)
			}
			if verdict(r, "critical-sections").Result == models.Invalid && verdict(r, "lease").Result == models.Invalid {
				break
			}
			t.Logf("try %d: live disagrees: %s; %s", try, verdict(r, "critical-sections").Reason, verdict(r, "lease").Reason)
		}
		for _, check := range []string{"critical-sections", "lease"} {
			s, v := verdict(sim, check), verdict(r, check)
			assert.Equal(t, s.Result, v.Result, "%s live: %s", check, v.Reason)
		}
	})
}
