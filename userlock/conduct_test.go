package userlock_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/locklab/locklab/backends/builtin"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
)

// fakeLock is a lock of a user's with one bug chosen by the test: a mutex
// kept in memory shared by the clients (no service).
type fakeLock struct {
	env    userlock.Env
	holder *string
	bug    string
	n      int
}

func (l *fakeLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	l.n++
	if l.bug == "panic" && l.n == 3 {
		var m map[string]int
		m["boom"]++ // a nil map: a user's bug
	}
	deadline := l.env.Mono() + wait
	for *l.holder != "" {
		if l.env.Mono() >= deadline {
			return userlock.Lease{}, fmt.Errorf("held by %s: %w", *l.holder, userlock.ErrNotAcquired)
		}
		l.env.Sleep(10 * time.Millisecond)
	}
	owner := fmt.Sprintf("%s-%d", l.env.Name(), l.n)
	*l.holder = owner
	lease := userlock.Lease{Key: key, Owner: owner, HasToken: true, Token: uint64(l.n)}
	if l.bug == "no-token" {
		lease.HasToken, lease.Token = false, 0
	}
	return lease, nil
}

func (l *fakeLock) Release(le userlock.Lease) error {
	if *l.holder != le.Owner {
		return userlock.ErrNotHeld
	}
	*l.holder = ""
	return nil
}

// register registers a user lock called name with the given bug, over no
// service at all (a deployment without servers).
func register(t *testing.T, name, bug string) {
	spec := userlock.Spec{Name: name, Tokens: true, SafeRelease: true}
	system.Register(spec.System("memory", opt.Table[struct{}]{Owner: name},
		func(w *sim.World, opts map[string]string, c *userlock.Conduct) (system.Deployment, error) {
			holder := new(string)
			return system.Deployment{NewLock: func(p *sim.Proc) userlock.Lock { return &fakeLock{env: p, holder: holder, bug: bug} }}, nil
		}))
	t.Cleanup(func() { system.Unregister(name) })
}

func verdict(r scenario.Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{}
}

// TestTheLocksConductIsItsOwnVerdict: a user's lock that panics or returns
// malformed leases is judged by lock-conduct, naming the client, the call
// and the time; the run itself completes (no crash of locklab).
func TestTheLocksConductIsItsOwnVerdict(t *testing.T) {
	cases := []struct {
		bug    string
		result models.Result
		want   string
	}{
		{"", models.Valid, "the lock behaved in all"},
		{"panic", models.Invalid, `Acquire\("k", .*\) at .*: panicked: assignment to entry in nil map at .*conduct_test.go:\d+`},
		{"no-token", models.Invalid, "returned a lease without a fencing token, although the lock declares Tokens"},
	}
	for _, c := range cases {
		t.Run("bug="+c.bug, func(t *testing.T) {
			name := "test-conduct-" + c.bug
			register(t, name, c.bug)
			r, err := harness.Run(scenario.Test{System: name, Workload: "fenced-counter", Clients: 3, Seed: 1, Time: 5 * time.Second})
			require.NoError(t, err, "a user's bug is a verdict, not a crash of locklab")
			v := verdict(r, userlock.ConductCheck)
			require.NotEmpty(t, v.Check, "lock-conduct ran")
			assert.Equal(t, c.result, v.Result, v.Reason)
			assert.Regexp(t, c.want, v.Reason)
		})
	}
}

// TestAPanicBecomesAnUnknownOutcome: the call that panicked returns an
// error wrapping ErrUnknown (the lock may have been taken before the panic).
func TestAPanicBecomesAnUnknownOutcome(t *testing.T) {
	w := sim.NewWorld(sim.Config{Seed: 1})
	n := w.AddNode("c1", sim.NodeOptions{})
	c := userlock.NewConduct(w.Now)
	var err error
	n.Spawn("c1", func(p *sim.Proc) {
		holder := new(string)
		l := userlock.Guard(&fakeLock{env: p, holder: holder, bug: "panic", n: 2}, p, userlock.Spec{Tokens: true}, c)
		_, err = l.Acquire("k", 0)
	})
	w.Run(time.Second)
	require.Error(t, err)
	assert.True(t, errors.Is(err, userlock.ErrUnknown), err)
	require.Len(t, c.Misconducts(), 1)
	assert.Equal(t, "c1", c.Misconducts()[0].Client)
}
