package cli

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

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

func TestCheckJudgesAHandWrittenHistory(t *testing.T) {
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "orders=100")
	assert.Equal(t, scenario.ExitInvalid, code, stdout)
	for _, want := range []string{
		`critical-sections  INVALID  the critical sections on "orders" are not atomic: lost update (app-1 and app-2 both read 100 and both wrote)`,
		"First:  app-1 read 100 at 0.004s (token 33), wrote 101 at 15.001s: write applied.",
		"During the pause of app-1 from 0.005s to 15.000s (14.995s): stop-the-world GC.",
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
	assert.Equal(t, scenario.ExitValid, code, stdout+stderr)
	for _, check := range []string{"critical-sections", "mutual-exclusion", "lease", "liveness"} {
		assert.Regexp(t, check+` +VALID`, stdout)
	}
	code, _, stderr = capture(t, "check", "testdata/owner-mismatch.jsonl")
	assert.Equal(t, scenario.ExitUsage, code)
	assert.Contains(t, stderr, `testdata/owner-mismatch.jsonl:3: owner "c1-2" of the completion differs from owner "c1-1" of its invoke (event 0)`)
}

func TestCheckWithFencedStorageJudgesTheTokens(t *testing.T) {
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--storage", "fenced", "--checks", "fencing-tokens")
	assert.Equal(t, scenario.ExitInvalid, code, stdout)
	assert.Contains(t, stdout, "the storage accepted token 33 after token 34")
}

func TestCheckWritesARunDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "*=100", "--out", out)
	require.Equal(t, scenario.ExitInvalid, code, stdout)
	b, err := os.ReadFile(filepath.Join(out, reports.ResultsFile))
	require.NoError(t, err)
	var res reports.Results
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, scenario.ExitInvalid, res.ExitCode)
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
		{"valid", []string{"check", valid}, scenario.ExitValid, "overall: VALID (exit 0)", ""},
		{"nothing applies", []string{"check", empty}, scenario.ExitUnknown, "no check applies", ""},
		{"named check that cannot decide", []string{"check", valid, "--checks", "critical-sections"}, scenario.ExitUnknown, "no critical sections", ""},
		{"liveness failure", []string{"check", stalled}, scenario.ExitUnknown, "clients waited 20s", ""},
		{"malformed line", []string{"check", "testdata/malformed.jsonl"}, scenario.ExitUsage, "", "testdata/malformed.jsonl:4: time 1000000 is earlier"},
		{"missing file", []string{"check", filepath.Join(dir, "nope.jsonl")}, scenario.ExitUsage, "", "no such file"},
		{"unknown check", []string{"check", valid, "--checks", "vibes"}, scenario.ExitUsage, "", `unknown check "vibes"`},
		{"bad initial", []string{"check", valid, "--initial", "k"}, scenario.ExitUsage, "", `--initial "k": want key=value`},
		{"bad option", []string{"check", valid, "-o", "stall=-1s"}, scenario.ExitUsage, "", `check option stall="-1s": must be positive`},
		{"no file", []string{"check"}, scenario.ExitUsage, "", "locklab: check needs a history file: the history.jsonl of a run directory " +
			"(locklab check runs/latest/history.jsonl), one of your own in the same format, or a Jepsen history.edn with --format jepsen\n"},
		{"two files", []string{"check", "a.jsonl", "b.jsonl"}, scenario.ExitUsage, "", "locklab: check reads one history file, got 2: a.jsonl b.jsonl\n"},
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

// Histories of Jepsen's lock tests, hand-written in the format of their
// history.edn, judged by check --format jepsen.
func TestCheckJudgesJepsenLockHistories(t *testing.T) {
	tests := []struct {
		file string
		code int
		want []string
	}{
		{"lock-valid.edn", scenario.ExitValid, []string{
			"read as a Jepsen history: 12 operations, 0 faults",
			"mutual-exclusion   VALID    3 holdings",
			"mutex              VALID    3 grants on 1 key behave as a mutex",
			"overall: VALID (exit 0)",
			"skipped lease: the lock grants no leases",
		}},
		{"lock-double-grant.edn", scenario.ExitInvalid, []string{
			"read as a Jepsen history: 12 operations, 1 fault",
			"faults: 1 partition",
			"mutual-exclusion   INVALID  1 overlap",
			`p0 held "lock" from 0.020s until its release at 2.000s; p1 held "lock" from 1.200s until its release at 2.100s.`,
			`During the partition from 0.500s to 3.010s (2.51s): :start-partition :majority -> [:isolated {"n1" #{"n3" "n4" "n5"} "n2" #{"n3" "n4" "n5"}}].`,
			"mutex              INVALID  the lock service broke the mutex model on \"lock\": p1 was granted the lock while p0 held it",
			"overall: INVALID (exit 1)",
		}},
		{"lock-info.edn", scenario.ExitValid, []string{
			"read as a Jepsen history: 10 operations, 0 faults",
			"acquire      2 ok     0 fail     1 info",
			"mutual-exclusion   VALID    2 holdings",
			"overall: VALID (exit 0)",
		}},
		{"lock-lease.edn", scenario.ExitValid, []string{
			"fencing-tokens runs: the grants carry tokens",
			"faults: 1 pause",
			"lease              VALID    2 grants on 1 key behave as a lease lock",
			"fencing-tokens     VALID    2 grants: tokens increase with every grant",
			"skipped mutex: the lock grants leases",
			"overall: VALID (exit 0)",
		}},
		{"lock-stale-token.edn", scenario.ExitInvalid, []string{
			"fencing-tokens     INVALID  fencing tokens on \"lock\": token went backwards: 6 after 7",
			"During the pause of n1 from 0.100s to 2.210s (2.11s): :pause :primaries -> {\"n1\" :paused}.",
			"overall: INVALID (exit 1)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			code, stdout, stderr := capture(t, "check", "--format", "jepsen", filepath.Join("testdata", "jepsen", tc.file))
			assert.Equal(t, tc.code, code, stdout+stderr)
			for _, want := range tc.want {
				assert.Contains(t, stdout, want)
			}
		})
	}
}

// What the mapping leaves out is said, and a history with nothing the checks
// can judge is judged by none: exit 3, never valid.
func TestCheckSaysWhatAJepsenHistoryLeftOut(t *testing.T) {
	p := filepath.Join(t.TempDir(), "set.edn")
	require.NoError(t, os.WriteFile(p, []byte(`{:type :invoke, :f :add, :value 1, :time 10, :process 0}
{:type :ok, :f :add, :value 1, :time 20, :process 0, :debug {:lock "foo"}}
{:type :info, :f :stop, :time 30, :process :nemesis}
`), 0o644))
	code, stdout, stderr := capture(t, "check", "--format", "jepsen", p)
	assert.Equal(t, scenario.ExitUnknown, code, stdout+stderr)
	assert.Contains(t, stdout, "read as a Jepsen history: 3 operations, 0 faults\n")
	assert.Contains(t, stdout, "left out: 1 × nemesis :f :stop with no nemesis fault under way, 1 × op :f :add\n")
	assert.Contains(t, stdout, "no check applies to this history: nothing was judged (exit 3)")
}

func TestCheckRefusesMalformedJepsenHistoriesNamingLineAndField(t *testing.T) {
	dir := t.TempDir()
	const acquire = "{:type :invoke, :f :acquire, :value nil, :time 10, :process 0, :index 0}\n"
	tests := []struct {
		name, body, want string
	}{
		{"missing time", acquire + "{:type :ok, :f :acquire, :value nil, :process 0, :index 1}\n", "h.edn:2: missing field :time"},
		{"time goes back", acquire + "{:type :ok, :f :acquire, :time 9, :process 0}\n", "h.edn:2: field :time 9 is earlier than the 10 of line 1"},
		{"a process a keyword", "{:type :invoke, :f :acquire, :time 1, :process :c1}\n", "h.edn:1: field :process :c1: want a client's number (0, 1, ...) or :nemesis"},
		{"lease in seconds", "{:type :invoke, :f :acquire, :time 1, :process 0, :ttl 10}\n", `h.edn:1: field :ttl 10: a lease of 10ns? :ttl is in nanoseconds`},
		{"not EDN", acquire + "{:type :ok, :f :acquire, :time 11, :process 0, :error \"\\q\"}\n", "h.edn:2: field :error: not valid EDN"},
		{"a JSON history", `{"time":0,"process":0,"type":"invoke","f":"acquire"}` + "\n", "h.edn:1: not valid EDN"},
		{"a JSON history, said so", `{"time":0,"process":0,"type":"invoke","f":"acquire"}` + "\n", "(JSON, not EDN: a history in the locklab format is read without --format jepsen)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "h.edn")
			require.NoError(t, os.WriteFile(p, []byte(tc.body), 0o644))
			code, stdout, stderr := capture(t, "check", "--format", "jepsen", p)
			assert.Equal(t, scenario.ExitUsage, code, stdout+stderr)
			assert.Contains(t, stderr, strings.ReplaceAll(tc.want, "h.edn", p))
		})
	}
}

func TestCheckFormatFlag(t *testing.T) {
	code, _, stderr := capture(t, "check", "--format", "knossos", "testdata/gc-pause.jsonl")
	assert.Equal(t, scenario.ExitUsage, code)
	assert.Contains(t, stderr, `--format "knossos": want locklab or jepsen`)

	code, _, stderr = capture(t, "check", "testdata/jepsen/lock-valid.edn")
	assert.Equal(t, scenario.ExitUsage, code)
	assert.Contains(t, stderr, "testdata/jepsen/lock-valid.edn:1: not a JSON event")
	assert.Contains(t, stderr, "(a Jepsen history? add --format jepsen)")

	code, _, stderr = capture(t, "check", "--format", "jepsen", "testdata/jepsen")
	assert.Equal(t, scenario.ExitUsage, code)
	assert.Contains(t, stderr, "is a directory")
}

// A Jepsen history checked with --out leaves a run directory like any other:
// the history in the locklab format, the command that repeats the check.
func TestCheckWritesTheRunDirectoryOfAJepsenHistory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, _ := capture(t, "check", "--format", "jepsen", "testdata/jepsen/lock-double-grant.edn", "--out", out)
	require.Equal(t, scenario.ExitInvalid, code, stdout)
	b, err := os.ReadFile(filepath.Join(out, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Command string `json:"command"`
		Config  struct {
			Format string `json:"format"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, "locklab check testdata/jepsen/lock-double-grant.edn --storage unfenced --format jepsen --out "+out, res.Command)
	assert.Equal(t, "jepsen", res.Config.Format)
	events, err := history.ReadFile(filepath.Join(out, reports.HistoryFile))
	require.NoError(t, err)
	assert.Len(t, events, 10)
	summary, err := os.ReadFile(filepath.Join(out, "summary.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "read as a Jepsen history: 12 operations, 1 fault")
}
