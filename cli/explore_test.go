package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
)

func TestExploreReportsSeedsToFirstViolation(t *testing.T) {
	code, stdout, stderr := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--starts", "2", "--max-seeds", "300", "--progress=false")
	assert.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "HUNT")
	assert.Contains(t, stdout, "kleppmann-gc-pause/redis-unsafe  gc-pause")
	assert.Contains(t, stdout, "2/2")
	assert.Contains(t, stdout, "kleppmann-gc-pause/redis-unsafe first found at seed")
	assert.Contains(t, stdout, "--nemesis random")
	assert.Empty(t, stderr, "no progress bar when asked not to")
}

// TestExploreFindsTheSameSeedsAtAnyJobs: searches run -j at once, each
// sequential, so the seeds each sweep needed (the table but its machine-time
// column, and the findings after it) do not depend on -j.
func TestExploreFindsTheSameSeedsAtAnyJobs(t *testing.T) {
	args := []string{"explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--hunt", "redis-failover/unsafe", "--starts", "3", "--max-seeds", "200", "--progress=false"}
	tables := map[string]string{}
	for _, j := range []string{"1", "3"} {
		code, stdout, stderr := capture(t, append(args, "-j", j)...)
		require.Equal(t, judge.ExitValid, code, stderr)
		// The last column is machine time per seed.
		tables[j] = regexp.MustCompile(`\d+\.\dms\n`).ReplaceAllString(stdout, "\n")
	}
	assert.Equal(t, tables["1"], tables["3"])
	assert.Contains(t, tables["1"], "redis-failover/unsafe first found at seed")
	code, _, stderr := capture(t, append(args, "-j", "0")...)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "-j 0: want at least 1")
}

func TestExploreWithoutAFindingExitsUnknown(t *testing.T) {
	code, stdout, _ := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--first", "1", "--starts", "1", "--max-seeds", "1", "--progress=false")
	assert.Equal(t, judge.ExitUnknown, code, stdout)
	assert.Contains(t, stdout, ">1")
	code, _, stderr := capture(t, "explore", "--hunt", "yeti")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `unknown hunt "yeti"`)
}

// TestExplorePrintsProgressLinesWithoutATerminal: with stderr a pipe (a log
// file, CI), explore prints a line per finished sweep instead of staying
// silent until the end.
func TestExplorePrintsProgressLinesWithoutATerminal(t *testing.T) {
	code, stdout, stderr := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--first", "1", "--starts", "2", "--max-seeds", "2", "-j", "1")
	assert.Equal(t, judge.ExitUnknown, code, stdout)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 3, stderr)
	assert.Equal(t, "explore: 1 hunt x 2 sweeps of at most 2 seeds, 1m0s simulated each", lines[0])
	assert.Regexp(t, `^explore: kleppmann-gc-pause/redis-unsafe sweep 1/2: nothing in 2 seeds from seed 1 in .*; 2 of at most 4 seeds done, \d+ seeds/s, 0 findings so far`, lines[1])
	assert.Regexp(t, `^explore: kleppmann-gc-pause/redis-unsafe sweep 2/2: nothing in 2 seeds from seed 3 in .*; 4 of at most 4 seeds done`, lines[2])
	assert.NotContains(t, stderr, "\r", "no progress bar redraws in a log")
}

// TestExploreWithoutAFindingShowsNoMedian: a median of sweeps that found
// nothing would be a number of seeds that showed nothing.
func TestExploreWithoutAFindingShowsNoMedian(t *testing.T) {
	code, stdout, stderr := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--first", "1", "--starts", "1", "--max-seeds", "1")
	assert.Equal(t, judge.ExitUnknown, code, stdout)
	assert.NotContains(t, strings.ToLower(stdout+stderr), "median")
	assert.Contains(t, stdout, "kleppmann-gc-pause/redis-unsafe found no gc-pause violation in 1 seed: raise --max-seeds or --starts")
}

func TestMedianText(t *testing.T) {
	sweeps := func(found ...bool) harness.Exploration {
		e := harness.Exploration{}
		for i, f := range found {
			e.Sweeps = append(e.Sweeps, harness.Sweep{Seeds: 10 * (i + 1), Found: f})
		}
		return e
	}
	assert.Equal(t, "-", medianText(sweeps(false, false)))
	assert.Equal(t, ">20.0", medianText(sweeps(true, false, false)), "the median sweep found nothing: a lower bound")
	assert.Equal(t, ">15.0", medianText(sweeps(true, false)))
	assert.Equal(t, "20.0", medianText(sweeps(true, true, false)))
	assert.Equal(t, "15.0", medianText(sweeps(true, true)))
}

// TestProgressLogSpeaksEveryFewSeconds: within a long sweep a line comes
// after progressEvery of silence, with the rate and the time left.
func TestProgressLogSpeaksEveryFewSeconds(t *testing.T) {
	var buf strings.Builder
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgressLog(&buf, func() time.Time { return now }, 100)
	for range 9 {
		now = now.Add(time.Second / 2)
		p.seed("h sweep 1/2")
	}
	assert.Empty(t, buf.String(), "4.5 s: quiet")
	now = now.Add(time.Second / 2)
	p.seed("h sweep 1/2")
	assert.Equal(t, "explore: h sweep 1/2: 10 of at most 100 seeds done, 2 seeds/s, 0 findings so far, at most 45s left\n", buf.String())
	buf.Reset()
	p.sweep("h sweep 1/2", harness.Sweep{Start: 1, Seeds: 10, Found: true, Seed: 10, Wall: 5 * time.Second}, 50)
	assert.Equal(t, "explore: h sweep 1/2: found at seed 10, after 10 seeds in 5s; 10 of at most 60 seeds done, 2 seeds/s, 1 finding so far, at most 25s left\n", buf.String())
	var quiet *progressLog
	quiet.seed("x")
	quiet.sweep("x", harness.Sweep{}, 1)
	assert.Equal(t, "1 seed", count(1, "seed"))
	assert.Equal(t, "0 findings", count(0, "finding"))
}

// TestExploreShrinksEachFirstFinding: with --shrink, each hunt's first
// finding is shrunk to a minimal run that still shows the hunt's kind.
func TestExploreShrinksEachFirstFinding(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--starts", "1", "--max-seeds", "300", "--progress=false",
		"--shrink", "--runs-dir", dir)
	assert.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "shrinking kleppmann-gc-pause/redis-unsafe seed 63: mutual-exclusion invalid, gc-pause violation")
	assert.Regexp(t, `(?m)^shrunk 17 faults to 1 in \d+ runs`, stdout)
	assert.FileExists(t, filepath.Join(dir, "kleppmann-gc-pause-redis-unsafe-seed63-shrunk", "schedule.json"))
}

// TestExploreGuidedWritesItsFinding: a guided search's finding is a mutated
// schedule; explore writes it as a run directory that replays it.
func TestExploreGuidedWritesItsFinding(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := capture(t, "explore", "--hunt", "redis-failover/unsafe", "--guided", "--starts", "1", "--max-seeds", "200",
		"--progress=false", "--runs-dir", dir)
	assert.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "redis-failover/unsafe first found by the guided search from seed 1")
	run := filepath.Join(dir, "redis-failover-unsafe-guided1")
	assert.Contains(t, stdout, "--nemesis-file "+filepath.Join(run, "schedule.json"))
	assert.FileExists(t, filepath.Join(run, "schedule.json"))
}

func TestExploreComparesSwarmAndGuided(t *testing.T) {
	code, stdout, stderr := capture(t, "explore", "--hunt", "redis-failover/unsafe", "--compare", "--starts", "1", "--max-seeds", "200",
		"--progress=false", "--runs-dir", t.TempDir())
	assert.Equal(t, judge.ExitValid, code, stderr)
	assert.Regexp(t, `redis-failover/unsafe\s+failover\s+(hard|-)\s+\d+\s+\d+\.\d\s+1/1\s+\d+\s+\d+\.\d\s+1/1\s+\d+\.\dx`, stdout)
	assert.Regexp(t, `(?m)^hard hunts: [01]; guided at least 2x fewer runs on [01] of them`, stdout)
	code, _, stderr = capture(t, "explore", "--all", "--hunt", "redis-failover")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "--all and --hunt exclude each other")
}

// TestComparisonSaysWhichHuntsAreHardAndWhereGuidedLost: a hunt is hard when
// swarm's median is above 20 runs or swarm found it in fewer than half its
// starts; the summary counts the hard hunts guided won by 2x and names the
// hunts where guided's median was higher.
func TestComparisonSaysWhichHuntsAreHardAndWhereGuidedLost(t *testing.T) {
	exp := func(name string, runs ...int) harness.Exploration {
		e := harness.Exploration{Hunt: harness.Hunt{Name: name, Kind: "k"}}
		for _, n := range runs {
			found := n > 0
			if n < 0 {
				n = -n
			}
			e.Sweeps = append(e.Sweeps, harness.Sweep{Seeds: n, Found: found})
		}
		return e
	}
	swarm := []harness.Exploration{exp("easy", 3, 5, 7), exp("hard-won", 40, 50, 60), exp("hard-lost", 30, 30, 30), exp("unfound", -100, -100, 90)}
	guided := []harness.Exploration{exp("easy", 3, 6, 7), exp("hard-won", 10, 20, 30), exp("hard-lost", 20, 20, 20), exp("unfound", 10, 20, 30)}
	var b strings.Builder
	err := printComparison(&b, swarm, guided)
	assert.Error(t, err, "a sweep found nothing")
	out := b.String()
	assert.Regexp(t, `(?m)^easy\s+k\s+-\s`, out)
	assert.Regexp(t, `(?m)^hard-won\s+k\s+hard\s`, out)
	assert.Regexp(t, `(?m)^unfound\s+k\s+hard\s.*>5\.0x`, out)
	assert.Contains(t, out, "hard hunts: 3; guided at least 2x fewer runs on 2 of them (not on hard-lost); guided worse (a higher median) on 1 hunts: easy")
}

// TestExploreHelpSaysItExitsUnknownWithoutFlags: CI users script explore,
// and without flags it exits 3.
func TestExploreHelpSaysItExitsUnknownWithoutFlags(t *testing.T) {
	code, stdout, _ := capture(t, "explore", "--help")
	require.Equal(t, judge.ExitValid, code)
	assert.Contains(t, stdout, "Without flags, explore exits 3")
}

// TestExploreSaysWhyItExitsUnknown: a sweep that found nothing ends the
// output with a line naming the hunts and the exit code.
func TestExploreSaysWhyItExitsUnknown(t *testing.T) {
	code, stdout, _ := capture(t, "explore", "--hunt", "kleppmann-gc-pause/redis-unsafe", "--hunt", "redis-del-unlock",
		"--first", "1", "--starts", "2", "--max-seeds", "2", "--progress=false")
	assert.Equal(t, judge.ExitUnknown, code, stdout)
	assert.True(t, strings.HasSuffix(stdout, "\nexit 3: 2 of 4 sweeps found no violation within --max-seeds 2 "+
		"(kleppmann-gc-pause/redis-unsafe); raise --max-seeds or --starts to search further\n"), stdout)
}
