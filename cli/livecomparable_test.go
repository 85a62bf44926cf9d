package cli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
)

// TestLiveComparableDrawsOnlyWhatLiveCanPerform: a simulated run of
// --nemesis random --live-comparable names, on its second line, the kinds
// the system's live form cannot perform, draws none of them, and its
// replay command keeps the flag.
func TestLiveComparableDrawsOnlyWhatLiveCanPerform(t *testing.T) {
	for _, tc := range []struct {
		system string
		left   string
		absent []nemesis.Kind
	}{
		{"etcd", "nemesis random draws no partition, clock-jump, clock-drift, delay, which etcd cannot perform live",
			[]nemesis.Kind{nemesis.Partition, nemesis.ClockJump, nemesis.ClockDrift, nemesis.Delay}},
		{"raftkv", "nemesis random draws no clock-drift, which raftkv cannot perform live", []nemesis.Kind{nemesis.ClockDrift}},
	} {
		t.Run(tc.system, func(t *testing.T) {
			for _, seed := range []string{"1", "3"} {
				dir := filepath.Join(t.TempDir(), "run")
				code, stdout, stderr := capture(t, "run", "--system", tc.system, "--nemesis", "random", "--live-comparable",
					"--clients", "3", "--time", "20s", "--seed", seed, "--out", dir)
				require.Contains(t, []int{judge.ExitValid, judge.ExitInvalid}, code, stderr)
				assert.Contains(t, stdout, "--nemesis random --live-comparable")
				assert.Contains(t, stdout, tc.left)
				s, err := nemesis.ReadFile(filepath.Join(dir, reports.ScheduleFile))
				require.NoError(t, err)
				for _, f := range s.Faults {
					assert.NotContains(t, tc.absent, f.Kind)
				}
			}
		})
	}
}
