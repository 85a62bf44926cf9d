package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// state is the process state letter of pid in /proc (0 when it is gone).
func state(pid int) byte {
	b, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "stat"))
	if err != nil {
		return 0
	}
	_, s, _ := parseStat(b)
	return s
}

func TestMembersPerformFaultsByNameAndNameTheSystemInErrors(t *testing.T) {
	g, err := NewGroup(t.TempDir())
	require.NoError(t, err)
	ms := NewMembers("etcd", "member", g)
	defer ms.Close()
	m1 := ms.Add(Spec{Name: "etcd1", Path: "/bin/sleep", Args: []string{"60"}})
	m2 := ms.Add(Spec{Name: "etcd2", Path: "/bin/sleep", Args: []string{"60"}})
	assert.Equal(t, "etcd1", m1.Name())
	assert.Nil(t, m1.Process(), "not started yet")
	assert.EqualError(t, ms.Pause("etcd1"), "etcd: member etcd1 has not been started")
	require.NoError(t, ms.StartAll())
	require.NotNil(t, m1.Process())
	require.NotNil(t, m2.Process())

	for _, tc := range []struct {
		name string
		op   func(string) error
	}{
		{"pause", ms.Pause}, {"resume", ms.Resume}, {"crash", ms.Crash}, {"restart", ms.Restart},
	} {
		assert.EqualError(t, tc.op("etcd4"), `etcd: no member "etcd4"`, tc.name)
	}

	first := m1.Process()
	require.NoError(t, ms.Pause("etcd1"))
	assert.Eventually(t, func() bool { return state(first.Pid()) == 'T' }, 5*time.Second, 10*time.Millisecond,
		"a paused member is stopped")
	require.NoError(t, ms.Restart("etcd1"))
	assert.Same(t, first, m1.Process(), "restart leaves a member that runs alone")
	require.NoError(t, ms.Resume("etcd1"))
	assert.Eventually(t, func() bool { return state(first.Pid()) == 'S' }, 5*time.Second, 10*time.Millisecond,
		"a resumed member runs (sleeps) again")

	require.NoError(t, ms.Crash("etcd1"))
	assert.False(t, first.Alive(), "a crashed member's process is gone")
	assert.True(t, m2.Process().Alive(), "the other member is left alone")
	require.NoError(t, ms.Restart("etcd1"))
	again := m1.Process()
	require.NotSame(t, first, again)
	assert.True(t, again.Alive(), "a restarted member runs its command line again")
	assert.Equal(t, []string{"etcd1", "etcd2", "etcd1"}, names(g.Processes()), "every start is the group's")
}

func names(ps []*Process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}
