package harness

import (
	"bytes"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

var raftkvSeeds = flag.Int("raftkv.seeds", 6, "seeds of the randomised raftkv safety sweep (TestRaftKVRandomFaults)")

// raftRun prepares and runs a test and returns the result with its cluster.
func raftRun(t testing.TB, tc scenario.Test) (scenario.Result, *raftkv.Cluster) {
	t.Helper()
	p, err := Prepare(tc)
	require.NoError(t, err)
	r, err := p.Run()
	require.NoError(t, err)
	c := raftkv.ClusterOf(p.World)
	require.NotNil(t, c)
	return r, c
}

// leaderFailures is a schedule with elections, partitions and crash-restarts:
// the leader is cut off, a follower crashes and restarts, the leader crashes
// and restarts, and every node crashes at once and restarts.
var leaderFailures = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Partition, At: nemesis.Duration(5 * time.Second), Targets: []string{"leader"}, Duration: nemesis.Duration(5 * time.Second)},
	{Kind: nemesis.Crash, At: nemesis.Duration(14 * time.Second), Targets: []string{"followers"}, Duration: nemesis.Duration(2 * time.Second)},
	{Kind: nemesis.Crash, At: nemesis.Duration(20 * time.Second), Targets: []string{"leader"}, Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.Pause, At: nemesis.Duration(26 * time.Second), Targets: []string{"leader"}, Duration: nemesis.Duration(3 * time.Second)},
	{Kind: nemesis.Crash, At: nemesis.Duration(32 * time.Second), Targets: []string{"servers"}, Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.ClockJump, At: nemesis.Duration(36 * time.Second), Targets: []string{"n2"}, Amount: nemesis.Duration(-20 * time.Second)},
}}

func TestRaftKVDeterminism(t *testing.T) {
	tests := []struct {
		name string
		test scenario.Test
	}{
		{"elections, partitions and crash-restarts", scenario.Test{System: "raftkv", Time: 40 * time.Second, Schedule: &leaderFailures,
			Storage: storage.Fenced}},
		{"random faults, swarm", scenario.Test{System: "raftkv", Time: 40 * time.Second, Nemesis: "random"}},
		{"5 nodes, random partitions and crashes", scenario.Test{System: "raftkv", Time: 40 * time.Second, Nemesis: "partition,crash",
			SystemOptions: map[string]string{"nodes": "5"}}},
		{"reentrant workload, client-stamped leases", scenario.Test{System: "raftkv", Workload: "reentrant", Time: 20 * time.Second,
			Nemesis: "pause,clock", SystemOptions: map[string]string{"stamp": "client"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := tc.test, tc.test, tc.test
			a.Seed, b.Seed, c.Seed = 7, 7, 8
			ra, ca := raftRun(t, a)
			rb, cb := raftRun(t, b)
			rc, _ := raftRun(t, c)
			ha, hb, hc := historyBytes(t, ra), historyBytes(t, rb), historyBytes(t, rc)
			require.Greater(t, bytes.Count(ha, []byte("\n")), 100)
			assert.True(t, bytes.Equal(ha, hb), "the same seed must give a byte-identical history")
			assert.False(t, bytes.Equal(ha, hc), "another seed must give another history")
			assert.Equal(t, ca.Audit().Elections(), cb.Audit().Elections(), "the same elections at the same times")
			assert.Equal(t, ra.KernelEvents, rb.KernelEvents)
		})
	}
	r, c := raftRun(t, scenario.Test{System: "raftkv", Time: 40 * time.Second, Schedule: &leaderFailures, Seed: 7})
	assert.GreaterOrEqual(t, len(c.Audit().Elections()), 4, "the schedule forces elections")
	assert.Equal(t, 3, r.Summary.Faults["crash"])
	assert.Empty(t, c.Violations())
}

// randomSafety is the property every raftkv run must have, whatever the
// faults: Raft's guarantees hold (audit), the fencing tokens are monotonic,
// and with storage fencing reads and writes every critical section is atomic.
func randomSafety(t *testing.T, r scenario.Result, c *raftkv.Cluster) {
	t.Helper()
	replay := "locklab run " + strings.Join(r.Test.Args(), " ")
	assert.Empty(t, c.Violations(), "Raft safety: %s", replay)
	assert.NoError(t, scenario.TokensMonotonic(r), replay)
	cs := verdict(r, "critical-sections")
	assert.Equal(t, models.Valid, cs.Result, "%s: %s", replay, cs.Reason)
	assert.Positive(t, r.Summary.Ops[history.FAcquire].OK, replay)
}

func TestRaftKVRandomFaults(t *testing.T) {
	kinds := []string{"random", "partition,crash", "pause,clock", "partition,crash,clock,pause"}
	for seed := range uint64(*raftkvSeeds) {
		nodes := []string{"3", "5"}[seed%2]
		tc := scenario.Test{System: "raftkv", Seed: seed, Time: 40 * time.Second, Nemesis: kinds[seed%uint64(len(kinds))],
			Storage: storage.Fenced, FenceReads: true, SystemOptions: map[string]string{"nodes": nodes}}
		t.Run(fmt.Sprintf("seed%d-%s-%snodes", seed, tc.Nemesis, nodes), func(t *testing.T) {
			r, c := raftRun(t, tc)
			randomSafety(t, r, c)
		})
	}
}

// allCrash crashes every node at once, twice, each time well after client
// commands were acknowledged.
var allCrash = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.Crash, At: nemesis.Duration(5500 * time.Millisecond), Targets: []string{"servers"}, Duration: nemesis.Duration(time.Second)},
	{Kind: nemesis.Crash, At: nemesis.Duration(12300 * time.Millisecond), Targets: []string{"servers"}, Duration: nemesis.Duration(time.Second)},
}}

func TestAuditCatchesLostWritesWithoutFsync(t *testing.T) {
	tests := []struct {
		fsync string
		safe  bool
	}{
		{"always", true},
		{"interval", false},
	}
	for _, tc := range tests {
		t.Run(tc.fsync, func(t *testing.T) {
			_, c := raftRun(t, scenario.Test{System: "raftkv", Seed: 3, Time: 20 * time.Second, Schedule: &allCrash,
				SystemOptions: map[string]string{"fsync": tc.fsync, "fsync-interval": "2s", "initial-leader": "n1"}})
			v := c.Violations()
			if tc.safe {
				assert.Empty(t, v)
				return
			}
			require.NotEmpty(t, v, "a crash loses acknowledged entries that were not synced")
			assert.Contains(t, strings.Join(v, "\n"), "committed entry lost")
			t.Logf("fsync=interval: %d violations, first: %s", len(v), v[0])
		})
	}
}

func TestRaftKVScenarioFigures(t *testing.T) {
	s, err := scenario.Find("raftkv-leader-partition")
	require.NoError(t, err)
	v, err := s.FindVariant("fixed")
	require.NoError(t, err)
	r, c := raftRun(t, v.Test)
	g, ok := scenario.FaultGap(r.Events)
	require.True(t, ok)
	el := c.Audit().Elections()
	require.GreaterOrEqual(t, len(el), 2)
	t.Logf("raftkv-leader-partition: availability gap %v (no acquire succeeded from %v to %v); new leader %s elected at %v after %v without a leader",
		g.Length(), g.From, g.To, raftkv.NodeName(el[len(el)-1].Leader), el[len(el)-1].At, el[len(el)-1].Leaderless)
	assert.Greater(t, g.Length(), raftkv.DefaultOptions().ElectionTimeout, "nothing is granted before a new leader is elected")
	assert.Empty(t, c.Violations())

	alone, _ := raftRun(t, scenario.Test{System: "raftkv", Seed: 1, Clients: 1, Time: 20 * time.Second})
	lat := acquireLatencies(alone.Events)
	t.Logf("one client, no contention, no faults: %d acquires, latency p50 %v, p99 %v, max %v (simulated)",
		len(lat), percentile(lat, 50), percentile(lat, 99), percentile(lat, 100))
	assert.Less(t, percentile(lat, 50), 10*time.Millisecond, "an uncontended acquire is one commit round")
}

func TestTokensMonotonicRejectsAndAccepts(t *testing.T) {
	acq := func(i int, typ history.Type, node, owner string, token uint64) history.Event {
		e := history.Event{Index: i, Time: int64(i), Process: int(node[1] - '0'), Node: node, Type: typ, F: history.FAcquire, Key: "k", Owner: owner}
		if typ == history.OK {
			e.Token = history.Ptr(token)
		}
		return e
	}
	tests := []struct {
		name   string
		events []history.Event
		ok     bool
	}{
		{"increasing grants", []history.Event{acq(0, history.Invoke, "c1", "", 0), acq(1, history.OK, "c1", "a", 1),
			acq(2, history.Invoke, "c2", "", 0), acq(3, history.OK, "c2", "b", 2)}, true},
		{"a nested grant repeats its token", []history.Event{acq(0, history.Invoke, "c1", "", 0), acq(1, history.OK, "c1", "a", 1),
			acq(2, history.Invoke, "c1", "", 0), acq(3, history.OK, "c1", "a", 1)}, true},
		{"concurrent grants may complete out of order", []history.Event{acq(0, history.Invoke, "c1", "", 0), acq(1, history.Invoke, "c2", "", 0),
			acq(2, history.OK, "c2", "b", 2), acq(3, history.OK, "c1", "a", 1)}, true},
		{"a later grant with a lower token", []history.Event{acq(0, history.Invoke, "c1", "", 0), acq(1, history.OK, "c1", "a", 2),
			acq(2, history.Invoke, "c2", "", 0), acq(3, history.OK, "c2", "b", 1)}, false},
		{"another acquirer reusing a token", []history.Event{acq(0, history.Invoke, "c1", "", 0), acq(1, history.OK, "c1", "a", 2),
			acq(2, history.Invoke, "c2", "", 0), acq(3, history.OK, "c2", "b", 2)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := scenario.TokensMonotonic(scenario.Result{Events: tc.events})
			assert.Equal(t, tc.ok, err == nil, "%v", err)
		})
	}
}

// BenchmarkRaftKV60s is one 60-second simulated run of a 3-node raftkv group
// with 5 clients and random faults (swarm), checks included, its history's
// storage handed to the next run as in a sweep. Metrics: sim-x
// (simulated over wall time), and in simulated time the elections' leaderless
// time (p50, max) and the latency of successful acquires (p50, p90, p99, max).
func BenchmarkRaftKV60s(b *testing.B) {
	var simulated time.Duration
	var leaderless, latency []time.Duration
	for i := range b.N {
		r, c := raftRun(b, scenario.Test{System: "raftkv", Seed: uint64(i), Nemesis: "random"})
		simulated += r.Test.Time
		for _, e := range c.Audit().Elections() {
			leaderless = append(leaderless, e.Leaderless)
		}
		latency = append(latency, acquireLatencies(r.Events)...)
		r.Release() // as a sweep does, once its figures are taken
	}
	b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-x")
	b.ReportMetric(float64(len(leaderless))/float64(b.N), "elections/run")
	b.ReportMetric(percentile(leaderless, 50).Seconds()*1e3, "leaderless-p50-ms")
	b.ReportMetric(percentile(leaderless, 100).Seconds()*1e3, "leaderless-max-ms")
	for _, p := range []float64{50, 90, 99, 100} {
		b.ReportMetric(percentile(latency, p).Seconds()*1e3, fmt.Sprintf("acquire-p%g-ms", p))
	}
}

// acquireLatencies are the true-time latencies of the successful acquires.
func acquireLatencies(events []history.Event) []time.Duration {
	invoked := map[int]int64{}
	var out []time.Duration
	for _, e := range events {
		if e.F != history.FAcquire {
			continue
		}
		switch e.Type {
		case history.Invoke:
			invoked[e.Process] = e.Time
		case history.OK:
			out = append(out, time.Duration(e.Time-invoked[e.Process]))
		}
	}
	return out
}

// percentile is the p-th percentile (nearest rank) of ds; 0 when empty.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
