package cli

import (
	"flag"
	"fmt"
	"io"
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
	"github.com/locklab/locklab/shrink"
)

var shrinkHunts = flag.String("shrink.hunts", "",
	`hunts whose first finding TestShrinkEveryHuntsFinding shrinks: "all", or a comma-separated list (default: a cheap subset; all takes tens of minutes)`)

// huntStarts are the hunts TestShrinkEveryHuntsFinding shrinks by default,
// each with the seed of its first finding from seed 1 (the sweep starts
// there, so it finds it at once): the Redlock clock-jump finding is the one
// that needed anchoring to shrink to 3 faults (16 -> 5 without).
var huntStarts = []struct {
	hunt string
	seed uint64
}{
	{"redlock-clock-jump/unsafe", 135},
	{"redis-del-unlock/unsafe", 2},
}

// TestShrinkEveryHuntsFinding: each hunt's first finding by random
// exploration shrinks to at most 3 faults, and the minimal schedule,
// replayed with `run --nemesis-file`, fails the same check with a violation
// of the hunt's kind. A hunt that swarm random does not find in 1,000 seeds
// shrinks the finding of a guided search (seed 1) instead. -shrink.hunts=all runs every hunt of the catalog from
// seed 1 (a -v run logs the table: faults before and after, runs, time).
func TestShrinkEveryHuntsFinding(t *testing.T) {
	type tc struct {
		hunt string
		seed uint64
	}
	var cases []tc
	switch *shrinkHunts {
	case "":
		for _, c := range huntStarts {
			cases = append(cases, tc{c.hunt, c.seed})
		}
	case "all":
		for _, n := range harness.HuntNames() {
			cases = append(cases, tc{n, 1})
		}
	default:
		for _, n := range strings.Split(*shrinkHunts, ",") {
			cases = append(cases, tc{n, 1})
		}
	}
	for _, c := range cases {
		t.Run(c.hunt, func(t *testing.T) {
			h, err := harness.FindHunt(c.hunt)
			require.NoError(t, err)
			sw, err := h.Sweep(c.seed, 1000, nil)
			require.NoError(t, err)
			var found scenario.Test
			if sw.Found {
				found, err = h.Test(sw.Seed)
				require.NoError(t, err)
			} else {
				// Swarm random found nothing (redlock-restart): shrink the
				// guided search's finding instead.
				sw, err = guidedSweep(h, 1, c.seed, 1000, nil)
				require.NoError(t, err)
				if !sw.Found {
					t.Skipf("%s: no finding in 1,000 seeds from %d, swarm or guided: nothing to shrink", h.Name, c.seed)
				}
				found = *sw.Finding
			}
			dir := t.TempDir()
			require.NoError(t, shrinkFinding(io.Discard, h, found, dir))
			shrunk := filepath.Join(dir, strings.ReplaceAll(h.Name, "/", "-")+fmt.Sprintf("-seed%d-shrunk", sw.Seed))

			s, err := nemesis.ReadFile(filepath.Join(shrunk, reports.ScheduleFile))
			require.NoError(t, err)
			command, verdicts, extra := readResults(t, shrunk)
			sh := extra["shrink"].(map[string]any)
			target := sh["target"].(map[string]any)
			check := target["check"].(string)
			assert.Equal(t, h.Kind, target["kind"])
			t.Logf("%s seed %d: %v faults -> %d in %v runs (%s)", h.Name, sw.Seed, sh["faults_before"], len(s.Faults), sh["runs"], sh["wall"])
			assert.LessOrEqual(t, len(s.Faults), 3, "shrunk to at most 3 faults")
			assert.Equal(t, "invalid", verdicts[check])

			// The recorded command replays the minimal run from its schedule.json.
			args := strings.Fields(command)
			require.Contains(t, args, "--nemesis-file")
			replay := filepath.Join(dir, "replay")
			args = append(args[1:len(args)-2], "--out", replay)
			code, _, stderr := capture(t, args...)
			require.Equal(t, judge.ExitInvalid, code, stderr)
			_, again, _ := readResults(t, replay)
			assert.Equal(t, "invalid", again[check], "the replay fails the same check")
			rt, err := harness.LoadTest(replay)
			require.NoError(t, err)
			r, err := harness.Run(rt)
			require.NoError(t, err)
			assert.True(t, shrink.Target{Check: check, Kind: h.Kind}.Fails(r), "the replay shows a %s violation", h.Kind)
		})
	}
}
