package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	liveetcd "github.com/locklab/locklab/backends/etcd/live"
	livezk "github.com/locklab/locklab/backends/zookeeper/live"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// etcdZKScale runs the etcd scenarios at a fifth of their time (heartbeat
// 20 ms, election 200 ms, session TTL 2 s) and the ZooKeeper ones at 0.3
// (tickTime 30 ms, session timeout 3 s): at 0.2 a loaded machine (load
// average 12 on two cores) delayed the leader's expiry of a session and the
// waiter's watch by more than the holder's margin (its belief outlives the
// session by 2/3 of the session timeout), and the overlap did not happen.
func etcdZKScale(system string) float64 {
	if system == "zookeeper" {
		return 0.3
	}
	return 0.2
}

// etcdZKCrossValidated are the catalog variants on real etcd and ZooKeeper
// whose simulated and live verdicts must agree (docs/live.md, "Live etcd and
// ZooKeeper"). The extended ones run only with LOCKLAB_LIVE_MEASURE=1, to
// keep the default live cost of `go test ./...` small.
var etcdZKCrossValidated = []struct {
	scenario, variant string
	extended          bool
	// race: the variant's story needs one outcome of a real-time race
	// (which client wins the first grant). Every row is tried up to three
	// times (reproLive), each miss logged; these rows need it most.
	race bool
}{
	{"kleppmann-gc-pause", "etcd-unsafe", false, false},
	{"kleppmann-gc-pause", "etcd-fixed", false, false},
	{"kleppmann-gc-pause", "etcd-guarded", true, false},
	{"kleppmann-gc-pause", "zookeeper-unsafe", false, false},
	{"kleppmann-gc-pause", "zookeeper-fixed", false, false},
	{"zk-session-expiry", "unsafe", false, false},
	{"zk-session-expiry", "fixed", false, false},
	{"etcd-lease-expiry", "unsafe", true, false},
	{"etcd-lease-expiry", "fenced", true, false},
	{"etcd-lease-expiry", "guarded", true, false},
	// c2 must queue behind the first holder; live, it wins the first grant
	// in about one run of two and is cut off as the holder instead.
	{"etcd-jepsen-3.4.3-lock", "fixed", true, true},
	{"zk-partitioned-holder", "unsafe", true, false},
	{"zk-partitioned-holder", "fixed", true, false},
}

// requireServer skips the test when the system's server is not installed
// (the error names the Debian package).
func requireServer(t *testing.T, system string) {
	t.Helper()
	realTime(t)
	var err error
	switch system {
	case "etcd":
		_, err = liveetcd.Binary()
	case "zookeeper":
		_, err = livezk.Java()
	}
	var missing *proc.MissingError
	if errors.As(err, &missing) {
		t.Skip(err)
	}
	require.NoError(t, err)
}

// TestEtcdAndZooKeeperSimulatedAndLiveAgree runs each variant in the
// simulator and live on real etcd / ZooKeeper, and compares the verdicts of
// every check the variant names with each other and with the expectation;
// the live run must match the variant (its assertions included: the story
// names the lease or session expiry that the real servers did, seen by
// locklab's watch).
func TestEtcdAndZooKeeperSimulatedAndLiveAgree(t *testing.T) {
	crossValidation(t)
	for _, tc := range etcdZKCrossValidated {
		t.Run(tc.scenario+"/"+tc.variant, func(t *testing.T) {
			if tc.extended && os.Getenv("LOCKLAB_LIVE_MEASURE") == "" {
				t.Skip("extended row: set LOCKLAB_LIVE_MEASURE=1")
			}
			s, err := scenario.Find(tc.scenario)
			require.NoError(t, err)
			v, err := s.FindVariant(tc.variant)
			require.NoError(t, err)
			requireServer(t, v.Test.System)
			simulated, err := harness.Repro(v)
			require.NoError(t, err)
			real := reproLive(t, v, Config{Scale: etcdZKScale(v.Test.System)})
			checks := sortedChecks(v.Expect)
			if _, named := v.Expect["lease"]; !named && verdict(simulated.Result, "lease") != "not run" {
				// The lease check (was a grant made while another client's
				// lease ran?) compares the client's belief with the servers'
				// expiry, the heart of the model: it must agree too.
				checks = append(checks, "lease")
			}
			for _, check := range checks {
				sim, lv := verdict(simulated.Result, check), verdict(real.Result, check)
				if want, named := v.Expect[check]; named {
					assert.Equal(t, string(want), sim, "%s simulated", check)
				}
				assert.Equal(t, sim, lv, "%s: simulated %s, live %s (%s)", check, sim, lv, reason(real.Result, check))
				t.Logf("| %s | %s | %s | %s | %s |", tc.scenario, tc.variant, check, sim, lv)
			}
			assert.True(t, real.Match(), "live: %v", real.Mismatches)
		})
	}
}

func sortedChecks[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEtcdAndZooKeeperRefuseWhatTheyCannotRun: faults and options the real
// servers or libraries cannot perform are refused before anything starts,
// with the reason.
func TestEtcdAndZooKeeperRefuseWhatTheyCannotRun(t *testing.T) {
	noLeak(t)
	d := nemesis.Duration(time.Second)
	for _, tc := range []struct {
		name, system string
		options      map[string]string
		fault        *nemesis.Fault
		want         string
	}{
		{"etcd member clock", "etcd", nil, &nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"etcd1"}, Amount: d}, "etcd is a Go program"},
		{"etcd leader clock", "etcd", nil, &nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"leader"}, Amount: d}, "libfaketime cannot move it"},
		{"etcd member partition", "etcd", nil, &nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"leader"}, Duration: d}, "X-Server-From"},
		{"etcd member split", "etcd", nil, &nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"c1", "etcd1"}, {"etcd2", "etcd3"}}, Duration: d}, "between etcd members is not built"},
		{"etcd message delay", "etcd", nil, &nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"servers"}, Amount: d}, "do not pass through locklab"},
		{"etcd 3.4.3 client", "etcd", map[string]string{"check-after-wait": "false"}, nil, "always checks its own key after waiting"},
		{"etcd txn lock", "etcd", map[string]string{"lock": "txn"}, nil, "only clientv3's concurrency.Mutex runs live"},
		{"etcd request timeout", "etcd", map[string]string{"request-timeout": "1s"}, nil, "clientv3 has no per-attempt timeout"},
		{"zookeeper server clock", "zookeeper", nil, &nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"zk1"}, Amount: d}, "monotonic clock"},
		{"zookeeper one-way server cut", "zookeeper", nil, &nemesis.Fault{Kind: nemesis.Partition,
			From: []string{"leader"}, To: []string{"followers"}, Duration: d}, "holds both of its directions"},
		{"zookeeper read timeout", "zookeeper", map[string]string{"read-timeout": "1s"}, nil, "fixed at 2/3 of the session timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			test := scenario.Test{System: tc.system, SystemOptions: tc.options}
			if tc.fault != nil {
				test.Schedule = &nemesis.Schedule{Faults: []nemesis.Fault{*tc.fault}}
			}
			_, err := Prepare(test, Config{})
			require.ErrorContains(t, err, tc.want)
			assert.ErrorIs(t, err, ErrNotLive, "repro --live --all skips it, naming the reason")
		})
	}
	for _, ok := range []struct {
		name, system string
		fault        nemesis.Fault
	}{
		{"etcd client isolated", "etcd", nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"c2"}, Duration: d}},
		{"etcd client cut from the leader", "etcd", nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"c2"}, {"leader"}}, Duration: d}},
		{"etcd member paused", "etcd", nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"leader"}, Duration: d}},
		{"etcd member crashed", "etcd", nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"etcd2"}, Duration: d}},
		{"zookeeper client cut from its server", "zookeeper", nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"server-of:c1"}, Duration: d}},
		{"zookeeper holder's server cut off", "zookeeper", nemesis.Fault{Kind: nemesis.Partition,
			Groups: [][]string{{"c1", "server-of:c1"}, {"servers-but:c1"}}, Duration: d}},
		{"zookeeper leader isolated", "zookeeper", nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"leader"}, Duration: d}},
		{"zookeeper client clock", "zookeeper", nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c1"}, Amount: d}},
	} {
		t.Run("runs: "+ok.name, func(t *testing.T) {
			_, err := Prepare(scenario.Test{System: ok.system, Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{ok.fault}}}, Config{})
			require.NoError(t, err)
		})
	}
}

// TestEtcdAndZooKeeperLeaveNothingBehind interrupts a live run mid-way
// (Ctrl-C) and checks that no server process it started is left and no
// port its servers listened on still listens.
func TestEtcdAndZooKeeperLeaveNothingBehind(t *testing.T) {
	for _, system := range []string{"etcd", "zookeeper"} {
		t.Run(system, func(t *testing.T) {
			requireServer(t, system)
			noLeak(t)
			var dir string
			var res scenario.Result
			var err error
			// Interrupt once the servers are up: on a loaded machine they may take
			// longer than the first delay to start, and an interrupted start proves
			// nothing about a run, so the interruption comes later each time.
			for _, after := range []time.Duration{4 * time.Second, 10 * time.Second, 20 * time.Second} {
				dir = t.TempDir()
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(after, cancel)
				res, err = Run(ctx, scenario.Test{System: system, Clients: 2, Seed: 1, Time: time.Minute}, Config{Scale: etcdZKScale(system), Dir: dir})
				cancel()
				if errors.Is(err, ErrInterrupted) {
					break
				}
				t.Logf("interrupted after %v, before the run started (%v): again, later", after, err)
				assert.Empty(t, processesUnder(t, dir), "server processes left behind by an interrupted start")
			}
			require.ErrorIs(t, err, ErrInterrupted)
			assert.NotEmpty(t, res.Events, "the run was under way when it was interrupted")
			assert.Empty(t, processesUnder(t, dir), "server processes left behind")
			ports := portsIn(t, dir)
			require.NotEmpty(t, ports, "the servers' logs and configs name their ports")
			for _, p := range ports {
				c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), 200*time.Millisecond)
				if err == nil {
					c.Close()
				}
				assert.Error(t, err, "port %d still listens", p)
			}
		})
	}
}

// processesUnder lists the live processes whose command line names dir.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), dir) {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

// listenPort finds the ports servers listen on: etcd's listen URLs in its
// log, ZooKeeper's client, quorum and election ports in zoo.cfg.
var listenPort = regexp.MustCompile(`"listen-(?:client|peer)-urls":\["http://127\.0\.0\.1:(\d+)"|clientPort=(\d+)|server\.\d+=127\.0\.0\.1:(\d+):(\d+)`)

// portsIn collects the ports the servers under dir listened on, from
// their logs and configuration files.
func portsIn(t *testing.T, dir string) []int {
	t.Helper()
	var ports []int
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".log") || strings.HasSuffix(p, ".cfg")) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range listenPort.FindAllSubmatch(b, -1) {
			for _, g := range m[1:] {
				var n int
				fmt.Sscan(string(g), &n)
				if n > 0 && !slices.Contains(ports, n) {
					ports = append(ports, n)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return ports
}
