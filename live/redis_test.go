package live

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/scenario"
)

// needRedis skips a test when redis-server or redis-sentinel is not
// installed (the message names the Debian package).
func needRedis(t *testing.T) {
	t.Helper()
	realTime(t)
	if _, err := proc.Binary("redis-server", "redis-server", "/usr/bin/redis-server"); err != nil {
		t.Skip(err)
	}
	if _, err := proc.Binary("redis-sentinel", "redis-sentinel", "/usr/bin/redis-sentinel"); err != nil {
		t.Skip(err)
	}
}

// noLeakRedis is noLeak, allowing internal/proc's process starter (a goroutine
// that lives as long as the harness, started by the first server).
func noLeakRedis(t *testing.T) {
	t.Helper()
	opts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/locklab/locklab/internal/proc.startLocked.func1.1")}
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// redisCrossValidated are the Redis and Redlock rows of docs/live.md's
// cross-validation table: the simulated and the live verdicts must agree.
// The failover rows need the Sentinel's own latency (up to about 1.2 s
// beyond down-after: a promotion is confirmed by an INFO every second) to
// fit inside the holder's section, so they run at half time with
// down-after=100ms; the two longer ones run only with LOCKLAB_LIVE_MEASURE=1.
var redisCrossValidated = []struct {
	scenario, variant string
	scale             float64
	options           map[string]string
	long              bool
}{
	{"kleppmann-gc-pause", "redis-unsafe", 0.2, nil, false},
	{"kleppmann-gc-pause", "redis-fixed", 0.2, nil, false},
	{"kleppmann-gc-pause", "redlock-unsafe", 0.2, redlockTimeout, false},
	{"kleppmann-gc-pause", "redlock-fixed", 0.2, redlockTimeout, false},
	{"redis-del-unlock", "unsafe", 0.2, nil, false},
	{"redis-del-unlock", "fixed", 0.2, nil, false},
	{"redlock-restart", "unsafe", 0.2, redlockTimeout, false},
	{"redlock-restart", "fixed-delay", 0.2, redlockTimeout, false},
	{"redlock-restart", "fixed-fsync", 0.2, redlockTimeout, false},
	{"redlock-clock-jump", "unsafe", 0.2, redlockTimeout, false},
	{"redis-failover", "unsafe", 0.5, fastSentinel, false},
	{"redis-failover", "fixed-wait", 0.5, fastSentinel, true},
	{"redis-failover", "unsafe-wait", 0.5, fastSentinel, true},
}

var fastSentinel = map[string]string{"down-after": "100ms"}

// redlockTimeout keeps Redlock's per-instance timeout at its unscaled 50 ms:
// scaled to 10 ms it is below the scheduling noise of a loaded 2-core
// machine, and a slow answer loses the majority a variant needs.
var redlockTimeout = map[string]string{"request-timeout": "50ms"}

// TestRedisAndRedlockSimulatedAndLiveAgree runs each variant in the
// simulator and live on real redis-server processes (and redis-sentinel),
// and compares the verdicts of every check the variant names.
func TestRedisAndRedlockSimulatedAndLiveAgree(t *testing.T) {
	crossValidation(t)
	needRedis(t)
	for _, tc := range redisCrossValidated {
		t.Run(tc.scenario+"/"+tc.variant, func(t *testing.T) {
			if tc.long && os.Getenv("LOCKLAB_LIVE_MEASURE") == "" {
				t.Skip("set LOCKLAB_LIVE_MEASURE=1 for the longer failover rows")
			}
			s, err := scenario.Find(tc.scenario)
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			simulated, err := harness.Repro(v)
			require.NoError(t, err)
			real := reproLive(t, v, Config{Scale: tc.scale, Options: tc.options})
			for check, want := range v.Expect {
				sim, lv := verdict(simulated.Result, check), verdict(real.Result, check)
				assert.Equal(t, string(want), sim, "%s simulated", check)
				assert.Equal(t, sim, lv, "%s: simulated %s, live %s (%s)", check, sim, lv, reason(real.Result, check))
				t.Logf("| %s | %s | %s | %s | %s |", tc.scenario, tc.variant, check, sim, lv)
			}
			for _, o := range real.Result.FaultOutcomes {
				assert.True(t, o.Fired, "live faults[%d] (%s) did not fire: %s", o.Fault, o.Kind, o.DidNotFire)
			}
			if tc.scenario == "redis-failover" {
				assert.Positive(t, real.Result.Summary.Faults["failover"], "the Sentinel promoted a replica")
			}
		})
	}
}

// TestOptionsWithoutALiveFormAreNamed: what real Redis or redsync cannot
// do is refused before anything starts, naming the option and why, and
// `repro --live --all` skips such a variant with that reason.
func TestOptionsWithoutALiveFormAreNamed(t *testing.T) {
	for _, tc := range []struct {
		system, option, want string
	}{
		{"redlock", "expiry-clock=mono", "redis-server expires keys on its wall clock"},
		{"redlock", "token=incr", "redsync sends a plain SET NX PX"},
		{"redlock", "fanout=sequential", "redsync asks every instance at once"},
		{"redlock", "elapsed-clock=wall", "redsync measures elapsed with time.Now"},
		{"redis", "reentrancy=server", "the live client takes each lock once"},
		{"redis", "expiry-clock=mono", "redis-server expires keys on its wall clock"},
	} {
		t.Run(tc.system+" "+tc.option, func(t *testing.T) {
			k, v, _ := strings.Cut(tc.option, "=")
			test := scenario.Test{System: tc.system, SystemOptions: map[string]string{k: v}}
			assert.Contains(t, Unavailable(test), tc.want)
			_, err := Prepare(test, Config{})
			require.ErrorIs(t, err, ErrNotLive)
			assert.ErrorContains(t, err, tc.option)
		})
	}
	assert.Contains(t, Unavailable(scenario.Test{System: "chubby"}), "system chubby has no live form")
	assert.Empty(t, Unavailable(scenario.Test{System: "redis", SystemOptions: map[string]string{"replicas": "2", "wait": "1"}}))
}

// TestARedisRunStopsOnCancelAndLeavesNothingBehind interrupts a live run
// of a primary, two replicas and a Sentinel under libfaketime: every
// redis-server and redis-sentinel it started is gone, none of their ports
// listens, and libfaketime left no shared-memory file.
func TestARedisRunStopsOnCancelAndLeavesNothingBehind(t *testing.T) {
	needRedis(t)
	noLeakRedis(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var pids, ports []int
	time.AfterFunc(1500*time.Millisecond, func() {
		pids, ports = serversUnder(dir)
		cancel()
	})
	_, err := Run(ctx, scenario.Test{System: "redis", Seed: 3, Time: time.Minute, Nemesis: "pause,clock-jump",
		SystemOptions: map[string]string{"replicas": "2"}}, Config{Dir: dir})
	require.ErrorIs(t, err, ErrInterrupted)
	require.Len(t, pids, 4, "redis, replica1, replica2 and sentinel were running")
	for i, pid := range pids {
		assert.True(t, processGone(pid), "process %d is gone", pid)
		assert.False(t, portListening(ports[i]), "port %d is closed", ports[i])
		assert.NoFileExists(t, fmt.Sprintf("/dev/shm/faketime_shm_%d", pid))
	}
}

// serversUnder lists the redis processes whose working directory (their
// data directory) is under dir, with the port each listens on (redis
// rewrites its command line to "redis-server 127.0.0.1:PORT").
func serversUnder(dir string) (pids, ports []int) {
	abs, _ := filepath.Abs(dir)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, abs) {
			continue
		}
		raw, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		for _, f := range strings.Fields(strings.ReplaceAll(string(raw), "\x00", " ")) {
			if a, p, ok := strings.Cut(f, "127.0.0.1:"); ok && a == "" {
				if port, err := strconv.Atoi(p); err == nil {
					pids, ports = append(pids, pid), append(ports, port)
				}
			}
		}
	}
	return pids, ports
}

// processGone reports whether pid no longer runs (a zombie counts as gone).
func processGone(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	line := string(raw)
	i := strings.LastIndexByte(line, ')')
	return i > 0 && len(line) > i+2 && line[i+2] == 'Z'
}

func portListening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
