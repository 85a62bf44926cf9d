package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

func TestCrosscheckRefusesBadArguments(t *testing.T) {
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"crosscheck"}, "--out: the crosscheck's directory is required"},
		{[]string{"crosscheck", "--out", out, "--system", "chubby"}, "--system chubby: no live form"},
		{[]string{"crosscheck", "--out", out, "--seeds", "0"}, "--seeds 0: want at least 1"},
		{[]string{"crosscheck", "--out", out, "--tries", "0"}, "--tries 0: want at least 1"},
		{[]string{"crosscheck", "--out", out, "--scale", "0"}, "--scale 0: want a factor in (0, 100]"},
		{[]string{"crosscheck", "--out", out, "--storage", "check"}, "--storage check: want unfenced or fenced"},
		{[]string{"crosscheck", "--out", out, "--nemesis", "meteor"}, "--nemesis meteor"},
		{[]string{"crosscheck", "--out", out, "-o", "ttl"}, `--opt "ttl": want key=value`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestCrosscheckRefusesADirectoryOfOtherParameters: a directory is resumed
// only by the crosscheck that wrote it.
func TestCrosscheckRefusesADirectoryOfOtherParameters(t *testing.T) {
	dir := t.TempDir()
	old := crossCheck{Params: crossParams{Systems: []string{"redis"}, Seeds: []uint64{1}, Nemesis: "random", Time: "20s", Scale: 1, Tries: 2}}
	b, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, crossJSON), b, 0o644))
	code, _, stderr := capture(t, "crosscheck", "--system", "redis", "--seeds", "2", "--out", dir)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "holds a crosscheck of other parameters")
}

func verdicts(kv ...string) []crossVerdict {
	var out []crossVerdict
	for i := 0; i < len(kv); i += 2 {
		out = append(out, crossVerdict{Check: kv[i], Result: kv[i+1], Reason: kv[i] + " says " + kv[i+1]})
	}
	return out
}

// TestCrossDisagreementsTellTimingFromPersistence: a check that a later
// live try agrees on is a timing disagreement; one that every try repeats
// is persistent; a check judged in one world only is not compared.
func TestCrossDisagreementsTellTimingFromPersistence(t *testing.T) {
	sim := verdicts("critical-sections", "valid", "lease", "valid", "liveness", "valid", "raft-audit", "valid")
	for _, tc := range []struct {
		name       string
		tries      []crossTry
		want       []string // checks that disagree
		persistent []bool
		cause      []string
		first      map[string]int
		last       map[string]int
	}{
		{name: "agree", tries: []crossTry{{Verdicts: verdicts("critical-sections", "valid", "lease", "valid", "liveness", "valid")}},
			first: map[string]int{"critical-sections": 1, "lease": 1, "liveness": 1}, last: map[string]int{"critical-sections": 1, "lease": 1, "liveness": 1}},
		{name: "timing", tries: []crossTry{
			{Verdicts: verdicts("critical-sections", "invalid", "lease", "valid", "liveness", "valid")},
			{Verdicts: verdicts("critical-sections", "valid", "lease", "valid", "liveness", "valid")}},
			want: []string{"critical-sections"}, persistent: []bool{false}, cause: []string{"timing: live try 2 agreed"},
			first: map[string]int{"critical-sections": 0, "lease": 1, "liveness": 1}, last: map[string]int{"critical-sections": 1, "lease": 1, "liveness": 1}},
		{name: "persistent", tries: []crossTry{
			{Verdicts: verdicts("critical-sections", "valid", "lease", "invalid", "liveness", "valid"), NotFired: "fault 1 (pause) did not fire: never"},
			{Verdicts: verdicts("critical-sections", "valid", "lease", "invalid", "liveness", "valid"), Notes: []string{"a write landed late"}}},
			want: []string{"lease"}, persistent: []bool{true},
			cause: []string{"every one of 2 live tries disagreed; live try 1: fault 1 (pause) did not fire: never; live try 2: a write landed late"},
			first: map[string]int{"critical-sections": 1, "lease": 0, "liveness": 1}, last: map[string]int{"critical-sections": 1, "lease": 0, "liveness": 1}},
		{name: "an error try is not compared", tries: []crossTry{
			{Error: "etcd did not start"},
			{Verdicts: verdicts("critical-sections", "valid", "lease", "valid", "liveness", "invalid")}},
			want: []string{"liveness"}, persistent: []bool{true}, cause: []string{"one live try, it disagreed"},
			first: map[string]int{"critical-sections": 1, "lease": 1, "liveness": 0}, last: map[string]int{"critical-sections": 1, "lease": 1, "liveness": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := crossPair{Seed: 7, SameSchedule: true, Sim: sim, Tries: tc.tries}
			ds := crossDisagreements(pair)
			var got []string
			for i, d := range ds {
				got = append(got, d.Check)
				assert.Equal(t, tc.persistent[i], d.Persistent, d.Check)
				assert.Equal(t, tc.cause[i], d.Cause, d.Check)
				assert.Equal(t, "valid", d.Sim)
				assert.NotEmpty(t, d.LiveReason)
			}
			assert.Equal(t, tc.want, got)
			counts := crossCounts([]crossPair{pair})
			require.Len(t, counts, 3, "raft-audit is judged in the simulator only: %v", counts)
			for _, c := range counts {
				assert.Equal(t, 1, c.Compared, c.Check)
				assert.Equal(t, tc.first[c.Check], c.AgreeFirst, c.Check)
				assert.Equal(t, tc.last[c.Check], c.AgreeLast, c.Check)
			}
		})
	}
}

// TestCrossTableListsEveryDisagreementWithItsCause: crosscheck.md has a row
// per system and check, a skipped system's reason, and each disagreement's
// seed, verdicts and cause.
func TestCrossTableListsEveryDisagreementWithItsCause(t *testing.T) {
	pair := crossPair{Seed: 4, SameSchedule: true, Sim: verdicts("critical-sections", "valid"),
		Tries:      []crossTry{{Verdicts: verdicts("critical-sections", "invalid")}, {Verdicts: verdicts("critical-sections", "valid")}},
		SimCommand: "locklab run --system etcd --seed 4", LiveCommand: "locklab run --live --system etcd --seed 4"}
	pair.Disagreements = crossDisagreements(pair)
	cc := &crossCheck{Params: crossParams{Seeds: []uint64{4}, Nemesis: "random", Time: "20s", Scale: 0.3, Tries: 2},
		Systems: []crossSystem{
			{System: "etcd", Pairs: []crossPair{pair}, Checks: crossCounts([]crossPair{pair})},
			{System: "database", Skipped: "postgres is not installed (Debian package postgresql)"},
		}}
	md := crossTable(cc)
	assert.Contains(t, md, "| etcd | critical-sections | 1 | 0/1 | 1/1 |")
	assert.Contains(t, md, "| database | SKIPPED: postgres is not installed")
	assert.Contains(t, md, "**etcd seed 4, critical-sections** (in some tries): simulated valid, live invalid, valid. Cause: timing: live try 2 agreed.")
	assert.Contains(t, md, "`locklab run --live --system etcd --seed 4`")
}

// TestCrosscheckRunsRedisInBothWorlds runs 2 schedules of redis live
// (scale 0.2) and in the simulator and checks what the directory holds.
func TestCrosscheckRunsRedisInBothWorlds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a live run takes real time")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (Debian package redis-server)")
	}
	dir := filepath.Join(t.TempDir(), "cc")
	code, stdout, stderr := capture(t, "crosscheck", "--system", "redis", "--seeds", "2", "--scale", "0.2", "--tries", "2", "--out", dir)
	require.Equal(t, judge.ExitValid, code, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stdout, "| redis | critical-sections | 2 |")
	assert.Contains(t, stderr, "crosscheck: redis seed 2:")
	b, err := os.ReadFile(filepath.Join(dir, crossJSON))
	require.NoError(t, err)
	var cc crossCheck
	require.NoError(t, json.Unmarshal(b, &cc))
	require.Len(t, cc.Systems, 1)
	require.Len(t, cc.Systems[0].Pairs, 2)
	for _, p := range cc.Systems[0].Pairs {
		assert.True(t, p.SameSchedule, "seed %d: one schedule in both worlds", p.Seed)
		assert.NotEmpty(t, p.Sim)
		require.NotEmpty(t, p.Tries)
		assert.Contains(t, p.SimCommand, "--live-comparable")
		assert.Contains(t, p.LiveCommand, "--scale 0.2")
		if len(p.Disagreements) > 0 {
			assert.DirExists(t, filepath.Join(dir, "runs", "redis-seed"+jsonNumber(p.Seed), "sim"))
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, crossMarkdown))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| redis | critical-sections | 2 |")
	// The same command again keeps the pairs done and runs nothing.
	code, stdout, stderr = capture(t, "crosscheck", "--system", "redis", "--seeds", "2", "--scale", "0.2", "--tries", "2", "--out", dir)
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stderr, "resuming: 2 of 2 seeds done before")
	assert.Contains(t, stdout, "| redis | critical-sections | 2 |")
}

func jsonNumber(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestClientPhasesSayWhereAFaultHitTheClientsCycle: an operation in flight,
// one that returned, or none yet; a server's fault is left out.
func TestClientPhasesSayWhereAFaultHitTheClientsCycle(t *testing.T) {
	ev := []history.Event{
		{Process: 0, Node: "c1", Type: history.Invoke, F: "acquire"},
		{Process: 1, Node: "c2", Type: history.Invoke, F: "write"},
		{Process: 1, Node: "c2", Type: history.OK, F: "write"},
		{Process: -1, Type: history.Start, F: "pause", Targets: []string{"c1", "c2", "c3"}},
		{Process: -1, Type: history.Start, F: "pause", Targets: []string{"db"}},
		{Process: -1, Type: history.Start, F: "crash", Targets: []string{"c1"}},
		{Process: 0, Node: "c1", Type: history.OK, F: "acquire"},
		{Process: -1, Type: history.Start, F: "partition", Targets: []string{"c1"}},
		{Process: -1, Type: history.Start, F: "delay", Targets: []string{"c2", "storage"}},
	}
	assert.Equal(t, []string{"pause c1: in acquire", "pause c2: after write ok", "pause c3: before its first operation",
		"partition c1: after acquire ok", "delay c2: after write ok"}, clientPhases(ev))
	pair := crossPair{Sim: verdicts("lease", "valid"), SimPhases: []string{"pause c1: after release ok"}, SameSchedule: true,
		Tries: []crossTry{{Verdicts: verdicts("lease", "invalid"), Phases: []string{"pause c1: in acquire"}}}}
	assert.Equal(t, "one live try, it disagreed; the pause c1: simulated after release ok, live try 1 in acquire",
		crossDisagreements(pair)[0].Cause)
}

// TestMissedLiveNamesOnlyAFaultTheSimulatorFired: a fault that fired in
// neither world does not count as missed live.
func TestMissedLiveNamesOnlyAFaultTheSimulatorFired(t *testing.T) {
	out := func(fired ...bool) scenario.Result {
		var r scenario.Result
		for i, f := range fired {
			r.FaultOutcomes = append(r.FaultOutcomes, nemesis.Outcome{Fault: i, Kind: nemesis.Pause, Fired: f, DidNotFire: map[bool]string{false: "no leader"}[f]})
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		sim, live scenario.Result
		want      string
	}{
		{"every fault fired", out(true, true), out(true, true), ""},
		{"fired in neither world", out(true, false), out(true, false), ""},
		{"fired simulated, not live", out(true, true), out(true, false), "fault 1 (pause) did not fire: no leader"},
		{"fired live only", out(false, true), out(true, true), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, missedLive(tc.sim, tc.live))
		})
	}
}
