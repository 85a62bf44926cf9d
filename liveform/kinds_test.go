package liveform

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/nemesis"
)

// TestCannotDrawLeavesOutAKindSomeDrawnShapeOfWhichIsRefused: a kind is
// left out of a random schedule when the system refuses any shape the
// generator may draw of it (a delay between servers, a cut between them),
// not only when it refuses the kind on every server.
func TestCannotDrawLeavesOutAKindSomeDrawnShapeOfWhichIsRefused(t *testing.T) {
	servers, roles, clients := []string{"n1", "n2", "n3"}, []string{"leader"}, []string{"c1", "c2"}
	d := Description{Servers: servers, Roles: roles, Refuse: func(f nemesis.Fault) string {
		return RefuseRealServers(f, servers, roles, "no clock", "no peer cut", "no delay")
	}}
	for _, tc := range []struct {
		kind nemesis.Kind
		want string
	}{
		{nemesis.Pause, ""},
		{nemesis.Crash, ""},
		{nemesis.ClockJump, "no clock"},
		{nemesis.ClockDrift, Unsupported[nemesis.ClockDrift]},
		{nemesis.Partition, "no peer cut"},
		{nemesis.Delay, "no delay"},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			assert.Equal(t, tc.want, d.CannotDraw(tc.kind, clients))
		})
	}
	open := Description{Servers: servers}
	assert.Empty(t, open.CannotDraw(nemesis.Delay, clients), "a system that refuses nothing draws every kind but clock-drift")
	assert.NotEmpty(t, open.CannotDraw(nemesis.ClockDrift, clients))
}
