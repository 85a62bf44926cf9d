package liveform

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

func testForm() Form {
	return Form{
		Describe: func(scenario.Test) (Description, error) { return Description{}, nil },
		Deploy:   func(Deployment) (*Deployed, error) { return &Deployed{}, nil },
		Note:     "a test form",
	}
}

func TestRegisterFindAndNames(t *testing.T) {
	defer func(saved map[string]Form) { forms = saved }(forms)
	forms = map[string]Form{}
	Register("zeta", testForm())
	Register("alpha", testForm())
	assert.Equal(t, []string{"alpha", "zeta"}, Names(), "names are sorted")
	assert.Equal(t, []string{"alpha (a test form)", "zeta (a test form)"}, Notes())
	_, ok := Find("alpha")
	assert.True(t, ok)
	_, ok = Find("beta")
	assert.False(t, ok)
	assert.ErrorContains(t, Unknown("beta"), `system "beta" has no live form yet (live: alpha, zeta)`)
	assert.Panics(t, func() { Register("alpha", testForm()) }, "a name registered twice")
	assert.Panics(t, func() { Register("gamma", Form{}) }, "a form without Describe or Deploy")
}

func TestNotLiveReadsAsItsCauseAndMatchesErrNotLive(t *testing.T) {
	err := NotLive(errors.New("redis option reentrancy=server has no live form"))
	assert.ErrorIs(t, err, ErrNotLive)
	assert.Equal(t, "redis option reentrancy=server has no live form", err.Error())
	assert.NotErrorIs(t, errors.New("other"), ErrNotLive)
}

func TestRetryDeployRetriesOnlyAServerThatExitedBeforeItWasReady(t *testing.T) {
	for _, tc := range []struct {
		name  string
		errs  []error
		tries int
		dirs  []string
	}{
		{"ready at once", []error{nil}, 1, []string{"d"}},
		{"a port taken, then ready", []error{errors.New("redis-server exited before it was ready"), nil}, 2, []string{"d", "d/retry2"}},
		{"another error is not retried", []error{errors.New("bad option")}, 1, []string{"d"}},
		{"three tries at most", []error{
			errors.New("x exited before it was ready"), errors.New("x exited before it was ready"),
			errors.New("x exited before it was ready"), nil}, 3, []string{"d", "d/retry2", "d/retry3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dirs []string
			deploy := RetryDeploy(func(d Deployment) (*Deployed, error) {
				dirs = append(dirs, d.Dir)
				if err := tc.errs[len(dirs)-1]; err != nil {
					return nil, err
				}
				return &Deployed{}, nil
			})
			_, _ = deploy(Deployment{Dir: "d"})
			assert.Equal(t, tc.tries, len(dirs))
			assert.Equal(t, tc.dirs, dirs)
		})
	}
}

func TestRefuseRealServers(t *testing.T) {
	servers, roles := []string{"n1", "n2", "n3"}, []string{"leader", "followers"}
	refuse := func(f nemesis.Fault) string {
		return RefuseRealServers(f, servers, roles, "no clock", "no peer cut", "no delay")
	}
	for _, tc := range []struct {
		name  string
		fault nemesis.Fault
		want  string
	}{
		{"a client's clock jumps", nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c1"}}, ""},
		{"a server's clock jumps", nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"leader"}}, "no clock"},
		{"clients cut from servers", nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"c1"}, {"servers"}}}, ""},
		{"servers cut from servers", nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"n1"}, {"n2", "n3"}}}, "no peer cut"},
		{"one-way server to server", nemesis.Fault{Kind: nemesis.Partition, From: []string{"leader"}, To: []string{"followers"}}, "no peer cut"},
		{"one-way client to server", nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"leader"}}, ""},
		{"a server isolated", nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"server-of:k"}}, "no peer cut"},
		{"a client isolated", nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"c2"}}, ""},
		{"a delay to a server", nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"servers-but:n1"}}, "no delay"},
		{"a pause is never refused here", nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"leader"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, refuse(tc.fault))
		})
	}
}

func TestServerRole(t *testing.T) {
	for name, want := range map[string]bool{"server-of:k": true, "servers-but:n1": true, "server-of:": false, "leader": false, "c1": false} {
		assert.Equal(t, want, ServerRole(name), name)
	}
}

func TestFailedLockAndStorageFailWithTheirCause(t *testing.T) {
	cause := fmt.Errorf("dial: refused")
	l := FailedLock{Err: cause}
	_, err := l.Acquire("k", 0)
	require.Error(t, err)
	assert.ErrorIs(t, err, cause)
	assert.ErrorContains(t, l.Release(scenarioLease()), "dial: refused")
	s := FailedStorage{Err: cause}
	_, err = s.Read("k", 0)
	assert.ErrorIs(t, err, cause)
	assert.ErrorIs(t, s.Write("k", 1, 0), cause)
}

func scenarioLease() lockapi.Lease { return lockapi.Lease{Key: "k"} }
