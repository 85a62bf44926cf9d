package harness

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/sim"
)

// TestPrepareRejectsNamesTheSystemDoesNotKnow: the names only the deployed
// system knows are checked before the run, and the error names the file, the
// line, the fault and the field, with the valid choices.
func TestPrepareRejectsNamesTheSystemDoesNotKnow(t *testing.T) {
	tests := []struct{ name, fault, want string }{
		{"match of no message type", `{"kind": "delay", "from": ["c1"], "to": ["storage"], "amount": "1s",
   "match": "storage.WriteRequest"}`,
			`s.json:3: faults[0] (delay): field "match": "storage.WriteRequest" is not a message type of this system ` +
				`(want one of redis.Del, redis.DelIfValue, redis.ExpireIfValue, redis.Get, redis.GetPrimary, redis.HoldLock, ` +
				`redis.Incr, redis.Ping, redis.Pong, redis.PrimaryIs, redis.Promote, redis.ReplAck, redis.ReplicaOf, redis.Replicate, ` +
				`redis.Reply, redis.SetNX, redis.SetNXFence, redis.Snapshot, redis.UnholdLock, redis.Wait, storage.ReadReq, storage.Reply, storage.WriteReq)`},
		{"trigger on a server", `{"kind": "pause", "targets": ["c1"], "duration": "1s",
   "after": {"node": "redis", "f": "acquire"}}`,
			`s.json:3: faults[0] (pause): field "after.node": "redis" is not a client: a trigger follows the operations of a client (c1, c2)`},
		{"unknown target", `{"kind": "pause", "duration": "1s",
   "targets": ["c1", "c3"]}`,
			`s.json:3: faults[0] (pause): field "targets": unknown node "c3" (known: redis, storage, c1, c2, clients, servers)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := nemesis.Parse([]byte("{\"faults\": [\n  "+tc.fault+"\n]}"), "s.json")
			require.NoError(t, err)
			_, err = Prepare(Test{System: "redis", Clients: 2, Schedule: &s})
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestEveryMessageTypeIsDeclared: every message a system sends, under random
// faults, is of a type its deployment declares, so that a delay's match is
// checked against the true list (a type missing here would be refused in a
// schedule although the system sends it).
func TestEveryMessageTypeIsDeclared(t *testing.T) {
	configs := []Test{
		{System: "control"},
		{System: "redis", SystemOptions: map[string]string{"replicas": "2", "wait": "1", "fencing": "true"}},
		{System: "redis", SystemOptions: map[string]string{"reentrancy": "server", "watchdog": "true", "release": "lua"}, Workload: "reentrant"},
		{System: "redlock", SystemOptions: map[string]string{"token": "external"}},
		{System: "raftkv"},
	}
	for _, base := range configs {
		t.Run(base.System, func(t *testing.T) {
			seen := map[string]bool{}
			var declared []string
			for seed := range uint64(3) {
				tc := base
				tc.Seed, tc.Nemesis, tc.Time = seed, "random", 20*time.Second
				p, err := Prepare(tc)
				require.NoError(t, err)
				declared = messageNames(p.Deployment.Messages)
				p.World.Network().AddRule(sim.Rule{Match: func(m sim.Message) bool {
					seen[fmt.Sprintf("%T", m.Body)] = true
					return false
				}})
				p.World.RunUntil(p.Test.Time)
				p.World.Close()
			}
			require.NotEmpty(t, seen)
			for _, name := range sortedKeys(seen) {
				assert.True(t, slices.Contains(declared, name), "%s sends %s, which its deployment does not declare", base.System, name)
			}
		})
	}
}
