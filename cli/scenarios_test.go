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
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

func TestScenariosListsTheCatalog(t *testing.T) {
	code, stdout, _ := capture(t, "scenarios")
	require.Equal(t, judge.ExitValid, code)
	var names []string
	for _, line := range strings.Split(stdout, "\n")[2:] {
		if line != "" && line[0] != ' ' {
			names = append(names, strings.Fields(line)[0])
		}
	}
	assert.Len(t, names, len(scenario.Catalog()), "one block per scenario, each starting with its name")
	for _, s := range scenario.Catalog() {
		assert.Contains(t, names, s.Name)
		assert.Contains(t, strings.Join(strings.Fields(stdout), " "), strings.Join(strings.Fields(s.Doc), " "),
			"what %s shows, in full", s.Name)
	}
	for _, name := range []string{"control-no-lock", "baseline-redis", "baseline-redlock", "kleppmann-gc-pause",
		"kleppmann-network-delay", "redlock-clock-jump", "redlock-gc-pause", "redis-failover", "redis-del-unlock", "stock-oversell"} {
		assert.Contains(t, stdout, "\n"+name+" ", "missing %s", name)
	}
}

// TestScenariosFitIn100Columns: the catalog listing reads in a 100-column
// terminal (it was 324 wide).
func TestScenariosFitIn100Columns(t *testing.T) {
	code, stdout, _ := capture(t, "scenarios")
	require.Equal(t, judge.ExitValid, code)
	assertFits(t, stdout, 100)
	assert.Regexp(t, `\nkleppmann-gc-pause +redis-unsafe, redis-fixed, chubby-unsafe, chubby-fixed,`, stdout)
}

func TestScenariosShowPrintsARunnableSchedule(t *testing.T) {
	code, stdout, stderr := capture(t, "scenarios", "--show", "redis-failover", "--variant", "unsafe")
	require.Equal(t, judge.ExitValid, code, stderr)
	s, err := nemesis.Parse([]byte(stdout), "stdout")
	require.NoError(t, err)
	assert.Equal(t, "primary", s.Faults[1].Targets[0], "targets are named and resolved when the fault starts")
	assert.Contains(t, stderr, "# run it: locklab run --system redis")

	code, _, stderr = capture(t, "scenarios", "--show", "nope")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `unknown scenario "nope"`)
	code, _, stderr = capture(t, "scenarios", "--show", "redis-failover", "--variant", "weird")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `no variant "weird"`)
}

func TestReproPrintsVerdictsStoryAndMatch(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := capture(t, "repro", "redlock-clock-jump", "--all", "--out", dir)
	require.Equal(t, judge.ExitValid, code, stdout)
	assert.Equal(t, 3, strings.Count(stdout, "\nMATCH"))
	assert.Contains(t, stdout, "critical-sections  invalid   INVALID  ok")
	assert.Contains(t, stdout, "clock-jump on redis-c")
	assert.Contains(t, stdout, "c2 acquired it at")
	assert.Contains(t, stdout, "granted by redis-c,redis-d,redis-e (3/5)")
	assert.Contains(t, stdout, "redlock-clock-jump: 3 of 3 variants matched")
	for _, f := range []string{reports.HistoryFile, reports.ScheduleFile, "story.txt"} {
		assert.FileExists(t, filepath.Join(dir, "redlock-clock-jump", "unsafe", f))
	}
}

func TestReproExitsOneOnMismatch(t *testing.T) {
	// The control's expectation holds; make a test that cannot: repro a
	// variant whose run is cut to nothing.
	code, stdout, _ := capture(t, "repro", "control-no-lock", "--out", t.TempDir())
	assert.Equal(t, judge.ExitValid, code, stdout)
	code, _, stderr := capture(t, "repro", "redis-failover", "--all", "--variant", "unsafe")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "exclude each other")
}

// TestHandEditedSchedule: the schedule printed by --show, edited by hand (the
// clock of redis-b jumps instead of redis-c's), runs without recompiling and
// still breaks Redlock — client 2 now gets b, d and e.
func TestHandEditedSchedule(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := capture(t, "scenarios", "--show", "redlock-clock-jump")
	require.Equal(t, judge.ExitValid, code)
	edited := strings.Replace(stdout, `"redis-c"`, `"redis-b"`, 1)
	require.NotEqual(t, stdout, edited)
	file := filepath.Join(dir, "jump-b.json")
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
	code, stdout, _ = capture(t, "run", "--system", "redlock", "-w", "hold=1s", "--clients", "2", "--time", "20s",
		"--seed", "1", "--nemesis-file", file, "--out", filepath.Join(dir, "r"))
	assert.Equal(t, judge.ExitInvalid, code, stdout)
	assert.Contains(t, stdout, "During the clock-jump of redis-b at ")
	assert.Contains(t, stdout, "mutual-exclusion   INVALID")
}

// TestReproWithoutAScenarioListsThem: repro without an argument lists the
// catalog, a scenario a line, instead of cobra's "accepts 1 arg(s)".
func TestReproWithoutAScenarioListsThem(t *testing.T) {
	code, stdout, stderr := capture(t, "repro")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Empty(t, stdout)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Greater(t, len(lines), 3, stderr)
	assert.Equal(t, "locklab: repro needs the name of the scenario to run, one of:", lines[0])
	catalog := scenario.Catalog()
	require.Len(t, lines, len(catalog)+3, "the first line, a line per scenario, the pointer to scenarios and to the help")
	for i, s := range catalog {
		assert.Regexp(t, `^  `+s.Name+` +\S`, lines[i+1])
		assert.LessOrEqual(t, len([]rune(lines[i+1])), termWidth, "one line each")
	}
	assert.Equal(t, "See 'locklab repro --help'.", lines[len(lines)-1])
	assert.NotContains(t, stderr, "accepts 1 arg")

	code, _, stderr = capture(t, "repro", "redis-failover", "redlock-restart")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "locklab: repro runs one scenario, got 2: redis-failover redlock-restart\n")
}

// TestReproRecordsWhatTheScenarioExpects: a repro run's directory records
// what its variant expects and whether the run showed it, and its summary's
// overall line says so, so that an INVALID fixed variant reads as expected.
func TestReproRecordsWhatTheScenarioExpects(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := capture(t, "repro", "kleppmann-gc-pause", "--variant", "redis-fixed", "--out", out)
	require.Equal(t, judge.ExitValid, code, stderr)
	dir := filepath.Join(out, "kleppmann-gc-pause", "redis-fixed")
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Overall  string            `json:"overall"`
		Expected *reports.Expected `json:"expected"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	require.NotNil(t, res.Expected)
	assert.Equal(t, "invalid", res.Overall)
	assert.True(t, res.Expected.Match)
	assert.Equal(t, "kleppmann-gc-pause/redis-fixed", res.Expected.Name())
	summary, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^overall: INVALID \(exit \d\).*, as scenario kleppmann-gc-pause/redis-fixed expects$`, string(summary))
}

// TestReproSaysFaultsInWords: repro's counterexample lines say the fault in
// words (who was paused, from when to when), not as the history's event
// with its index and the nemesis's process ("#5 0.005s p-1 start pause").
func TestReproSaysFaultsInWords(t *testing.T) {
	code, stdout, stderr := capture(t, "repro", "kleppmann-gc-pause", "--variant", "redis-unsafe", "--out", t.TempDir())
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "During the pause of c1 from 0.005s to 15.005s (15s).")
	assert.NotContains(t, stdout, "during fault: #")
	assert.NotContains(t, stdout, " p-1 ")
}
