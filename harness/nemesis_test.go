package harness

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
)

// TestFaultsThatDidNotFireAreRecorded: a valid fault that never took effect
// is recorded as "did not fire" with why, in the result, the report's run,
// the printed summary; a run whose every fault missed says so first, and
// why in classes (the delay that started and delayed nothing had no effect).
func TestFaultsThatDidNotFireAreRecorded(t *testing.T) {
	schedule, err := nemesis.Parse([]byte(`{"faults": [
  {"kind": "pause", "targets": ["c1"], "at": "2s", "duration": "1s"},
  {"kind": "pause", "targets": ["c1"], "at": "90s", "duration": "1s"},
  {"kind": "pause", "targets": ["c1"], "duration": "1s", "after": {"node": "c2", "f": "renew"}},
  {"kind": "pause", "targets": ["c1"], "duration": "1s", "after": {"node": "c2", "f": "acquire", "nth": 1000}},
  {"kind": "delay", "from": ["c1"], "to": ["c2"], "amount": "1s", "match": "storage.WriteReq"}
]}`), "missed.json")
	require.NoError(t, err)
	res, err := Run(scenario.Test{System: "redis", Clients: 2, Seed: 1, Time: 10 * time.Second, Schedule: &schedule})
	require.NoError(t, err)
	var got []string
	for _, o := range res.FaultOutcomes {
		got = append(got, fmt.Sprintf("%d %v %s", o.Fault, o.Fired, o.DidNotFire))
	}
	require.Len(t, got, 5)
	assert.Equal(t, "0 true ", got[0])
	assert.Equal(t, "1 false it was due at 1m30s, after the run ended at 10s", got[1])
	assert.Equal(t, "2 false its trigger never happened: c2 recorded no renew ok", got[2])
	assert.Regexp(t, `^3 false its trigger never happened: c2 recorded \d+ acquire ok, and the fault waits for the 1000th$`, got[3])
	assert.Equal(t, "4 false it delayed no message: no storage.WriteReq message went from c1 to c2 from 0s to the end of the run", got[4])

	run := judge.Report(res, "locklab run ...")
	require.Len(t, run.FaultOutcomes, 5)
	assert.Equal(t, reports.FaultOutcome{Fault: 1, Kind: "pause", DidNotFire: "it was due at 1m30s, after the run ended at 10s"}, run.FaultOutcomes[1])
	assert.Empty(t, run.FaultWarning(), "one fault fired")
	// The one that fired, a 1 s pause, is shorter than the 10 s lease: the
	// only warning is that it was too short.
	assert.Equal(t, []string{run.Faults.WeakWarning}, run.Warnings())
	assert.Contains(t, run.Faults.WeakWarning, "no pause reached the lease (ttl 10s): the only one was 1s, on c1")
	var out bytes.Buffer
	require.NoError(t, reports.PrintSummary(&out, run, ""))
	assert.Contains(t, out.String(), "did not fire: 4 of 5 scheduled faults\n  fault 2 (pause c1): it was due at 1m30s")
	assert.NotContains(t, out.String(), "WARNING: no fault", "one fault fired")

	schedule.Faults = schedule.Faults[1:]
	res, err = Run(scenario.Test{System: "redis", Clients: 2, Seed: 1, Time: 10 * time.Second, Schedule: &schedule})
	require.NoError(t, err)
	run = judge.Report(res, "locklab run ...")
	assert.Equal(t, []string{"4 faults scheduled, none fired (1 due after the run ended, 2 waiting for a trigger that did not come in time, " +
		"1 without effect when it started), so the verdicts judge a run without faults"}, run.Warnings())
	out.Reset()
	require.NoError(t, reports.PrintSummary(&out, run, ""))
	assert.Regexp(t, `^WARNING: 4 faults scheduled, none fired .*\nhistory: `, out.String(), "the warning comes first")
}

// TestPrepareRejectsNamesTheSystemDoesNotKnow: the names only the deployed
// system knows are checked before the run, and the error names the file, the
// line, the fault and the field, with the valid choices.
func TestPrepareRejectsNamesTheSystemDoesNotKnow(t *testing.T) {
	tests := []struct{ name, fault, want string }{
		{"match of no message type", `{"kind": "delay", "from": ["c1"], "to": ["storage"], "amount": "1s",
   "match": "storage.WriteRequest"}`,
			`s.json:3: faults[0] (delay): field "match": "storage.WriteRequest" is not a message type of this system ` +
				`(want one of redis.Del, redis.DelIfValue, * storage.ReadReq, storage.Reply, storage.WriteReq)`},
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
			_, err = Prepare(scenario.Test{System: "redis", Clients: 2, Schedule: &s})
			require.Error(t, err)
			// "*" stands for the middle of a long list.
			assert.Regexp(t, "^"+strings.ReplaceAll(regexp.QuoteMeta(tc.want), `\*`, ".*")+"$", err.Error())
		})
	}
}

// TestEveryMessageTypeIsDeclared: every message a system sends, under random
// faults, is of a type its deployment declares, so that a delay's match is
// checked against the true list (a type missing here would be refused in a
// schedule although the system sends it).
func TestEveryMessageTypeIsDeclared(t *testing.T) {
	configs := []scenario.Test{
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
			for _, name := range slices.Sorted(maps.Keys(seen)) {
				assert.True(t, slices.Contains(declared, name), "%s sends %s, which its deployment does not declare", base.System, name)
			}
		})
	}
}

// TestReproCountsAFaultThatDidNotFireAsAMismatch: a scenario whose fault never
// fires shows nothing, whatever its verdicts say.
func TestReproCountsAFaultThatDidNotFireAsAMismatch(t *testing.T) {
	s, err := scenario.Find("baseline-redis")
	require.NoError(t, err)
	v, err := s.FindVariant("")
	require.NoError(t, err)
	v.Test.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "renew", time.Second))
	out, err := Repro(v)
	require.NoError(t, err)
	assert.False(t, out.Match())
	assert.Contains(t, out.Mismatches, "faults[0] (pause) did not fire: its trigger never happened: c1 recorded no renew ok")
}
