package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// TestRunSaysWhenNoFaultFired: a run that asked for faults and saw none (a
// random nemesis that drew none, a schedule whose faults never fired), or
// none of a kind it asked for, says so on the third line of its output
// (after the seed and the speed), in results.json and in a strip at the top
// of report.html; a run whose faults fired says nothing of the kind.
func TestRunSaysWhenNoFaultFired(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// warning is the summary's warning ("" none); noneFired and fired
		// what results.json's faults say.
		warning   string
		noneFired bool
		fired     map[string]int
		// weak is the warning of faults too short to test the design.
		weak string
	}{
		{name: "redis, random pauses, 10 s, seed 1: none drawn",
			args:      []string{"--nemesis", "pause", "--time", "10s", "--seed", "1"},
			warning:   "no fault fired: the random pause nemesis drew none in 10s, so the verdicts judge a run without faults",
			noneFired: true, fired: map[string]int{}},
		{name: "a schedule whose faults never fired",
			args: []string{"--nemesis-file", filepath.Join("testdata", "schedules", "never-fires.json"), "--time", "10s", "--seed", "1"},
			warning: "2 faults scheduled, none fired (1 due after the run ended, 1 waiting for a trigger that did not come in time), " +
				"so the verdicts judge a run without faults",
			noneFired: true, fired: map[string]int{}},
		{name: "pauses and crashes that drew no pause",
			args:    []string{"--nemesis", "pause,crash", "--time", "20s", "--seed", "1"},
			warning: "--nemesis pause,crash drew no pause, so the verdicts say nothing about pause",
			fired:   map[string]int{"crash": 1}},
		{name: "redis, random pauses, 10 s, seed 4: two fired, shorter than the lease",
			args:  []string{"--nemesis", "pause", "--time", "10s", "--seed", "4"},
			fired: map[string]int{"pause": 2},
			weak:  "faults too short to test the design: no pause reached the lease (ttl 10s): the longest of 2 was 5.948s, on redis"},
		{name: "redis, random pauses, seed 7: an 11 s pause outlasts the lease",
			args:  []string{"--nemesis", "pause", "--time", "30s", "--seed", "7", "--checks", "liveness"},
			fired: map[string]int{"pause": 7}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr := capture(t, append([]string{"run", "--system", "redis", "--out", dir}, tc.args...)...)
			require.Equal(t, judge.ExitValid, code, stderr)
			lines := strings.Split(stdout, "\n")
			require.Greater(t, len(lines), 3)
			b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
			require.NoError(t, err)
			var res struct {
				Faults   reports.Faults `json:"faults"`
				Warnings []string       `json:"warnings"`
			}
			require.NoError(t, json.Unmarshal(b, &res))
			assert.Equal(t, tc.noneFired, res.Faults.NoneFired, "results.json: faults.none_fired")
			assert.Equal(t, tc.fired, res.Faults.Fired, "results.json: faults.fired")
			page, err := os.ReadFile(filepath.Join(dir, reports.ReportFile))
			require.NoError(t, err)
			if tc.weak != "" {
				assert.Contains(t, stdout, "\nWARNING: "+tc.weak)
				assert.Equal(t, tc.weak, res.Warnings[0][:len(tc.weak)], "results.json: warnings")
				assert.Contains(t, string(page), `<p class="warning">Warning: `+tc.weak)
				assert.NotContains(t, string(page), `id="fault-warning"`)
				return
			}
			if tc.warning == "" {
				assert.NotContains(t, stdout, "WARNING")
				assert.Empty(t, res.Warnings)
				assert.NotContains(t, string(page), `id="fault-warning"`)
				return
			}
			assert.Equal(t, "WARNING: "+tc.warning, lines[2], "the third line, before the history and the verdicts:\n%s", stdout)
			assert.Equal(t, tc.warning, res.Faults.Warning, "results.json: faults.warning")
			assert.Equal(t, []string{tc.warning}, res.Warnings, "results.json: warnings")
			assert.Contains(t, string(page), `<div class="fault-warning" id="fault-warning" role="alert">`)
			summary, err := os.ReadFile(filepath.Join(dir, reports.SummaryFile))
			require.NoError(t, err)
			assert.Contains(t, string(summary), "WARNING: "+tc.warning, "summary.txt")
		})
	}
}

// TestReproSaysWhenNoFaultFired: a scenario run whose schedule fired nothing
// says so right under its replay command, before the verdicts.
func TestReproSaysWhenNoFaultFired(t *testing.T) {
	s := scenario.Catalog()[0]
	v := s.Variants[0]
	never, err := nemesis.ReadFile(filepath.Join("testdata", "schedules", "never-fires.json"))
	require.NoError(t, err)
	test := v.ReproTest()
	test.Schedule = &never
	r, err := harness.Run(test)
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, printOutcome(&out, s, harness.Outcome{Variant: v, Result: r}, filepath.Join(t.TempDir(), "run"), false, ""))
	text := out.String()
	replay, warning, verdicts := strings.Index(text, "replay: "), strings.Index(text, "\n\nWARNING: 2 faults scheduled, none fired"),
		strings.Index(text, "CHECK")
	assert.True(t, 0 <= replay && replay < warning && warning < verdicts, "the warning under the replay command, before the verdicts:\n%s", text)

	o, err := harness.Repro(v)
	require.NoError(t, err)
	out.Reset()
	require.NoError(t, printOutcome(&out, s, o, filepath.Join(t.TempDir(), "run"), false, ""))
	assert.NotContains(t, out.String(), "WARNING", "the catalog's own schedule fires")
}

// TestExploreCountsRunsWithoutFaults: explore's table counts the runs in
// which no fault fired; the comparison says how many each search had.
func TestExploreCountsRunsWithoutFaults(t *testing.T) {
	code, stdout, stderr := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--first", "1", "--starts", "1",
		"--max-seeds", "20", "--time", "10s", "--progress=false")
	require.Equal(t, judge.ExitUnknown, code, stderr)
	assert.Contains(t, stdout, "NO FAULT FIRED")
	assert.Regexp(t, `kleppmann-gc-pause/redis-unsafe\s+gc-pause\s+>20\s+0/1\s+5 of 20 runs\s`, stdout)

	exp := func(noFault ...int) harness.Exploration {
		e := harness.Exploration{Hunt: harness.Hunt{Name: "h", Kind: "k"}}
		for _, n := range noFault {
			e.Sweeps = append(e.Sweeps, harness.Sweep{Seeds: 10, Found: true, NoFault: n})
		}
		return e
	}
	var b strings.Builder
	require.NoError(t, printComparison(&b, []harness.Exploration{exp(1, 2, 0)}, []harness.Exploration{exp(0, 0, 1)}))
	assert.Contains(t, b.String(), "no fault fired (runs that searched nothing) in 3 of 30 runs of swarm random and 1 of 30 runs of the guided search")
}

// TestRunLiveSaysFirstThatItsNemesisDrewNoFault: a live run whose random
// nemesis drew nothing says so on its second line, before it spends its real
// time, and again first in its summary, in results.json and in its report.
// (raftkv in-process for a second, scaled from 10 s: its pauses draw none
// for seed 1.)
func TestRunLiveSaysFirstThatItsNemesisDrewNoFault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := capture(t, "run", "--live", "--scale", "0.1", "--system", "raftkv", "--time", "10s", "--seed", "1",
		"--nemesis", "pause", "--out", dir)
	require.Contains(t, []int{judge.ExitValid, judge.ExitInvalid}, code, "verdicts, not an error: %s", stderr)
	lines := strings.Split(stdout, "\n")
	require.Greater(t, len(lines), 5)
	assert.Equal(t, "WARNING: the random pause nemesis drew no fault in 1s: this run will see none, so its verdicts will judge "+
		"the system without faults (another --seed or a longer --time draws some)", lines[1])
	const warning = "no fault fired: the random pause nemesis drew none in 1s, so the verdicts judge a run without faults"
	assert.Contains(t, stdout, "WARNING: "+warning+"\nhistory: ", "first in the summary")
	b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
	require.NoError(t, err)
	var res struct {
		Faults reports.Faults `json:"faults"`
	}
	require.NoError(t, json.Unmarshal(b, &res))
	assert.True(t, res.Faults.NoneFired)
	assert.Equal(t, warning, res.Faults.Warning)
	page, err := os.ReadFile(filepath.Join(dir, reports.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), `id="fault-warning"`)
}
