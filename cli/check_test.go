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
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
)

func TestCheckJudgesAHandWrittenHistory(t *testing.T) {
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "orders=100")
	assert.Equal(t, judge.ExitInvalid, code, stdout)
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
	assert.Equal(t, judge.ExitValid, code, stdout+stderr)
	for _, check := range []string{"critical-sections", "mutual-exclusion", "lease", "liveness"} {
		assert.Regexp(t, check+` +VALID`, stdout)
	}
	code, _, stderr = capture(t, "check", "testdata/owner-mismatch.jsonl")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `testdata/owner-mismatch.jsonl:3: owner "c1-2" of the completion differs from owner "c1-1" of its invoke (event 0)`)
}

func TestCheckWithFencedStorageJudgesTheTokens(t *testing.T) {
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--storage", "fenced", "--checks", "fencing-tokens")
	assert.Equal(t, judge.ExitInvalid, code, stdout)
	assert.Contains(t, stdout, "the storage accepted token 33 after token 34")
}

func TestCheckWritesARunDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, _ := capture(t, "check", "testdata/gc-pause.jsonl", "--initial", "*=100", "--out", out)
	require.Equal(t, judge.ExitInvalid, code, stdout)
	b, err := os.ReadFile(filepath.Join(out, reports.ResultsFile))
	require.NoError(t, err)
	var res reports.Results
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, judge.ExitInvalid, res.ExitCode)
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
		{"valid", []string{"check", valid}, judge.ExitValid, "overall: VALID (exit 0)", ""},
		{"nothing applies", []string{"check", empty}, judge.ExitUnknown, "no check applies", ""},
		{"named check that cannot decide", []string{"check", valid, "--checks", "critical-sections"}, judge.ExitUnknown, "no critical sections", ""},
		{"liveness failure", []string{"check", stalled}, judge.ExitUnknown, "clients waited 20s", ""},
		{"malformed line", []string{"check", "testdata/malformed.jsonl"}, judge.ExitUsage, "", "testdata/malformed.jsonl:4: time 1000000 is earlier"},
		{"missing file", []string{"check", filepath.Join(dir, "nope.jsonl")}, judge.ExitUsage, "", "no such file"},
		{"unknown check", []string{"check", valid, "--checks", "vibes"}, judge.ExitUsage, "", `unknown check "vibes"`},
		{"bad initial", []string{"check", valid, "--initial", "k"}, judge.ExitUsage, "", `--initial "k": want key=value`},
		{"bad option", []string{"check", valid, "-o", "stall=-1s"}, judge.ExitUsage, "", `check option stall="-1s": must be positive`},
		{"no file", []string{"check"}, judge.ExitUsage, "", "locklab: check needs a history file: the history.jsonl of a run directory " +
			"(locklab check runs/latest/history.jsonl), one of your own in the same format, or a Jepsen history.edn with --format jepsen\n"},
		{"two files", []string{"check", "a.jsonl", "b.jsonl"}, judge.ExitUsage, "", "locklab: check reads one history file, got 2: a.jsonl b.jsonl\n"},
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
// history.edn, judged by check --format jepsen. Each says which verdict
// Knossos's mutex model gives and why; knossosMutex computes it, and the
// verdict of check must be the same (exit 0 where Knossos accepts the
// history, 1 with the mutex counterexample where it does not). Histories
// with leases are judged by the lease check, which Knossos's mutex does not
// model ("" below).
func TestCheckJudgesJepsenLockHistories(t *testing.T) {
	tests := []struct {
		file    string
		knossos string // Knossos's mutex model: "valid", "invalid", or "" when it does not apply
		code    int
		want    []string
	}{
		// Two processes take turns: each grant follows the release before
		// it in the history.
		{"lock-valid.edn", "valid", judge.ExitValid, []string{
			"read as a Jepsen history: 12 operations, 0 faults",
			"times: in the history's order throughout",
			"mutual-exclusion   VALID    3 holdings",
			"mutex              VALID    3 grants on 1 key behave as a mutex",
			"overall: VALID (exit 0)",
			"skipped lease: the lock grants no leases",
			"skipped liveness: a Jepsen lock test's generator acquires and releases at random",
		}},
		// p1's acquire returns :ok while p0 holds the lock and before p0's
		// release is invoked: two acquires with no release between them in
		// any order.
		{"lock-double-grant.edn", "invalid", judge.ExitInvalid, []string{
			"read as a Jepsen history: 12 operations, 1 fault",
			"faults: 1 partition",
			"mutual-exclusion   INVALID  1 overlap",
			`p0 held "lock" from 0.020s until its release at 2.000s; p1 held "lock" from 1.200s until its release at 2.100s.`,
			`During the partition from 0.500s to 3.010s (2.51s): :start-partition :majority -> [:isolated {"n1" #{"n3" "n4" "n5"} "n2" #{"n3" "n4" "n5"}}].`,
			"mutex              INVALID  the lock service broke the mutex model on \"lock\": p1 was granted the lock while p0 held it",
			"overall: INVALID (exit 1)",
		}},
		// p0's :lock times out (:info): Knossos may leave it out, and every
		// other grant follows a release.
		{"lock-info.edn", "valid", judge.ExitValid, []string{
			"read as a Jepsen history: 10 operations, 0 faults",
			"acquire      2 ok     0 fail     1 info",
			"mutual-exclusion   VALID    2 holdings",
			"overall: VALID (exit 0)",
		}},
		{"lock-lease.edn", "", judge.ExitValid, []string{
			"fencing-tokens runs: the grants carry tokens",
			"faults: 1 pause",
			"lease              VALID    2 grants on 1 key behave as a lease lock",
			"fencing-tokens     VALID    2 grants: tokens increase with every grant",
			"skipped mutex: the lock grants leases",
			"overall: VALID (exit 0)",
		}},
		{"lock-stale-token.edn", "", judge.ExitInvalid, []string{
			"fencing-tokens     INVALID  fencing tokens on \"lock\": token went backwards: 6 after 7",
			"During the pause of n1 from 0.100s to 2.210s (2.11s): :pause :primaries -> {\"n1\" :paused}.",
			"overall: INVALID (exit 1)",
		}},
		// Shaped like an etcd lock test under a partition nemesis: five
		// processes, releases of nothing (:not-held), nested acquires
		// (:already-held), a :timeout, a pending acquire at the end, and
		// times that step back across processes (lines 5, 12 and 31). p3
		// is granted the lock (line 21) after p4's release; p1 is granted
		// it too (line 23) while p3 holds it: no :ok release comes between
		// the two grants in any order (p3's release fails later, p2's
		// failed), so Knossos finds no legal order.
		{"etcd-steps-double-grant.edn", "invalid", judge.ExitInvalid, []string{
			"read as a Jepsen history: 35 operations, 1 fault",
			"times: 3 operations carry a :time earlier than the latest before them, by at most 606.7µs (line 5, behind line 4): " +
				"Jepsen reads a worker's clock before it appends the operation, so the history's order was kept as the order in time " +
				"and each was taken at the latest time before it",
			"mutex              INVALID  the lock service broke the mutex model on \"lock\": p3 and p1 were both granted the lock, each before the other's grant returned",
			"During the nemesis from 1.000s to 5.002s (4.001s): :start -> [:isolated {\"n1\" #{\"n3\" \"n4\" \"n5\"} \"n2\" #{\"n3\" \"n4\" \"n5\"}}].",
			"mutex counterexample (6 events):",
			"#21 3.200s p1 p1 ok acquire key=lock owner=p1#1",
			"overall: INVALID (exit 1)",
		}},
		// The same test where p3 releases the lock before p1's grant
		// returns. p1's :ok (line 25) carries a time 0.8 ms before p3's
		// :ok release on the line above it; in the history's order the
		// release comes first, and every grant follows a release (p4's
		// grant on line 11 returns while p0's release is under way:
		// Knossos puts the release first).
		{"etcd-steps-valid.edn", "valid", judge.ExitValid, []string{
			"times: 4 operations carry a :time earlier than the latest before them, by at most 787.9µs (line 25, behind line 24)",
			"mutual-exclusion   VALID    5 holdings",
			"mutex              VALID    5 grants on 1 key behave as a mutex",
			"overall: VALID (exit 0)",
		}},
		// p1's grant returns (line 4) before p0's release is invoked (line
		// 5), though p0's clock read 0.1 ms earlier than p1's: by the
		// clocks the release and the grant overlap and the release could
		// come first, but in the history's order, which Knossos uses, p1
		// was granted the lock while p0 held it.
		{"order-not-clock.edn", "invalid", judge.ExitInvalid, []string{
			"times: 1 operation carries a :time earlier than the latest before it, by at most 100µs (line 5, behind line 4)",
			"mutex              INVALID  the lock service broke the mutex model on \"lock\": p1 was granted the lock while p0 held it",
			"overall: INVALID (exit 1)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "jepsen", tc.file)
			code, stdout, stderr := capture(t, "check", "--format", "jepsen", path)
			assert.Equal(t, tc.code, code, stdout+stderr)
			for _, want := range tc.want {
				assert.Contains(t, stdout, want)
			}
			if tc.knossos == "" {
				return
			}
			h, err := history.ReadJepsenFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.knossos == "valid", knossosMutex(h.Events), "Knossos's mutex model")
			assert.Equal(t, tc.knossos == "valid", code == judge.ExitValid, "check agrees with Knossos")
		})
	}
}

// Knossos's mutex model, computed, on histories whose verdict turns on one
// rule each: the search in knossosMutex is what the fixtures above lean on.
func TestKnossosMutexModel(t *testing.T) {
	const (
		inv0 = "{:type :invoke, :f :acquire, :time 1, :process 0}\n"
		ok0  = "{:type :ok, :f :acquire, :time 2, :process 0}\n"
		inv1 = "{:type :invoke, :f :acquire, :time 3, :process 1}\n"
		ok1  = "{:type :ok, :f :acquire, :time 4, :process 1}\n"
	)
	rel := func(p int, typ string, t int) string {
		return "{:type :" + typ + ", :f :release, :time " + strconv.Itoa(t) + ", :process " + strconv.Itoa(p) + "}\n"
	}
	tests := []struct {
		name, history string
		valid         bool
	}{
		{"one grant", inv0 + ok0, true},
		{"two grants, no release", inv0 + ok0 + inv1 + ok1, false},
		{"a release between", inv0 + ok0 + rel(0, "invoke", 2) + rel(0, "ok", 2) + inv1 + ok1, true},
		{"a release under way as the grant returns", inv0 + ok0 + rel(0, "invoke", 2) + inv1 + ok1 + rel(0, "ok", 5), true},
		{"a release invoked after the grant returned", inv0 + ok0 + inv1 + ok1 + rel(0, "invoke", 5) + rel(0, "ok", 6), false},
		{"a failed release changes nothing", inv0 + ok0 + rel(0, "invoke", 2) + rel(0, "fail", 2) + inv1 + ok1, false},
		{"a release of unknown outcome may have freed it", inv0 + ok0 + rel(0, "invoke", 2) + rel(0, "info", 2) + inv1 + ok1, true},
		{"a release of a free lock", rel(0, "invoke", 1) + rel(0, "ok", 2), false},
		{"a release by another process frees it", inv0 + ok0 + rel(2, "invoke", 2) + rel(2, "ok", 2) + inv1 + ok1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.ReadJepsen(strings.NewReader(tc.history), "h.edn")
			require.NoError(t, err)
			assert.Equal(t, tc.valid, knossosMutex(h.Events))
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
	assert.Equal(t, judge.ExitUnknown, code, stdout+stderr)
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
		{"time goes back", acquire + "{:type :ok, :f :acquire, :time 9, :process 0}\n", "h.edn:2: field :time 9 is earlier than the 10 of line 1, of the same process 0: a process's times never go back"},
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
			assert.Equal(t, judge.ExitUsage, code, stdout+stderr)
			assert.Contains(t, stderr, strings.ReplaceAll(tc.want, "h.edn", p))
		})
	}
}

// Where check and Knossos part: a release that returns :ok from a process
// that holds nothing. Knossos's mutex knows no owners: such a release frees
// the lock whoever held it, and is illegal on a free lock. check's mutex
// knows them (a Jepsen process holds what its last :ok acquire took, until
// an :ok release): a release by a process that holds nothing ends nobody's
// holding, and is legal on a free lock (it releases nobody's). A correct
// lock refuses both releases (:not-held), so both verdicts see the
// lock's bug, in different places; these tests pin the difference.
func TestCheckAndKnossosPartOnReleasesByAProcessHoldingNothing(t *testing.T) {
	tests := []struct {
		name, history string
		knossosValid  bool
		code          int
		want          string
	}{
		{"p2 releases the lock p0 holds, then p1 is granted it", `{:type :invoke, :f :acquire, :time 1, :process 0}
{:type :ok, :f :acquire, :time 2, :process 0}
{:type :invoke, :f :release, :time 3, :process 2}
{:type :ok, :f :release, :time 4, :process 2}
{:type :invoke, :f :acquire, :time 5, :process 1}
{:type :ok, :f :acquire, :time 6, :process 1}
`, true, judge.ExitInvalid, "p2 released the lock while p0 held it, and p1 was granted it"},
		{"p0 releases the lock twice", `{:type :invoke, :f :acquire, :time 1, :process 0}
{:type :ok, :f :acquire, :time 2, :process 0}
{:type :invoke, :f :release, :time 3, :process 0}
{:type :ok, :f :release, :time 4, :process 0}
{:type :invoke, :f :release, :time 5, :process 0}
{:type :ok, :f :release, :time 6, :process 0}
`, false, judge.ExitValid, "mutex              VALID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := history.ReadJepsen(strings.NewReader(tc.history), "h.edn")
			require.NoError(t, err)
			assert.Equal(t, tc.knossosValid, knossosMutex(h.Events), "Knossos's mutex model")
			p := filepath.Join(t.TempDir(), "h.edn")
			require.NoError(t, os.WriteFile(p, []byte(tc.history), 0o644))
			code, stdout, stderr := capture(t, "check", "--format", "jepsen", p)
			assert.Equal(t, tc.code, code, stdout+stderr)
			assert.Contains(t, stdout, tc.want)
		})
	}
}

// A Jepsen test's directory in its store (store/<test>/<time>, or the
// store/latest link to it) is read through its history.edn, which check
// names.
func TestCheckReadsAJepsenStoreDirectory(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	run := filepath.Join(store, "etcd-lock", "20261207T185000.000Z")
	require.NoError(t, os.MkdirAll(run, 0o755))
	b, err := os.ReadFile(filepath.Join("testdata", "jepsen", "etcd-steps-double-grant.edn"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(run, "history.edn"), b, 0o644))
	require.NoError(t, os.Symlink(filepath.Join("etcd-lock", "20261207T185000.000Z"), filepath.Join(store, "latest")))
	for _, dir := range []string{run, filepath.Join(store, "latest")} {
		code, stdout, stderr := capture(t, "check", "--format", "jepsen", dir)
		assert.Equal(t, judge.ExitInvalid, code, stdout+stderr)
		assert.Contains(t, stdout, filepath.Join(dir, "history.edn")+": 33 events\n")
		assert.Contains(t, stdout, "mutex              INVALID")
	}
}

func TestCheckFormatFlag(t *testing.T) {
	code, _, stderr := capture(t, "check", "--format", "knossos", "testdata/gc-pause.jsonl")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `--format "knossos": want locklab or jepsen`)

	code, _, stderr = capture(t, "check", "testdata/jepsen/lock-valid.edn")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "testdata/jepsen/lock-valid.edn:1: not a JSON event")
	assert.Contains(t, stderr, "(a Jepsen history? add --format jepsen)")

	code, _, stderr = capture(t, "check", "--format", "jepsen", "testdata/jepsen")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "is a directory")
}

// A Jepsen history checked with --out leaves a run directory like any other:
// the history in the locklab format, the command that repeats the check.
func TestCheckWritesTheRunDirectoryOfAJepsenHistory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, _ := capture(t, "check", "--format", "jepsen", "testdata/jepsen/lock-double-grant.edn", "--out", out)
	require.Equal(t, judge.ExitInvalid, code, stdout)
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
	assert.Contains(t, string(summary), "times: in the history's order throughout")
}

// results.json says how the Jepsen history was read: how far its times
// stepped back, and that liveness was left out and why.
func TestCheckRecordsTheReadingOfAJepsenHistory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, stdout, _ := capture(t, "check", "--format", "jepsen", "testdata/jepsen/etcd-steps-double-grant.edn", "--out", out)
	require.Equal(t, judge.ExitInvalid, code, stdout)
	b, err := os.ReadFile(filepath.Join(out, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Config struct {
			Checks []string `json:"checks"`
		} `json:"config"`
		Extra struct {
			Jepsen struct {
				Operations int            `json:"operations"`
				TimeSteps  map[string]int `json:"time_steps"`
			} `json:"jepsen"`
			Checks judge.ChecksRecord `json:"checks"`
		} `json:"extra"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, []string{"default"}, res.Config.Checks, "as asked")
	assert.Equal(t, 35, res.Extra.Jepsen.Operations)
	assert.Equal(t, map[string]int{"count": 3, "max_ns": 606663, "line": 5, "behind_line": 4}, res.Extra.Jepsen.TimeSteps)
	assert.Equal(t, []string{"mutual-exclusion", "mutex"}, res.Extra.Checks.Ran)
	require.NotEmpty(t, res.Extra.Checks.Skipped)
	last := res.Extra.Checks.Skipped[len(res.Extra.Checks.Skipped)-1]
	assert.Equal(t, "liveness", last.Check)
	assert.Contains(t, last.Reason, "(--checks +liveness runs it)")
}

// Liveness judges a Jepsen history when asked to.
func TestCheckRunsLivenessOnAJepsenHistoryWhenAsked(t *testing.T) {
	code, stdout, _ := capture(t, "check", "--format", "jepsen", "testdata/jepsen/etcd-steps-valid.edn", "--checks", "+liveness")
	assert.Equal(t, judge.ExitValid, code, stdout)
	assert.Contains(t, stdout, "liveness           VALID")
	assert.NotContains(t, stdout, "skipped liveness")
}
