package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

// TestRunRejectsScheduleMistakes: a schedule with a mistake is refused before
// the run (exit 2) with the file, the line, the fault index and the field,
// and the valid choices where there is a list of them. A trigger on a
// misspelt function or event type, or a delay matching no message type of the
// system, would otherwise run with the fault silently off.
func TestRunRejectsScheduleMistakes(t *testing.T) {
	tests := []struct{ file, want string }{
		{"trigger-function-typo.json", `:3: faults[0] (pause): field "after.f": unknown function "aquire" (want one of acquire, release, renew, read, write, append)`},
		{"trigger-type-uppercase.json", `:3: faults[0] (pause): field "after.type": unknown event type "OK" (want one of invoke, ok, fail, info; default ok)`},
		{"match-no-message-type.json", `:4: faults[1] (delay): field "match": "storage.WriteRequest" is not a message type of this system (want one of redis.Del, `},
		{"unknown-node.json", `:3: faults[0] (partition): field "targets": unknown node "redis-a" (known: redis, storage, c1, c2, clients, servers`},
		{"trigger-on-a-server.json", `:3: faults[0] (pause): field "after.node": "redis" is not a client: a trigger follows the operations of a client (c1, c2)`},
		{"empty.json", `:1: empty file: a schedule is a JSON object such as {"faults": [`},
		{"unknown-field.json", `:3: faults[0] (pause): unknown field "colour" (a fault has kind, at, after, until, duration, targets,`},
		{"bad-duration.json", `:3: faults[0] (pause): field "duration": bad duration "5 seconds" (use a Go duration such as "1.5s" or "200ms")`},
		{"field-of-another-kind.json", `:3: faults[0] (pause): field "match": a pause takes no "match" (it takes targets, and kind, at, after, until, duration)`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			file := filepath.Join("testdata", "schedules", tc.file)
			out := filepath.Join(t.TempDir(), "r")
			code, stdout, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--time", "5s", "--seed", "1",
				"--nemesis-file", file, "--out", out)
			assert.Equal(t, judge.ExitUsage, code, stdout)
			assert.Contains(t, stderr, "locklab: "+file+tc.want)
			assert.Equal(t, 1, strings.Count(stderr, file), "the file is named once")
			assert.NoDirExists(t, out, "nothing ran")
		})
	}
}

// TestRunReportsFaultsThatDidNotFire: a valid schedule whose faults never
// fire (one due after --time, one on a function the workload never records)
// runs, and the summary, summary.txt, results.json and report.html all say
// "did not fire", with a warning before the verdicts.
func TestRunReportsFaultsThatDidNotFire(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, stdout, stderr := capture(t, "run", "--system", "redis", "--clients", "2", "--time", "30s", "--seed", "1",
		"--nemesis-file", filepath.Join("testdata", "schedules", "never-fires.json"), "--out", dir)
	require.Equal(t, judge.ExitValid, code, stderr)
	for _, want := range []string{
		"did not fire: 2 of 2 scheduled faults\n",
		"  fault 1 (pause c1): it was due at 1m30s, after the run ended at 30s\n",
		"  fault 2 (pause c1): its trigger never happened: c1 recorded no renew ok\n",
		"WARNING: 2 faults scheduled, none fired (1 due after the run ended, 1 waiting for a trigger that did not come in time), " +
			"so the verdicts judge a run without faults\n",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.Less(t, strings.Index(stdout, "WARNING"), strings.Index(stdout, "history: "), "the warning comes first")

	summary, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "WARNING: 2 faults scheduled, none fired")
	assert.Contains(t, string(summary), "fault 2 (pause c1): its trigger never happened")

	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var results struct {
		FaultOutcomes []reports.FaultOutcome `json:"fault_outcomes"`
		Warnings      []string               `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal(b, &results))
	assert.Equal(t, []reports.FaultOutcome{
		{Fault: 0, Kind: "pause", DidNotFire: "it was due at 1m30s, after the run ended at 30s"},
		{Fault: 1, Kind: "pause", DidNotFire: "its trigger never happened: c1 recorded no renew ok"},
	}, results.FaultOutcomes)
	assert.Len(t, results.Warnings, 1)

	page, err := os.ReadFile(filepath.Join(dir, reports.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<b>&#9888; No fault fired</b><span>2 faults scheduled, none fired`)
	assert.Contains(t, string(page), "did not fire: its trigger never happened: c1 recorded no renew ok")

	// The report rebuilt from the run directory says the same.
	code, _, stderr = capture(t, "report", dir)
	require.Equal(t, judge.ExitValid, code, stderr)
	again, err := os.ReadFile(filepath.Join(dir, reports.ReportFile))
	require.NoError(t, err)
	assert.Equal(t, string(page), string(again))
}
