package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/scenario"
)

// TestRunLivenessFlagsReachTheTest: a typed value is used as typed (a typed 0
// turns the share off rather than meaning the default); an untyped flag
// leaves the test's field at its default.
func TestRunLivenessFlagsReachTheTest(t *testing.T) {
	tests := []struct {
		args  []string
		check func(t *testing.T, tt scenario.Test)
	}{
		{nil, func(t *testing.T, tt scenario.Test) {
			assert.Equal(t, scenario.Liveness{}, tt.Liveness)
			assert.Zero(t, tt.MaxHistoryEvents)
		}},
		{[]string{"--liveness-min-success", "0"}, func(t *testing.T, tt scenario.Test) {
			require.NotNil(t, tt.Liveness.MinSuccess)
			assert.Zero(t, *tt.Liveness.MinSuccess)
		}},
		{[]string{"--liveness-min-success", "80%", "--liveness-min-attempts", "3", "--liveness-max-stall", "20s",
			"--liveness-max-recovery", "1m", "--max-history-events", "5000000"}, func(t *testing.T, tt scenario.Test) {
			require.NotNil(t, tt.Liveness.MinSuccess)
			assert.InDelta(t, 0.8, *tt.Liveness.MinSuccess, 1e-12)
			assert.Equal(t, 3, tt.Liveness.MinAttempts)
			assert.Equal(t, 20*time.Second, tt.Liveness.StallMax)
			assert.Equal(t, time.Minute, tt.Liveness.RecoveryMax)
			assert.Equal(t, int64(5_000_000), tt.MaxHistoryEvents)
		}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f := runFlags{system: "redis", workload: "fenced-counter", storage: "unfenced", nemesis: "none"}
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			f.live.register(fs)
			require.NoError(t, fs.Parse(tc.args))
			tt, err := f.test(fs)
			require.NoError(t, err)
			tc.check(t, tt)
		})
	}
}

func TestRunLivenessFlagsRefuseBadValues(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--liveness-min-success", "1.5"}, `--liveness-min-success "1.5": must be between 0 and 1`},
		{[]string{"--liveness-min-success", "most"}, `want a share between 0 and 1 or a percentage`},
		{[]string{"--liveness-min-attempts", "0"}, `--liveness-min-attempts "0": must be at least 1`},
		{[]string{"--liveness-max-stall", "0"}, `--liveness-max-stall "0": must be positive`},
		{[]string{"--liveness-max-recovery", "soon"}, `--liveness-max-recovery "soon": want a duration such as 10s or 1m30s`},
		{[]string{"--max-history-events", "0"}, `--max-history-events "0": must be at least 1`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, append([]string{"run"}, tc.args...)...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestRunRefusesARunTooLargeForMemory: `run --time 10000h` used to grow to
// gigabytes without a word; it is refused after its first simulated minute,
// with the estimate and the flag that raises the limit, and writes nothing.
func TestRunRefusesARunTooLargeForMemory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	code, _, stderr := capture(t, "run", "--time", "10000h", "--seed", "1", "--out", out)
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, "would record about 2.5 billion history events")
	assert.Contains(t, stderr, "the limit is 1,000,000 events")
	assert.Contains(t, stderr, "--max-history-events")
	assert.NoDirExists(t, out)
}

// TestRunSaysWhenClientsStarve: 20 clients that hold the lock for 1 s and
// wait at most 1 s for it mostly time out: liveness is invalid (exit 3) and
// says how many clients never got the lock; the user's limits, typed on the
// command line, judge it valid and are in the replay command.
func TestRunSaysWhenClientsStarve(t *testing.T) {
	args := []string{"run", "--clients", "20", "-w", "hold=1s", "-w", "wait=1s", "--time", "20s", "--seed", "1"}
	code, stdout, _ := capture(t, append(args, "--out", filepath.Join(t.TempDir(), "r"))...)
	assert.Equal(t, judge.ExitUnknown, code, stdout)
	assert.Regexp(t, `liveness +INVALID +only \d\.\d% of \d+ acquire attempts succeeded \(at least 50\.0% required\); \d+ of 20 clients never acquired the lock`, stdout)

	code, stdout, _ = capture(t, append(args, "--liveness-min-success", "5%", "--liveness-min-attempts", "20",
		"--out", filepath.Join(t.TempDir(), "r"))...)
	assert.Regexp(t, `liveness +VALID .*\(at least 5\.0% required\)`, stdout)
	assert.Contains(t, stdout, "--liveness-min-success 0.05 --liveness-min-attempts 20")
	assert.Equal(t, judge.ExitValid, code, stdout)
}

// fakeClock is a wall clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time                { return c.t }
func (c *fakeClock) advance(d time.Duration)       { c.t = c.t.Add(d) }
func (c *fakeClock) at(d time.Duration) *fakeClock { c.t = time.Unix(0, 0).Add(d); return c }

// TestRunProgress: a quick run prints nothing; a long one prints a line every
// 5 s of wall time once 2 s have passed (simulated time, rate, history, ETA),
// then that it is checking; on a terminal it draws a bar and clears it.
func TestRunProgress(t *testing.T) {
	total := time.Hour
	at := func(sim time.Duration, done bool) harness.Progress {
		return harness.Progress{Simulated: sim, Total: total, KernelEvents: uint64(sim / time.Millisecond),
			HistoryEvents: int(sim / (10 * time.Millisecond)), Done: done}
	}
	t.Run("quick", func(t *testing.T) {
		var b bytes.Buffer
		clock := (&fakeClock{}).at(0)
		p := newRunProgress(&b, false, clock.now)
		for i := range 10 {
			clock.advance(150 * time.Millisecond)
			p.update(at(time.Duration(i)*time.Minute, false))
		}
		p.update(at(total, true))
		p.finish()
		assert.Empty(t, b.String())
	})
	t.Run("plain lines", func(t *testing.T) {
		var b bytes.Buffer
		clock := (&fakeClock{}).at(0)
		p := newRunProgress(&b, false, clock.now)
		for s := 1; s <= 12; s++ { // one update a wall second, a simulated minute each
			clock.advance(time.Second)
			p.update(at(time.Duration(s)*time.Minute, false))
		}
		clock.advance(time.Second)
		p.update(at(total, true))
		assert.Equal(t, ""+
			"locklab: simulated 2m0s of 1h0m0s (3%), 60k kernel events/s, 12,000 history events, ETA 58s\n"+
			"locklab: simulated 7m0s of 1h0m0s (11%), 60k kernel events/s, 42,000 history events, ETA 53s\n"+
			"locklab: simulated 12m0s of 1h0m0s (20%), 60k kernel events/s, 72,000 history events, ETA 48s\n"+
			"locklab: simulated 1h0m0s in 13s; checking 360,000 history events\n", b.String())
	})
	t.Run("terminal bar", func(t *testing.T) {
		var b bytes.Buffer
		clock := (&fakeClock{}).at(0)
		p := newRunProgress(&b, true, clock.now)
		for s := 1; s <= 4; s++ {
			clock.advance(time.Second)
			p.update(at(time.Duration(s)*time.Minute, false))
		}
		p.finish()
		assert.Contains(t, b.String(), "simulated 2m0s of 1h0m0s (3%), 60k kernel events/s")
		assert.Contains(t, b.String(), "\r", "the bar redraws in place")
	})
}
