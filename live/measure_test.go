package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	liveraft "github.com/locklab/locklab/backends/raftkv/live"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/scenario"
)

// The measurements of docs/live.md. They take minutes of real
// time, so they run only with LOCKLAB_LIVE_MEASURE=1:
//
//	LOCKLAB_LIVE_MEASURE=1 go test -run Measure -v ./live
func measuring(t *testing.T) {
	if os.Getenv("LOCKLAB_LIVE_MEASURE") == "" {
		t.Skip("set LOCKLAB_LIVE_MEASURE=1 to measure (minutes of real time)")
	}
}

func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// TestMeasureElectionAfterLeaderPartition isolates the leader of a fresh
// 3-node hashicorp/raft group and times the election of another leader, for
// hashicorp/raft's default timing and a short one.
func TestMeasureElectionAfterLeaderPartition(t *testing.T) {
	measuring(t)
	noLeak(t)
	for _, timing := range []struct {
		name string
		fast bool
	}{{"defaults (heartbeat 1s, election 1s, lease 500ms)", false}, {"fast (heartbeat 50ms, election 50ms, lease 25ms)", true}} {
		var ds []time.Duration
		for range 12 {
			o := liveraft.DefaultOptions()
			if timing.fast {
				o = o.Fast()
			}
			net := faultnet.New()
			c, err := liveraft.NewCluster(net, o)
			require.NoError(t, err)
			old, err := c.WaitLeader(30 * time.Second)
			require.NoError(t, err)
			time.Sleep(3 * o.HeartbeatTimeout) // settled
			start := time.Now()
			for _, n := range c.Names() {
				if n != old {
					net.Block(old, n)
					net.Block(n, old)
				}
			}
			for {
				fresh := ""
				for _, n := range c.Nodes() {
					if n.Name() != old && n.Raft().State() == raft.Leader {
						fresh = n.Name()
					}
				}
				if fresh != "" {
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
			ds = append(ds, time.Since(start))
			net.Close()
			c.Close()
		}
		t.Logf("hashicorp/raft %s: election after leader partition over %d runs: p50 %v, max %v", timing.name, len(ds),
			quantile(ds, 0.5).Round(time.Millisecond), quantile(ds, 1).Round(time.Millisecond))
	}
	// The simulated raftkv (etcd raft, election timeout 1s in [1s, 2s)):
	// the same cut in raftkv-leader-partition, over seeds.
	var ds []time.Duration
	for seed := uint64(1); seed <= 12; seed++ {
		s, _ := scenario.Find("raftkv-leader-partition")
		v, _ := s.FindVariant("fixed")
		tt := v.Test
		tt.Seed = seed
		r, err := harness.Run(tt)
		require.NoError(t, err)
		cut := time.Duration(-1)
		for _, e := range r.Events {
			if e.Process == history.NemesisProcess && e.Type == history.Start {
				cut = time.Duration(e.Time)
			}
		}
		els, _ := r.SystemFigures["elections"]
		ds = append(ds, firstElectionAfter(t, els, cut))
	}
	t.Logf("simulated raftkv (etcd raft, election-timeout 1s): election after leader partition over %d seeds: p50 %v, max %v",
		len(ds), quantile(ds, 0.5).Round(time.Millisecond), quantile(ds, 1).Round(time.Millisecond))
}

func firstElectionAfter(t *testing.T, els any, cut time.Duration) time.Duration {
	b, err := json.Marshal(els)
	require.NoError(t, err)
	var v []struct {
		AtMS float64 `json:"at_ms"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	for _, e := range v {
		if at := time.Duration(e.AtMS * 1e6); at > cut {
			return at - cut
		}
	}
	t.Fatalf("no election after the cut at %v in %v", cut, els)
	return 0
}

// logLatency runs test live and simulated and logs a table row of each
// acquire latency: the acquires that succeeded, p50 and p99.
func logLatency(t *testing.T, name string, test scenario.Test) {
	t.Helper()
	lr, err := Run(context.Background(), test, Config{})
	require.NoError(t, err)
	sr, err := harness.Run(test)
	require.NoError(t, err)
	ls, ss := acquireLatencies(lr.Events), acquireLatencies(sr.Events)
	t.Logf("| %s | %d | live: %d, %v, %v | simulated: %d, %v, %v |", name, test.Clients,
		len(ls), quantile(ls, 0.5).Round(10*time.Microsecond), quantile(ls, 0.99).Round(10*time.Microsecond),
		len(ss), quantile(ss, 0.5).Round(10*time.Microsecond), quantile(ss, 0.99).Round(10*time.Microsecond))
}

// logWallTime reproduces a catalog variant simulated and live at full time
// and logs a table row of both wall times and whether each matched.
func logWallTime(t *testing.T, name, variant string) {
	t.Helper()
	s, _ := scenario.Find(name)
	v, _ := s.FindVariant(variant)
	start := time.Now()
	so, err := harness.Repro(v)
	require.NoError(t, err)
	simWall := time.Since(start)
	start = time.Now()
	lo, err := Repro(context.Background(), v, Config{})
	require.NoError(t, err)
	liveWall := time.Since(start)
	t.Logf("| %s | %s | %v | %v | %.0fx | sim %s, live %s |", name, variant, liveWall.Round(time.Millisecond),
		simWall.Round(time.Millisecond), liveWall.Seconds()/simWall.Seconds(), match(so), match(lo))
}

// TestMeasureAcquireLatency runs fenced-counter without faults for 20 s with
// 1 and with 5 clients, live and simulated, and reports the acquire latency.
func TestMeasureAcquireLatency(t *testing.T) {
	measuring(t)
	noLeak(t)
	for _, clients := range []int{1, 5} {
		logLatency(t, "raftkv (live hashicorp/raft, simulated etcd raft)", scenario.Test{System: "raftkv", Clients: clients, Seed: 1, Time: 20 * time.Second})
	}
}

func acquireLatencies(events []history.Event) []time.Duration {
	open := map[int]int64{}
	var out []time.Duration
	for _, e := range events {
		if e.F != history.FAcquire {
			continue
		}
		switch e.Type {
		case history.Invoke:
			open[e.Process] = e.Time
		case history.OK:
			out = append(out, time.Duration(e.Time-open[e.Process]))
		}
	}
	return out
}

// TestMeasureWallTime runs each cross-validated scenario live at full time
// and simulated, and reports both wall times.
func TestMeasureWallTime(t *testing.T) {
	measuring(t)
	noLeak(t)
	for _, tc := range crossValidated {
		logWallTime(t, tc.scenario, tc.variant)
	}
}

func match(o harness.Outcome) string {
	if o.Match() {
		return "MATCH"
	}
	return fmt.Sprintf("MISMATCH %v", o.Mismatches)
}

// TestMeasurePostgreSQLWallTime runs each PostgreSQL cross-validated
// variant live at full time and simulated, and reports both wall times.
func TestMeasurePostgreSQLWallTime(t *testing.T) {
	measuring(t)
	needPostgres(t)
	noLeak(t)
	for _, tc := range dbCrossValidated {
		logWallTime(t, tc.scenario, tc.variant)
	}
}

// TestMeasurePostgreSQLAcquireLatency runs fenced-counter without faults
// for 20 s with 1 and with 5 clients in each lock mode, live on PostgreSQL
// and simulated, and reports the acquire latency.
func TestMeasurePostgreSQLAcquireLatency(t *testing.T) {
	measuring(t)
	needPostgres(t)
	noLeak(t)
	for _, mode := range []string{"for-update", "advisory", "unique-row"} {
		for _, clients := range []int{1, 5} {
			logLatency(t, "database mode="+mode, scenario.Test{System: "database", Clients: clients, Seed: 1, Time: 20 * time.Second,
				SystemOptions: map[string]string{"mode": mode}})
		}
	}
}

// TestMeasureEtcdZooKeeperAcquireLatency runs fenced-counter without faults
// for 20 s with 1 and 5 clients on real etcd and ZooKeeper and simulated,
// and reports the acquire latency (docs/live.md, "Live etcd and ZooKeeper").
func TestMeasureEtcdZooKeeperAcquireLatency(t *testing.T) {
	measuring(t)
	for _, system := range []string{"etcd", "zookeeper"} {
		requireServer(t, system)
		for _, clients := range []int{1, 5} {
			noLeak(t)
			logLatency(t, system, scenario.Test{System: system, Clients: clients, Seed: 1, Time: 20 * time.Second})
		}
	}
}

// TestMeasureEtcdZooKeeperWallTime runs each etcd and ZooKeeper
// cross-validated variant live at full time (scale 1) and simulated, and
// reports both wall times and whether each matched.
func TestMeasureEtcdZooKeeperWallTime(t *testing.T) {
	measuring(t)
	for _, tc := range etcdZKCrossValidated {
		s, _ := scenario.Find(tc.scenario)
		v, _ := s.FindVariant(tc.variant)
		requireServer(t, v.Test.System)
		noLeak(t)
		logWallTime(t, tc.scenario, tc.variant)
	}
}

// TestMeasureRedisAcquireLatency runs fenced-counter without faults for
// 10 s with 1 and with 5 clients on real redis-server (one instance; a
// primary with two replicas and WAIT 1; Redlock over five instances), live
// and simulated, and reports the acquire latency.
func TestMeasureRedisAcquireLatency(t *testing.T) {
	measuring(t)
	needRedis(t)
	noLeakRedis(t)
	for _, sys := range []struct {
		name, system string
		options      map[string]string
	}{
		{"redis", "redis", nil},
		{"redis replicas=2 wait=1 (Sentinel)", "redis", map[string]string{"replicas": "2", "wait": "1"}},
		{"redlock (5 instances, redsync)", "redlock", nil},
	} {
		for _, clients := range []int{1, 5} {
			logLatency(t, sys.name, scenario.Test{System: sys.system, SystemOptions: sys.options, Clients: clients, Seed: 1, Time: 10 * time.Second})
		}
	}
}

// TestMeasureRedisWallTime runs each Redis and Redlock cross-validated
// variant live at full time and simulated, and reports both wall times.
func TestMeasureRedisWallTime(t *testing.T) {
	measuring(t)
	needRedis(t)
	noLeakRedis(t)
	for _, tc := range redisCrossValidated {
		logWallTime(t, tc.scenario, tc.variant)
	}
}
