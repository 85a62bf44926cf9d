package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/system"
)

// TestNearMissesAreAnsweredWithWhatWasMeant: a mistyped system, workload,
// fault kind, scenario, hunt, flag or command is refused (exit 2) with what
// it was probably meant to be, naming the flag it was given to, in one line
// before the pointer to the help.
func TestNearMissesAreAnsweredWithWhatWasMeant(t *testing.T) {
	tests := []struct {
		args []string
		want string
		help string
	}{
		{[]string{"run", "--system", "Redis"}, `--system: unknown system "Redis" — did you mean "redis"?`, "run"},
		{[]string{"run", "--system", "zookeper"}, `--system: unknown system "zookeper" — did you mean "zookeeper"?`, "run"},
		{[]string{"run", "--system", "mongo"}, `--system: unknown system "mongo" (known: ` + strings.Join(system.Names(), ", ") + `)`, "run"},
		{[]string{"run", "--sytem", "redis"}, `unknown flag: --sytem — did you mean --system?`, "run"},
		{[]string{"run", "--sytem=redis"}, `unknown flag: --sytem — did you mean --system?`, "run"},
		{[]string{"run", "-system", "redis"}, `unknown shorthand flag: 's' in -system — did you mean --system?`, "run"},
		{[]string{"run", "--bogus"}, `unknown flag: --bogus`, "run"},
		{[]string{"run", "--workload", "fenced-countr"}, `--workload: unknown workload "fenced-countr" — did you mean "fenced-counter"?`, "run"},
		{[]string{"run", "--nemesis", "pauses"}, `--nemesis: unknown fault kind "pauses" — did you mean "pause"?`, "run"},
		{[]string{"run", "--nemesis", "pause,clok"}, `--nemesis: unknown fault kind "clok" — did you mean "clock"?`, "run"},
		{[]string{"run", "--nemesis", "meteor"}, `--nemesis: unknown fault kind "meteor" (want a comma-separated list of [pause crash partition clock-jump clock-drift delay], clock or all)`, "run"},
		{[]string{"repro", "kleppman-gc-pause"}, `unknown scenario "kleppman-gc-pause" — did you mean "kleppmann-gc-pause"?`, "repro"},
		{[]string{"scenarios", "--show", "redis-failvoer"}, `--show: unknown scenario "redis-failvoer" — did you mean "redis-failover"?`, "scenarios"},
		{[]string{"explore", "--hunt", "redis-failover"}, `--hunt: scenario "redis-failover" has 2 hunts, name one: redis-failover/unsafe, redis-failover/unsafe-wait`, "explore"},
		{[]string{"explore", "--hunt", "redis-failvoer"}, `--hunt: unknown hunt "redis-failvoer" — did you mean "redis-failover/unsafe" or "redis-failover/unsafe-wait"?`, "explore"},
		{[]string{"explore", "--hunt", "baseline-redis"}, `--hunt: scenario "baseline-redis" has no hunt: none of its 2 variants declares a kind of violation for random faults to find`, "explore"},
		{[]string{"explore", "--hnut", "redis-failover/unsafe"}, `unknown flag: --hnut — did you mean --hunt?`, "explore"},
		{[]string{"rnu"}, `unknown command "rnu" for "locklab" — did you mean "run"?`, ""},
		{[]string{"Run"}, `unknown command "Run" for "locklab" — did you mean "run"?`, ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "locklab"`, ""},
		{[]string{"systems", "Redis"}, `unknown system, workload or storage mode "Redis" — did you mean "redis"?`, "systems"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code, stdout)
			help := strings.TrimSpace("locklab " + tc.help)
			assert.Equal(t, "locklab: "+tc.want+"\nSee '"+help+" --help'.\n", stderr)
		})
	}
}
