package liveform

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/nemesis"
)

func TestRaftClusterRolesMayNameAnyServerBeforeItRuns(t *testing.T) {
	d := RaftCluster(ServerNames(3, func(id int) string { return fmt.Sprintf("s%d", id) }))
	assert.Equal(t, []string{"s1", "s2", "s3"}, d.Servers)
	assert.Equal(t, []string{"leader", "followers"}, d.Roles)
	for _, tc := range []struct {
		role string
		want []string
		ok   bool
	}{
		{"leader", []string{"s1", "s2", "s3"}, true},
		{"followers", []string{"s1", "s2", "s3"}, true},
		{"primary", nil, false},
		{"s1", nil, false},
	} {
		got, ok := d.Resolve(tc.role)
		assert.Equal(t, tc.ok, ok, tc.role)
		assert.Equal(t, tc.want, got, tc.role)
	}
}

func TestRefuseRaftClusterCountsLeaderAndFollowersAsServers(t *testing.T) {
	refuse := RefuseRaftCluster("kv", []string{"s1", "s2"}, "no clock", "no peer cut")
	for _, tc := range []struct {
		name  string
		fault nemesis.Fault
		want  string
	}{
		{"a clock jump of the leader", nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"leader"}}, "no clock"},
		{"a clock jump of a client", nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c1"}}, ""},
		{"leader cut from followers", nemesis.Fault{Kind: nemesis.Partition, From: []string{"leader"}, To: []string{"followers"}}, "no peer cut"},
		{"a client cut from the leader", nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"leader"}}, ""},
		{"a delay to a server", nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"s2"}},
			"a delay of kv's traffic cannot run live: real servers' messages do not pass through locklab (delays of the storage's messages run)"},
	} {
		assert.Equal(t, tc.want, refuse(tc.fault), tc.name)
	}
}

func TestRefuseSimOnlyNamesTheFirstSimulatedOnlyOption(t *testing.T) {
	notHonoured := errors.New("not honoured live")
	simOnly := map[string]string{"tick": "no ticks", "fsync": "in memory"}
	require.NoError(t, RefuseSimOnly("x (live)", map[string]string{"nodes": "3"}, simOnly, notHonoured))
	err := RefuseSimOnly("x (live)", map[string]string{"tick": "1ms", "fsync": "always", "nodes": "3"}, simOnly, notHonoured)
	require.Error(t, err)
	assert.EqualError(t, err, "x (live) option fsync: in memory: not honoured live", "the first in name order")
	assert.ErrorIs(t, err, notHonoured)
}

type closeCount struct{ n *int }

func (c closeCount) Close() { *c.n++ }

func TestClientsCloseEveryClientKept(t *testing.T) {
	cs, net := NewClients[closeCount](), faultnet.New()
	var a, b int
	cs.Add(net, "c1", closeCount{&a})
	cs.Add(net, "c2", closeCount{&b})
	got, ok := cs.Get("c2")
	require.True(t, ok)
	assert.Equal(t, &b, got.n)
	_, ok = cs.Get("c3")
	assert.False(t, ok)
	cs.Close()
	assert.Equal(t, 1, a)
	assert.Equal(t, 1, b)
}
