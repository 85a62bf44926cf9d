package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

// validHistory is a sequential history every check that applies finds valid.
const validHistory = `{"time":0,"process":0,"node":"a","type":"invoke","f":"acquire","key":"k"}
{"time":1,"process":0,"node":"a","type":"ok","f":"acquire","key":"k","owner":"a1"}
{"time":2,"process":0,"node":"a","type":"invoke","f":"release","key":"k","owner":"a1"}
{"time":3,"process":0,"node":"a","type":"ok","f":"release","key":"k","owner":"a1"}
`

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// A value the user typed is used or refused, naming the flag; it is never
// replaced by a default or silently ignored (issue 10, item 6).
func TestTypedValuesAreUsedOrRefused(t *testing.T) {
	dir := t.TempDir()
	sched := writeFile(t, dir, "s.json", `{"faults": []}`)
	hist := writeFile(t, dir, "h.jsonl", validHistory)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--time", "0"}, "--time 0s: the simulated duration must be positive"},
		{[]string{"run", "--time", "-5s"}, "--time -5s: the simulated duration must be positive"},
		{[]string{"run", "--clients", "0"}, "--clients 0: want 1 to 1000 clients"},
		{[]string{"run", "--clients", "1001"}, "--clients 1001: want 1 to 1000 clients"},
		{[]string{"run", "--check-budget", "-1s"}, "--check-budget -1s: want a positive duration, or 0 for no wall-clock bound"},
		{[]string{"run", "--check-steps", "-5"}, "--check-steps -5: want a positive number of steps, or -1 for no bound"},
		{[]string{"run", "--check-steps", "0"}, "--check-steps 0: want a positive number of steps"},
		{[]string{"run", "--nemesis", "pause", "--nemesis-file", sched}, "--nemesis and --nemesis-file exclude each other"},
		{[]string{"run", "--nemesis-file", sched, "--nemesis", "none"}, "--nemesis and --nemesis-file exclude each other"},
		{[]string{"run", "--system", ""}, "--system is empty"},
		{[]string{"run", "--out", ""}, "--out is empty"},
		{[]string{"run", "--checks", ""}, "--checks is empty"},
		{[]string{"run", "--checks", "lease,,liveness"}, `--checks "lease,,liveness": an empty check name`},
		{[]string{"run", "-o", "ttl=1s", "-o", "ttl=2s"}, "--opt ttl is given twice (ttl=1s and ttl=2s)"},
		{[]string{"run", "-w", "hold=1s", "-w", "hold=2s"}, "--workload-opt hold is given twice"},
		{[]string{"run", "--fence-reads"}, "--fence-reads needs --storage fenced"},
		{[]string{"check", hist, "--check-steps", "-5"}, "--check-steps -5: want a positive number of steps"},
		{[]string{"check", hist, "--check-budget", "-1s"}, "--check-budget -1s: want a positive duration"},
		{[]string{"check", hist, "-o", "steps=-5"}, "-o steps=-5: want a positive number of steps"},
		{[]string{"check", hist, "-o", "time=-1s"}, "-o time=-1s: want a positive duration"},
		{[]string{"check", hist, "--check-steps", "5", "-o", "steps=7"}, "-o steps=7 and --check-steps both set it"},
		{[]string{"check", hist, "--storage", "unfenced", "-o", "storage=fenced"}, "-o storage=fenced and --storage both set it"},
		{[]string{"check", hist, "--fence-reads"}, "--fence-reads needs --storage fenced"},
		{[]string{"report", dir, "--screenshot-height", "0"}, "--screenshot-height applies to --screenshot"},
		{[]string{"report", dir, "--screenshot", "--screenshot-height", "0"}, "--screenshot-height 0: want a positive number of pixels"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code, stdout+stderr)
			assert.Contains(t, stderr, "locklab: "+tc.want)
			assert.Empty(t, stdout, "refused before anything ran")
		})
	}

	// A typed zero that means something is used: --check-budget 0 is no bound.
	out := filepath.Join(dir, "unbounded")
	code, stdout, stderr := capture(t, "run", "--seed", "1", "--time", "2s", "--check-budget", "0", "--check-steps", "-1", "--out", out)
	require.Equal(t, judge.ExitValid, code, stdout+stderr)
	cfg := resultsConfig(t, out)
	assert.Equal(t, "unbounded", cfg["check_budget"])
	assert.EqualValues(t, -1, cfg["check_steps"])
	assert.Contains(t, stdout, "--check-budget 0 --check-steps -1 --out", "the replay command keeps them")
}

// resultsConfig reads the configuration results.json recorded.
func resultsConfig(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Config map[string]any `json:"config"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	return res.Config
}

// --out never overwrites what locklab did not write, and a rerun into a run
// directory replaces it whole: no Porcupine page of an earlier invalid run
// survives beside a valid one (item 7).
func TestOutReplacesOnlyRunDirectories(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine")
	require.NoError(t, os.Mkdir(mine, 0o755))
	writeFile(t, mine, "thesis.tex", "years of work")
	code, stdout, stderr := capture(t, "run", "--seed", "1", "--time", "2s", "--out", mine)
	assert.Equal(t, judge.ExitUsage, code, stdout)
	assert.Contains(t, stderr, "locklab: cannot write the run directory "+mine+": it is not empty and not a locklab run directory (it holds thesis.tex)")
	assert.Empty(t, stdout, "refused before the run")
	entries, _ := os.ReadDir(mine)
	assert.Len(t, entries, 1)

	run := filepath.Join(dir, "run")
	code, stdout, _ = capture(t, "run", "--nemesis", "pause", "--seed", "7", "--time", "60s", "--out", run)
	require.Equal(t, judge.ExitInvalid, code, stdout)
	require.FileExists(t, filepath.Join(run, "porcupine-critical-sections.html"))
	code, stdout, _ = capture(t, "run", "--seed", "7", "--time", "5s", "--out", run)
	require.Equal(t, judge.ExitValid, code, stdout)
	assert.NoFileExists(t, filepath.Join(run, "porcupine-critical-sections.html"), "nothing of the earlier run survives")
	assert.NotContains(t, string(must(os.ReadFile(filepath.Join(run, reports.ResultsFile)))), "porcupine")

	// check --out follows the same rules.
	hist := writeFile(t, dir, "h.jsonl", validHistory)
	code, _, stderr = capture(t, "check", hist, "--out", mine)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "cannot write the run directory "+mine)
	code, stdout, _ = capture(t, "check", hist, "--out", run)
	require.Equal(t, judge.ExitValid, code, stdout)
	assert.NoFileExists(t, filepath.Join(run, reports.ScheduleFile), "the run's schedule went with the run")
	siblings, _ := os.ReadDir(dir)
	var names []string
	for _, e := range siblings {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"mine", "run", "h.jsonl"}, names, "no temporary directory left beside")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// User errors exit 2 with one plain message that points at the
// subcommand's help; Go's internals do not show (item 8).
func TestUserErrorsArePlainAndExitTwo(t *testing.T) {
	dir := t.TempDir()
	afile := writeFile(t, dir, "afile", "x")
	adir := filepath.Join(dir, "adir")
	require.NoError(t, os.Mkdir(adir, 0o755))
	hist := writeFile(t, dir, "h.jsonl", validHistory)
	tests := []struct {
		args []string
		want string
		help string
	}{
		{[]string{"check", adir}, "locklab: read history: " + adir + " is a directory, not a history file\n", "locklab check"},
		{[]string{"run", "--time", "1s", "--out", afile}, "locklab: cannot write the run directory " + afile + ": it is a file, not a directory\n", "locklab run"},
		{[]string{"run", "--time", "1s", "--out", filepath.Join(afile, "sub")}, "cannot write the run directory " + filepath.Join(afile, "sub") + ": " + afile + ": not a directory\n", "locklab run"},
		{[]string{"check", hist, "--out", afile}, "cannot write the run directory " + afile + ": it is a file", "locklab check"},
		{[]string{"run", "--seed", "abc"}, `locklab: --seed "abc": want a whole number ≥ 0`, "locklab run"},
		{[]string{"run", "--time", "5"}, `locklab: --time "5": want a duration such as 30s, 1m30s or 200ms`, "locklab run"},
		{[]string{"run", "--clients", "99999999999999999999"}, `locklab: --clients "99999999999999999999": out of range`, "locklab run"},
		{[]string{"run", "-o", "watchdog=maybe"}, `redis option watchdog="maybe": want true or false`, "locklab run"},
		{[]string{"run", "-o", "ttl=forever"}, `redis option ttl="forever": not a duration (write it like 250ms, 10s or 1m30s)`, "locklab run"},
		{[]string{"run", "-w", "keys=x"}, `fenced-counter option keys="x": not an integer`, "locklab run"},
		{[]string{"check", hist, "-o", "steps=abc"}, `check option steps="abc": not a whole number`, "locklab check"},
		{[]string{"check", hist, "-o", "min-success=x"}, `check option min-success="x": want a share between 0 and 1 or a percentage`, "locklab check"},
		{[]string{"check", writeFile(t, dir, "array.jsonl", "[1,2]\n")}, "array.jsonl:1: not a JSON event: want an object, got an array", "locklab check"},
		{[]string{"check", writeFile(t, dir, "type.jsonl", `{"time":1,"process":0,"type":5,"f":"acquire"}`+"\n")}, `type.jsonl:1: field "type": want a string, got a number`, "locklab check"},
		{[]string{"report", afile}, "is a file, not a run directory", "locklab report"},
		{[]string{"run", "--system", "kubernetes", "-o", "leaseduration=5s"}, `kubernetes has no option "leaseduration" — did you mean "lease-duration"?`, "locklab run"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, "locklab"},
		{[]string{"scenarios", "extra"}, `unknown command "extra" for "locklab scenarios"`, "locklab scenarios"},
	}
	runDir := filepath.Join(dir, "run")
	require.NoError(t, os.Mkdir(runDir, 0o755))
	writeFile(t, runDir, reports.HistoryFile, validHistory)
	tests = append(tests, struct {
		args []string
		want string
		help string
	}{[]string{"check", runDir}, runDir + " is a directory, not a history file (the run directory's history is " +
		filepath.Join(runDir, reports.HistoryFile) + ")", "locklab check"})
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code, stdout+stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Contains(t, stderr, "See '"+tc.help+" --help'.")
			for _, leak := range []string{"strconv.", "interface {}", "time: ", "int64", "history.Type", "json:"} {
				assert.NotContains(t, stderr, leak)
			}
			if first, _, ok := strings.Cut(strings.TrimPrefix(stderr, "locklab: "), ": "); ok {
				assert.Equal(t, 1, strings.Count(stderr, first+": "), "the message says its prefix once: %s", stderr)
			}
		})
	}
}

// Every check docs/checks-and-history.md lists is accepted: raft-audit in a raftkv run; a
// check that does not apply says where it does (item 9).
func TestRaftAuditCanBeNamed(t *testing.T) {
	dir := t.TempDir()
	for _, checks := range []string{"+raft-audit", "raft-audit", "lease,raft-audit"} {
		code, stdout, stderr := capture(t, "run", "--system", "raftkv", "--storage", "fenced", "--checks", checks, "--seed", "1",
			"--time", "3s", "--out", filepath.Join(dir, checks))
		assert.Equal(t, judge.ExitValid, code, stdout+stderr)
		assert.Regexp(t, `raft-audit +VALID`, stdout)
	}
	code, _, stderr := capture(t, "run", "--system", "redis", "--checks", "+raft-audit")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `check "raft-audit" audits the servers of raftkv; system redis has no such servers`)
	code, _, stderr = capture(t, "check", writeFile(t, dir, "h.jsonl", validHistory), "--checks", "raft-audit")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `check "raft-audit" audits the servers of a simulated run, not a history: it runs in 'locklab run --system raftkv'`)
}

// A history check reads can always be written back by check --out: reader
// and writer share the line limit (item 12).
func TestCheckWritesBackEveryHistoryItAccepts(t *testing.T) {
	dir := t.TempDir()
	head := `{"index":0,"time":0,"process":-1,"type":"start","f":"pause","detail":"`
	line := head + strings.Repeat("x", history.MaxLineBytes-len(head)-2) + `"}`
	require.Len(t, line, history.MaxLineBytes)
	big := writeFile(t, dir, "big.jsonl", `{"format":"locklab-history","version":1}`+"\n"+line+"\n")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := capture(t, "check", big, "--out", out)
	assert.Equal(t, judge.ExitUnknown, code, stdout+stderr) // nothing to judge: the history holds one fault
	assert.Contains(t, stdout, "no check applies")
	assert.Equal(t, string(must(os.ReadFile(big))), string(must(os.ReadFile(filepath.Join(out, reports.HistoryFile)))),
		"written back byte for byte")

	// The line: 1,048,570 bytes without an index is accepted by the
	// old reader and grows past the limit when written; it is refused with its line.
	noIndex := `{"time":0,"process":-1,"type":"start","f":"pause","detail":"`
	grown := writeFile(t, dir, "grown.jsonl", noIndex+strings.Repeat("x", 1_048_570-len(noIndex)-2)+`"}`+"\n")
	code, _, stderr = capture(t, "check", grown, "--out", filepath.Join(dir, "out2"))
	assert.Equal(t, judge.ExitUsage, code, stderr)
	assert.Contains(t, stderr, "grown.jsonl:1: the event takes 1048580 bytes when written back")
	bad := writeFile(t, dir, "utf8.jsonl", `{"time":0,"process":-1,"type":"start","f":"pause","detail":"`+"\xff"+`"}`+"\n")
	code, _, stderr = capture(t, "check", bad)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "utf8.jsonl:1: not valid UTF-8")
}

// results.json records the effective configuration and summary.txt all that
// run printed, first lines included; a repro run records its schedule (item 13).
func TestRunRecordsWhatItRanAndPrinted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r")
	code, stdout, _ := capture(t, "run", "--seed", "3", "--time", "2s", "-o", "ttl=5s", "--out", out)
	require.Equal(t, judge.ExitValid, code, stdout)
	assert.Equal(t, stdout, string(must(os.ReadFile(filepath.Join(out, reports.SummaryFile)))), "summary.txt is what was printed")
	assert.True(t, strings.HasPrefix(stdout, "seed 3: locklab run "))
	assert.Contains(t, stdout, "\nsimulated 2s in ")
	cfg := resultsConfig(t, out)
	sys := cfg["system_options"].(map[string]any)
	assert.Equal(t, "5s", sys["ttl"])
	assert.Equal(t, "lua", sys["release"], "defaults are recorded too")
	assert.Equal(t, "100ms", cfg["workload_options"].(map[string]any)["hold"])
	for k, want := range map[string]any{"time": "2s", "clients": 5.0, "seed": 3.0, "storage": "unfenced", "nemesis": "none",
		"check_budget": "1m0s", "check_steps": 2e6} {
		assert.Equal(t, want, cfg[k], k)
	}

	code, stdout, _ = capture(t, "repro", "redis-del-unlock", "--variant", "unsafe", "--out", dir)
	require.Equal(t, judge.ExitValid, code, stdout)
	cfg = resultsConfig(t, filepath.Join(dir, "redis-del-unlock", "unsafe"))
	assert.Equal(t, "schedule", cfg["nemesis"])
	assert.NotEmpty(t, cfg["schedule"].(map[string]any)["faults"])

	hist := writeFile(t, dir, "h.jsonl", validHistory)
	code, stdout, _ = capture(t, "check", hist, "--out", filepath.Join(dir, "c"))
	require.Equal(t, judge.ExitValid, code, stdout)
	assert.Equal(t, stdout, string(must(os.ReadFile(filepath.Join(dir, "c", reports.SummaryFile)))))
	cfg = resultsConfig(t, filepath.Join(dir, "c"))
	assert.EqualValues(t, 2e6, cfg["check_steps"])
	assert.Equal(t, []any{"default"}, cfg["checks"])
}
