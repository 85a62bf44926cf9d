package redis

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("redis", redisBaselineScenarios)
	scenario.Register("redis", redisScenarios)
	scenario.Register("redis", redisOncallScenarios)
}

// redisScenarios are the Redis family's counterexamples: Kleppmann's pause and
// delay, failover with and without WAIT, DEL as unlock, and the overselling shop.
func redisScenarios() []scenario.Scenario {
	gcPause, netDelay := scenario.GCPauseTest("redis"), scenario.NetworkDelayTest("redis")
	stock := gcPause
	stock.Workload = "stock"
	return []scenario.Scenario{
		{
			Name: "kleppmann-gc-pause",
			Doc:  "client 1 pauses (GC) right after it read under the lock, longer than the lease; client 2 takes the lock and writes; client 1 resumes and writes",
			Variants: []scenario.Variant{
				{Name: "redis-unsafe", Doc: "Redis, unfenced storage: client 1's stale write lands", Kind: scenario.KindGCPause,
					Test: gcPause, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Valid)},
				{Name: "redis-fixed", MatrixNote: scenario.FencedWritesNote, Doc: "Redis with INCR fencing tokens, fenced storage: client 1's stale write is rejected (the overlap remains: the lock cannot prevent it)",
					Test: scenario.Fenced(gcPause, "fencing", "true"), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.WritesRejected(1)},
			},
		},
		{
			Name: "kleppmann-network-delay",
			Doc:  "client 1's write to the storage is delayed in the network beyond the lease; it gives up on it and releases, and the write lands later over newer data",
			Variants: []scenario.Variant{
				{Name: "redis-unsafe", Doc: "Redis, unfenced storage: the late write overwrites newer data (the clients' beliefs never overlapped: the message outlived the lease)", Kind: scenario.KindDelayedWrite,
					Test: netDelay, Expect: scenario.Expect(models.Invalid, models.Valid)},
				{Name: "redis-fixed", Doc: "Redis with INCR fencing tokens, fenced storage: the late write is rejected",
					Test: scenario.Fenced(netDelay, "fencing", "true"), Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
			},
		},
		redisFailover(),
		{
			Name: "redis-del-unlock",
			Doc:  "client 1's lease expires while it is paused before its release; another client takes the lock; client 1 releases with plain DEL and deletes that client's lock; a third client takes it while the second still holds it",
			Variants: []scenario.Variant{
				{Name: "unsafe", Doc: "release del: the DEL frees a lock client 1 no longer holds", Kind: scenario.KindNonOwnerRelease,
					Test: delUnlock("del"), Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid), Assert: scenario.OverlapWithout("c1")},
				{Name: "fixed", Doc: "release lua (compare-and-delete): client 1's release finds another value and deletes nothing",
					Test: delUnlock("lua"), Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)},
			},
		},
		{
			Name: "stock-oversell",
			Doc:  "a shop with 4 items; buyer 1 wants 3, buyer 2 wants 2; buyer 1 pauses after reading the stock level, past its lease",
			Variants: []scenario.Variant{
				{Name: "unsafe", Doc: "Redis, unfenced storage: both buyers read 4 and both purchases go through — 5 items sold of 4",
					NoHunt: "both purchases are over in the first milliseconds, before the random nemesis's fault-free first second ends (0 of 1,000 seeds)",
					Test:   stock, Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: scenario.Oversold(true)},
				{Name: "fixed", MatrixNote: scenario.FencedWritesNote, Doc: "Redis with INCR fencing tokens, fenced storage: buyer 1's stale purchase is rejected; it retries, finds 2 left and gives up",
					Test: scenario.Fenced(stock, "fencing", "true"), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.Oversold(false)},
			},
		},
	}
}

// delUnlock: client 1 is paused right after its first write, past its 5 s
// lease, and releases when it resumes; c2 and c3 hold the lock 1.5 s at a time.
func delUnlock(release string) scenario.Test {
	return scenario.Test{System: "redis", Clients: 3, Seed: 1, Time: 15 * time.Second,
		SystemOptions:   map[string]string{"ttl": "5s", "release": release},
		WorkloadOptions: map[string]string{"hold": "1500ms"},
		Schedule:        scenario.Schedule(scenario.PauseAfter("c1", "write", 6*time.Second))}
}

// redisFailover: a primary, two replicas and a monitor (down-after 2 s);
// clients hold the lock 4 s. Replication lags by 5 ms (all traffic from the
// primary to the replicas, snapshots included); the primary is cut off right
// after client 1's acquire returned, which drops what was in flight.
func redisFailover() scenario.Scenario {
	base := scenario.Test{System: "redis", Clients: 2, Seed: 1, Time: 30 * time.Second,
		SystemOptions:   map[string]string{"replicas": "2", "down-after": "2s"},
		WorkloadOptions: map[string]string{"hold": "4s"}}
	lag := func(to string, d time.Duration) nemesis.Fault {
		return nemesis.Fault{Kind: nemesis.Delay, From: []string{"redis"}, To: []string{to}, Amount: nemesis.Duration(d)}
	}
	isolated := base
	isolated.Schedule = scenario.Schedule(lag("replicas", 5*time.Millisecond),
		nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"primary"}, Duration: nemesis.Duration(10 * time.Second), After: scenario.After("c1", "acquire")})
	withWait := isolated
	withWait.SystemOptions = scenario.WithOpts(base.SystemOptions, "wait", "1")
	split := base
	split.SystemOptions = scenario.WithOpts(base.SystemOptions, "wait", "1", "replicas", "3")
	split.Schedule = scenario.Schedule(lag("replica2", 5*time.Millisecond), lag("replica3", 5*time.Millisecond),
		nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"redis", "replica1"}, {"sentinel", "replica2", "replica3", "c1", "c2", "storage"}},
			Duration: nemesis.Duration(10 * time.Second), After: scenario.After("c1", "acquire")})
	return scenario.Scenario{
		Name: "redis-failover",
		Doc:  "client 1's SET is acknowledged by the primary, which is cut off before replicating it; the monitor promotes a replica that never had the lock; client 2 takes it",
		Variants: []scenario.Variant{
			{Name: "unsafe", Doc: "asynchronous replication (lagging 5 ms): the promoted replica never saw client 1's lock", Kind: scenario.KindFailover,
				Test: isolated, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid), Assert: scenario.FailedOver},
			{Name: "fixed-wait", Doc: "WAIT 1 after SET: client 1's acquire returns only once a replica has the lock, so the promoted replica refuses client 2 (same schedule)",
				Test: withWait, Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid), Assert: scenario.FailedOver},
			{Name: "unsafe-wait", Doc: "WAIT 1 narrows the window but does not close it: with three replicas, replica1 acknowledged, then the primary and replica1 are cut off together and the monitor promotes a lagging replica", Kind: scenario.KindFailover,
				Test: split, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid), Assert: scenario.FailedOver},
		},
	}
}

// redisBaselineScenarios are Redis without faults: every check valid.
func redisBaselineScenarios() []scenario.Scenario {
	return []scenario.Scenario{scenario.Baseline("redis", "Redis (one instance; or replicated), defaults, no faults: every check valid, acquires succeed",
		scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid), scenario.AcquireSuccessAbove(0.99)).
		NoFaults("replicated", "a primary, two asynchronous replicas and the monitor, WAIT 1, no faults", "replicas", "2", "wait", "1")}
}

// redisOncallScenarios are the on-call write skew on Redis (the workload oncall): two
// doctors, each may go off call only if the other still is.
func redisOncallScenarios() []scenario.Scenario {
	paused := scenario.WithWorkload(scenario.GCPauseTest("redis"), "off-duty", "20s")
	paused.Workload = "oncall"
	fencedReads := scenario.Fenced(paused, "fencing", "true")
	fencedReads.FenceReads = true
	onCall := func(r models.Result) scenario.Expectations { return scenario.Expectations{"on-call": r} }
	return []scenario.Scenario{{
		Name: "oncall-write-skew",
		Doc: "two doctors on call; each, under the lock, reads the other's row and goes off call only if the other " +
			"is still on call. If both decide on the same state, both leave: nobody is on call (write skew)",
		Variants: []scenario.Variant{
			{Name: "unsafe", Kind: scenario.KindGCPause,
				Doc: "Redis, unfenced storage: doctor 1 reads doctor 2 on call and pauses past its lease; doctor 2 " +
					"takes the lock, reads doctor 1 on call and leaves; doctor 1 wakes and leaves too",
				Test: paused, Expect: onCall(models.Invalid).And("mutual-exclusion", models.Invalid)},
			{Name: "fenced-writes-unsafe", MatrixNote: "the write skew needs the oncall workload (two doctors' rows, the on-call check); the matrix runs the fenced counter, one cell, where fencing writes does keep the data", Kind: scenario.KindGCPause,
				Doc: "Redis with INCR fencing tokens, storage fencing writes only: the fence is per row, and doctor 2 " +
					"wrote only its own row — doctor 1's row never saw token 2, so doctor 1's stale write lands",
				Test:   scenario.Fenced(paused, "fencing", "true"),
				Expect: onCall(models.Invalid).And("fencing-tokens", models.Valid)},
			{Name: "fixed", Doc: "Redis with INCR fencing tokens, storage fencing reads too: doctor 2's read of doctor 1's row " +
				"raised its fence, so doctor 1's stale read of its own row is rejected and it never writes; it stays on call",
				Test:   fencedReads,
				Expect: onCall(models.Valid).And("fencing-tokens", models.Valid), Assert: storageRejected("c1", history.FRead)},
		},
	}}
}

// storageRejected asserts that the fenced storage rejected at least one
// operation f of node.
func storageRejected(node, f string) func(scenario.Result) error {
	return func(r scenario.Result) error {
		for _, e := range r.Events {
			if e.Node == node && e.F == f && e.Type == history.Fail && strings.Contains(e.Detail, "rejected by the storage") {
				return nil
			}
		}
		return fmt.Errorf("expected the storage to reject a %s of %s, it rejected none", f, node)
	}
}
