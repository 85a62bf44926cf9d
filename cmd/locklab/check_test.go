package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/reports"
)

func TestCheckJudgesAHandWrittenHistory(t *testing.T) {
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "orders=100")
	assert.Equal(t, harness.ExitInvalid, code, stdout)
	for _, want := range []string{
		`critical-sections  INVALID  the critical sections on "orders" are not atomic: lost update (app-1 and app-2 both read 100 and both wrote)`,
		"First:  app-1 read 100 at 0.004s (token 33), wrote 101 at 15.001s: write applied.",
		"during fault: #4 0.005s p-1 start pause targets=[app-1] (stop-the-world GC)",
		"critical-sections counterexample (10 events):",
		"#14 15.001s p0 app-1 invoke write key=orders token=33 value=101",
		"lease              VALID",
		"skipped fencing-tokens: the storage does not fence",
	} {
		assert.Contains(t, stdout, want)
	}
}

// Each counterexample's header counts the lines printed under it (its
// operations' events and the faults around them), and a count of one is "1
// event".
func TestCheckCounterexampleHeadersCountWhatFollows(t *testing.T) {
	_, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "orders=100")
	headers := regexp.MustCompile(`(?m)^(\S+) counterexample \((\d+) events?\):$`).FindAllStringSubmatchIndex(stdout, -1)
	require.Len(t, headers, 2, stdout)
	for _, h := range headers {
		want, err := strconv.Atoi(stdout[h[4]:h[5]])
		require.NoError(t, err)
		got := 0
		for _, line := range strings.Split(stdout[h[1]+1:], "\n") {
			if !strings.HasPrefix(line, "  #") {
				break
			}
			got++
		}
		assert.Equal(t, want, got, "%s counterexample", stdout[h[2]:h[3]])
	}
	assert.Contains(t, stdout, "testdata/gc-pause.jsonl: 18 events")
	assert.NotRegexp(t, `\b1 (events|keys|grants)\b`, stdout)
}

// A recorder may give key and owner on the invocations only: a sequential
// history is then valid everywhere, and an operation whose completion names
// another owner than its invocation is rejected with the file and line.
func TestCheckReadsKeyAndOwnerFromEitherEvent(t *testing.T) {
	code, stdout, stderr := capture(t, "check", "testdata/fields-on-invocations.jsonl", "--initial", "k=0")
	assert.Equal(t, harness.ExitValid, code, stdout+stderr)
	for _, check := range []string{"critical-sections", "mutual-exclusion", "lease", "liveness"} {
		assert.Regexp(t, check+` +VALID`, stdout)
	}
	code, _, stderr = capture(t, "check", "testdata/owner-mismatch.jsonl")
	assert.Equal(t, harness.ExitUsage, code)
	assert.Contains(t, stderr, `testdata/owner-mismatch.jsonl:3: owner "c1-2" of the completion differs from owner "c1-1" of its invoke (event 0)`)
}

func TestCheckWithFencedStorageJudgesTheTokens(t *testing.T) {
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--storage", "fenced", "--checks", "fencing-tokens")
	assert.Equal(t, harness.ExitInvalid, code, stdout)
	assert.Contains(t, stdout, "the storage accepted token 33 after token 34")
}

func TestCheckWritesARunDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "*=100", "--out", out)
	require.Equal(t, harness.ExitInvalid, code, stdout)
	b, err := os.ReadFile(filepath.Join(out, reports.ResultsFile))
	require.NoError(t, err)
	var res reports.Results
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, harness.ExitInvalid, res.ExitCode)
	assert.Equal(t, "porcupine-critical-sections.html", res.Files["porcupine:critical-sections"])
	assert.FileExists(t, filepath.Join(out, "porcupine-critical-sections.html"))
	assert.Contains(t, string(b), `"skipped"`)
	assert.Contains(t, res.Command, "locklab check testdata/gc-pause.jsonl")
}

func TestCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	valid := write("valid.jsonl", `{"time":0,"process":0,"node":"a","type":"invoke","f":"acquire","key":"k"}
{"time":1,"process":0,"node":"a","type":"ok","f":"acquire","key":"k","owner":"a1"}
{"time":2,"process":0,"node":"a","type":"invoke","f":"release","key":"k","owner":"a1"}
{"time":3,"process":0,"node":"a","type":"ok","f":"release","key":"k","owner":"a1"}
`)
	empty := write("empty.jsonl", "")
	stalled := write("stalled.jsonl", `{"time":0,"process":0,"node":"a","type":"invoke","f":"acquire","key":"k"}
{"time":20000000000,"process":0,"node":"a","type":"fail","f":"acquire","key":"k"}
`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"valid", []string{"check", valid}, harness.ExitValid, "overall: VALID (exit 0)", ""},
		{"nothing applies", []string{"check", empty}, harness.ExitUnknown, "no check applies", ""},
		{"named check that cannot decide", []string{"check", valid, "--checks", "critical-sections"}, harness.ExitUnknown, "no critical sections", ""},
		{"liveness failure", []string{"check", stalled}, harness.ExitUnknown, "clients waited 20s", ""},
		{"malformed line", []string{"check", "testdata/malformed.jsonl"}, harness.ExitUsage, "", "testdata/malformed.jsonl:4: time 1000000 is earlier"},
		{"missing file", []string{"check", filepath.Join(dir, "nope.jsonl")}, harness.ExitUsage, "", "no such file"},
		{"unknown check", []string{"check", valid, "--checks", "vibes"}, harness.ExitUsage, "", `unknown check "vibes"`},
		{"bad initial", []string{"check", valid, "--initial", "k"}, harness.ExitUsage, "", `--initial "k": want key=value`},
		{"bad option", []string{"check", valid, "-o", "stall=-1s"}, harness.ExitUsage, "", `check option stall="-1s": must be positive`},
		{"no file", []string{"check"}, harness.ExitUsage, "", "accepts 1 arg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := capture(t, tc.args...)
			assert.Equal(t, tc.code, code, stdout+stderr)
			assert.Contains(t, stdout, tc.stdout)
			assert.Contains(t, stderr, tc.stderr)
		})
	}
}
