package raftkv

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("raftkv", raftkvScenarios)
}

// raftkvGCPause pauses client 1 right after it read the counter under the
// lock, for longer than raftkv's 10 s lease (its watchdog is paused with it).
var raftkvGCPause = nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"},
	Duration: nemesis.Duration(15 * time.Second), After: &nemesis.Trigger{Node: "c1", F: "read"}}}}

// raftkvLeaderPartition cuts whichever node leads at 20 s off from every other
// node (servers, clients, storage) for 10 s.
var raftkvLeaderPartition = nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Partition,
	At: nemesis.Duration(20 * time.Second), Targets: []string{"leader"}, Duration: nemesis.Duration(10 * time.Second)}}}

// raftkvClockAhead moves leadership, with partitions only, to a node whose
// wall clock runs a minute ahead. n1 leads from the start (initial-leader);
// n2's wall clock jumps +60 s at 1 s (unnoticed: followers stamp nothing);
// n3 is cut off from 2 s to 10 s, so its log falls behind; at 10 s n1 is cut
// off — n3 heals at the same instant but its log is behind, so only n2 can
// win the election. The client holding the lock since the start (hold 12 s,
// longer than the 10 s lease: its watchdog renewed it at 6.7 s through n1)
// still holds it; n2 stamps the next try-lock a minute ahead, finds that
// lease expired and grants the lock to another client.
var raftkvClockAhead = nemesis.Schedule{Faults: []nemesis.Fault{
	{Kind: nemesis.ClockJump, At: nemesis.Duration(time.Second), Targets: []string{"n2"}, Amount: nemesis.Duration(time.Minute)},
	{Kind: nemesis.Partition, At: nemesis.Duration(2 * time.Second), Targets: []string{"n3"}, Duration: nemesis.Duration(8 * time.Second)},
	{Kind: nemesis.Partition, At: nemesis.Duration(10 * time.Second), Targets: []string{"n1"}, Duration: nemesis.Duration(10 * time.Second)},
}}

func raftkvScenarios() []scenario.Scenario {
	return []scenario.Scenario{
		{
			Name: "baseline-raftkv",
			Doc:  "3-node raftkv (RheaKV lock on etcd raft), defaults, no faults: every check valid, acquires succeed",
			Variants: []scenario.Variant{{
				Name:   "fixed",
				Doc:    "no faults",
				Test:   scenario.Test{System: "raftkv", Seed: 1},
				Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("fencing-tokens", models.Valid).And("liveness", models.Valid),
				Assert: raftkvAsserts(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic),
			}},
		},
		{
			Name:     "kleppmann-gc-pause",
			Variants: raftkvGCPauseVariants(),
		},
		{
			Name:     "raftkv-leader-partition",
			Doc:      "the raftkv leader is cut off mid-run; a new leader takes over; locks stay exclusive and the availability gap is reported",
			Variants: raftkvLeaderPartitionVariants(),
		},
		{
			Name:     "raftkv-leader-clock-ahead",
			Doc:      "leadership moves to a node whose wall clock is a minute ahead: a lease still held (watchdog running) is judged expired and granted to another client — fencing, not leases, protects the data",
			Variants: raftkvClockAheadVariants(),
		},
		{
			Name:     "raftkv-reentrant",
			Doc:      "nested acquires and releases of one lock by one acquirer: a counted unlock never releases early, a deleting unlock does",
			Variants: raftkvReentrantVariants(),
		},
	}
}

func raftkvGCPauseVariants() []scenario.Variant {
	test := func(st storage.Mode) scenario.Test {
		return scenario.Test{System: "raftkv", Seed: 1, Time: 30 * time.Second, Schedule: &raftkvGCPause, Storage: st}
	}
	return []scenario.Variant{
		{
			Name:   "raftkv-unsafe",
			Doc:    "unfenced storage: client 1's stale write lands after client 2's, an increment is lost",
			Test:   test(storage.Unfenced),
			Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Valid).And("fencing-tokens", models.Valid),
			Assert: scenario.TokensMonotonic,
			Kind:   scenario.KindGCPause,
		},
		{
			Name:       "raftkv-fixed",
			MatrixNote: scenario.FencedWritesNote,
			Doc:        "fenced storage with raftkv's fencing token: client 1's stale write is rejected; the overlap is still reported (the lock cannot prevent it)",
			Test:       test(storage.Fenced),
			Expect:     scenario.Expect(models.Valid, models.Invalid).And("lease", models.Valid).And("fencing-tokens", models.Valid),
			Assert:     raftkvAsserts(scenario.TokensMonotonic, staleWritesRejected(1)),
		},
	}
}

func raftkvLeaderPartitionVariants() []scenario.Variant {
	test := func(st storage.Mode) scenario.Test {
		return scenario.Test{System: "raftkv", Seed: 1, Time: 45 * time.Second, Schedule: &raftkvLeaderPartition, Storage: st}
	}
	gap := scenario.AvailabilityGapWithin(time.Second, 6*time.Second)
	return []scenario.Variant{
		{
			Name:   "fixed",
			Doc:    "fenced storage: every check valid; no lock is granted for about an election timeout after the cut (the availability gap)",
			Test:   test(storage.Fenced),
			Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid).And("liveness", models.Valid),
			Assert: raftkvAsserts(scenario.TokensMonotonic, gap),
		},
		{
			Name: "unfenced",
			MatrixNote: "this variant cuts the leader off, never a client; the matrix's partitions also isolate the holder, " +
				"whose write the cut holds and delivers after the heal, once another client wrote: a delayed write that rolls " +
				"the counter back (the hazard of kleppmann-network-delay), which only fenced storage stops",
			Doc: "unfenced storage, still valid: a Raft failover loses no lock (unlike Redis' asynchronous failover); " +
				"what breaks raftkv is time, see raftkv-leader-clock-ahead",
			Test:   test(storage.Unfenced),
			Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid).And("liveness", models.Valid),
			Assert: raftkvAsserts(scenario.TokensMonotonic, gap),
		},
	}
}

func raftkvClockAheadVariants() []scenario.Variant {
	test := func(st storage.Mode, stamp string) scenario.Test {
		return scenario.Test{System: "raftkv", Seed: 1, Time: 40 * time.Second, Schedule: &raftkvClockAhead, Storage: st,
			FenceReads:      st == storage.Fenced,
			SystemOptions:   map[string]string{"initial-leader": "n1", "stamp": stamp},
			WorkloadOptions: map[string]string{"hold": "12s"}}
	}
	return []scenario.Variant{
		{
			Name:   "unsafe",
			Doc:    "unfenced storage: two clients run their read-modify-write at once and an increment is lost",
			Test:   test(storage.Unfenced, "leader"),
			Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid).And("fencing-tokens", models.Valid),
			Assert: raftkvAsserts(scenario.TokensMonotonic, liveLeaseTakenOver),
			Kind:   scenario.KindLeaderClockAhead,
		},
		{
			Name: "fixed",
			Doc: "fenced storage fencing reads and writes: the tokens are still monotonic (they come from the log, not " +
				"the clock), so the old holder's write is rejected; the overlap is still reported",
			Test:   test(storage.Fenced, "leader"),
			Expect: scenario.Expect(models.Valid, models.Invalid).And("lease", models.Invalid).And("fencing-tokens", models.Valid),
			Assert: raftkvAsserts(scenario.TokensMonotonic, liveLeaseTakenOver, staleWritesRejected(1)),
		},
		{
			Name: "client-stamp",
			Doc: "stamp=client: the clients' clocks time the leases, so the leader's clock no longer matters and the lock " +
				"stays exclusive (unfenced storage) — the lease now depends on the clients' clocks instead",
			Test:   test(storage.Unfenced, "client"),
			Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid),
			Assert: scenario.TokensMonotonic,
		},
	}
}

func raftkvReentrantVariants() []scenario.Variant {
	test := func(unlock string) scenario.Test {
		return scenario.Test{System: "raftkv", Workload: "reentrant", Seed: 1, Time: 30 * time.Second,
			SystemOptions: map[string]string{"unlock": unlock}}
	}
	return []scenario.Variant{
		{
			Name:   "unsafe",
			Doc:    "unlock=delete: the nested release deletes the lock while the outer acquire still runs; another client takes it",
			Test:   test("delete"),
			Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid),
			NoHunt: "the deleting unlock breaks the lock without any fault: every seed shows it",
		},
		{
			Name:   "fixed",
			Doc:    "unlock=count (RheaKV): nested acquires count up with the same token, releases count down, the lock goes at zero",
			Test:   test("count"),
			Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("fencing-tokens", models.Valid),
			Assert: raftkvAsserts(scenario.TokensMonotonic, nestedAcquiresKeepTheToken),
		},
	}
}

// raftkvAsserts runs every assertion and reports all that failed.
func raftkvAsserts(asserts ...func(scenario.Result) error) func(scenario.Result) error {
	return func(r scenario.Result) error {
		var errs []error
		for _, a := range asserts {
			errs = append(errs, a(r))
		}
		return errors.Join(errs...)
	}
}

// staleWritesRejected asserts that the fenced storage rejected at least n
// writes (the stale writes of holders whose grant was superseded).
func staleWritesRejected(n int) func(scenario.Result) error {
	return func(r scenario.Result) error {
		if got := r.Summary.Ops["write"].Fail; got < n {
			return fmt.Errorf("storage rejected %d writes, expected at least %d", got, n)
		}
		return nil
	}
}

// liveLeaseTakenOver asserts that a lock was granted to a client while its
// previous holder's lease was still running by the holder's own clock: the
// lock service judged the lease expired early.
func liveLeaseTakenOver(r scenario.Result) error {
	for _, o := range models.Overlaps(models.Holdings(r.Events)) {
		if o.A.Deadline != nil && *o.A.Deadline > o.B.Start {
			return nil
		}
	}
	return fmt.Errorf("no lock was granted while its previous holder's lease was still running")
}

// nestedAcquiresKeepTheToken asserts that the workload did nest acquires and
// that every nested acquire returned the token of the grant it nests in.
func nestedAcquiresKeepTheToken(r scenario.Result) error {
	type nest struct {
		owner string
		token uint64
		depth int
	}
	active := map[string]*nest{} // node+key
	nested := 0
	for _, e := range r.Events {
		k := e.Node + "\x00" + e.Key
		n := active[k]
		switch {
		case e.F == history.FAcquire && e.Type == history.OK && e.Token != nil:
			if n == nil || n.depth == 0 || n.owner != e.Owner {
				active[k] = &nest{owner: e.Owner, token: *e.Token, depth: 1}
				continue
			}
			nested++
			n.depth++
			if *e.Token != n.token {
				return fmt.Errorf("%s's nested acquire of %q at %s got token %d inside its grant with token %d",
					e.Node, e.Key, history.FormatTime(e.Time), *e.Token, n.token)
			}
		case e.F == history.FRelease && e.Type == history.Invoke && n != nil:
			n.depth--
		}
	}
	if nested == 0 {
		return fmt.Errorf("no nested acquire in the history")
	}
	return nil
}
