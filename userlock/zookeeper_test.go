package userlock_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/internal/locktest"
)

// holderPause is the catalog's kleppmann-gc-pause on a user's lock: client
// 1 pauses for 15 s right after its read under the lock, longer than its
// 10 s session.
func holderPause(name string, fenced bool) scenario.Test {
	t := scenario.Test{System: name, Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second))}
	if fenced {
		t = scenario.Fenced(t)
	}
	return t
}

// TestAUsersZooKeeperLockIsJudgedAgainstTheServersRecord: the holder-pause
// scenario on a user's raw-API lock. Unfenced, client 1's write after its
// session expired lands over client 2's: critical-sections INVALID, and the
// servers' record of grants backs it (client 1's grant ran out before
// client 2's began: the servers kept their promise; the lock did not). With
// the sequence number as fencing token the stale write is rejected: valid.
func TestAUsersZooKeeperLockIsJudgedAgainstTheServersRecord(t *testing.T) {
	tests := []struct {
		name   string
		fenced bool
		want   models.Result
	}{
		{"test-zk-raw-unfenced", false, models.Invalid},
		{"test-zk-raw-fenced", true, models.Valid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			locktest.RegisterZooKeeperRaw(t, tc.name, tc.fenced)
			p, err := harness.Prepare(holderPause(tc.name, tc.fenced))
			require.NoError(t, err)
			p.RecordGrants()
			r, err := p.Run()
			require.NoError(t, err)
			cs := verdict(r, "critical-sections")
			require.NotEmpty(t, cs.Check, "critical-sections ran")
			assert.Equal(t, tc.want, cs.Result, cs.Reason)
			assert.Equal(t, models.Valid, verdict(r, userlock.ConductCheck).Result, verdict(r, userlock.ConductCheck).Reason)
			assert.Contains(t, story(r), "session-expired", "the leader expired client 1's session during its pause")

			grants := p.Deployment.Grants.Grants()
			t.Logf("critical-sections: %s; %d grants", cs.Reason, len(grants))
			var c1, c2 *lockapi.Grant
			for i, g := range grants {
				switch {
				case g.Client == "c1" && c1 == nil:
					c1 = &grants[i]
				case g.Client == "c2" && c1 != nil && c2 == nil:
					c2 = &grants[i]
				}
			}
			require.NotNil(t, c1, "the record has client 1's grant: %+v", grants)
			require.NotNil(t, c2, "the record has client 2's grant after it: %+v", grants)
			t.Logf("client 1: %+v\nclient 2: %+v", *c1, *c2)
			assert.True(t, strings.HasPrefix(c1.Owner, "/locks/"), "the record names the lock node: %s", c1.Owner)
			assert.LessOrEqual(t, c1.Until, c2.At, "client 1's grant ran out (its session expired) before client 2's began")
			assert.Empty(t, p.Deployment.Grants.Breaches(), "the servers broke no promise")
			if tc.want == models.Invalid {
				assert.Contains(t, owners(r), c1.Owner, "the history's lease is the node the record granted")
			}
		})
	}
}

// TestAUsersZooKeeperLockRunsDeterministically: the same seed gives a
// byte-identical history.
func TestAUsersZooKeeperLockRunsDeterministically(t *testing.T) {
	locktest.RegisterZooKeeperRaw(t, "test-zk-raw-determinism", false)
	tc := scenario.Test{System: "test-zk-raw-determinism", Clients: 3, Seed: 7, Time: 20 * time.Second, Nemesis: "random"}
	var hist [2][]byte
	for i := range hist {
		r, err := harness.Run(tc)
		require.NoError(t, err)
		require.NotEmpty(t, r.Events)
		hist[i], err = json.Marshal(r.Events)
		require.NoError(t, err)
	}
	assert.Equal(t, string(hist[0]), string(hist[1]), "two runs of seed 7 gave different histories")
}

func story(r scenario.Result) string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "%s %s %s\n", e.F, e.Owner, e.Detail)
	}
	return b.String()
}

func owners(r scenario.Result) []string {
	var out []string
	for _, e := range r.Events {
		if e.Owner != "" && !slices.Contains(out, e.Owner) {
			out = append(out, e.Owner)
		}
	}
	return out
}
