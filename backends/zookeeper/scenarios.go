package zookeeper

import (
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("zookeeper", zookeeperScenarios)
}

// zookeeperScenarios are the session-based lock's counterexamples: a holder
// outliving its session (pause, partition, late write), the orphan node of a
// create whose reply was lost, the herd effect, and two Curator bugs.
func zookeeperScenarios() []scenario.Scenario {
	zk := func(opts ...string) scenario.Test {
		return scenario.Test{System: "zookeeper", Clients: 2, Seed: 1, Time: 30 * time.Second, SystemOptions: scenario.WithOpts(nil, opts...)}
	}
	gcPause := zk()
	gcPause.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second))
	netDelay := zk()
	netDelay.Schedule = scenario.Schedule(scenario.DelayNextWrite("c1", 15*time.Second))
	sessionExpiry := zk()
	sessionExpiry.Time = 40 * time.Second
	sessionExpiry.Schedule = scenario.Schedule(scenario.PauseAfter("c1", "read", 20*time.Second))
	expired := scenario.StoryMentions("session-expired", "expired on leader", "node deleted")
	return []scenario.Scenario{
		{
			Name: "baseline-zookeeper",
			Doc:  "a 3-server ZooKeeper ensemble with Curator's lock recipe, defaults, no faults: every check valid, acquires succeed",
			Variants: []scenario.Variant{{Name: "fixed", Doc: "no faults",
				Test:   scenario.Test{System: "zookeeper", Seed: 1},
				Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("fencing-tokens", models.Valid).And("liveness", models.Valid),
				Assert: scenario.AllOf(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic)}},
		},
		{
			Name: "kleppmann-gc-pause",
			Variants: []scenario.Variant{
				{Name: "zookeeper-unsafe", Kind: scenario.KindSessionExpiry, Doc: "ZooKeeper, unfenced storage: client 1's session expires during its pause, client 2 takes the lock, client 1's stale write lands",
					Test: gcPause, Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: expired},
				{Name: "zookeeper-fixed", MatrixNote: scenario.FencedWritesNote, Doc: "ZooKeeper, fenced storage with the lock node's czxid as token: client 1's stale write is rejected",
					Test: scenario.Fenced(gcPause), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.WritesRejected(1)},
			},
		},
		{
			Name: "kleppmann-network-delay",
			Variants: []scenario.Variant{
				{Name: "zookeeper-unsafe", Kind: scenario.KindDelayedWrite, Doc: "ZooKeeper, unfenced storage: client 1's write outlives its hold in the network and lands over newer data",
					Test: netDelay, Expect: scenario.Expect(models.Invalid, models.Valid)},
				{Name: "zookeeper-fixed", Doc: "ZooKeeper, fenced storage with czxid tokens: the late write is rejected",
					Test: scenario.Fenced(netDelay), Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
			},
		},
		{
			Name: "zk-session-expiry",
			Doc:  "client 1 holds the lock and pauses for twice the session timeout: the leader expires its session and deletes its node, client 2 acquires, client 1 resumes and writes",
			Variants: []scenario.Variant{
				{Name: "unsafe", Kind: scenario.KindSessionExpiry, Doc: "unfenced storage: client 1 still believes it holds (Curator has not told it LOST yet) and its write lands over client 2's",
					Test: sessionExpiry, Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: expired},
				{Name: "fixed", MatrixNote: scenario.FencedWritesNote, Doc: "fenced storage with czxid tokens: client 2's node was created later, so its czxid is higher and client 1's write is rejected",
					Test: scenario.Fenced(sessionExpiry), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
					Assert: scenario.AllOf(expired, scenario.WritesRejected(1))},
			},
		},
		{
			Name:     "zk-orphan-node",
			Doc:      "the reply to client 1's create is lost after the server applied it; client 1 retries the create",
			Variants: zkOrphanVariants(),
		},
		{
			Name:     "zk-herd",
			Doc:      "20 clients contend for one lock without faults: messages per acquisition when every waiter watches the lock's children (herd) vs only its predecessor",
			Variants: zkHerdVariants(),
		},
		{
			Name:     "zk-partitioned-holder",
			Doc:      "the holder and its server are cut off from the rest of the ensemble; the leader expires the holder's session and client 2 acquires while the holder still works",
			Variants: zkPartitionedHolderVariants(),
		},
		{
			Name: "zk-reconnect-double-lock",
			Doc: "CURATOR-604: client 1's create is applied but it is cut off before the reply; a new leader re-arms its session, so " +
				"client 1 calls the session LOST while the ensemble still keeps it; with a new session, protected mode finds the old node by its guid",
			Variants: zkReconnectVariants(),
		},
		{
			Name:     "zk-release-connection-loss",
			Doc:      "CURATOR-678: client 1's delete during release is lost with its connection; the node stays while client 1's session lives",
			Variants: zkReleaseLossVariants(),
		},
	}
}

// zkHeldWriteNote explains why the fixed variants of the connection-loss
// scenarios differ from their matrix cell (unfenced × partition).
const zkHeldWriteNote = "the fix is for a node left behind by a connection loss; the matrix's partitions also isolate the holder, " +
	"whose write the cut holds and delivers after the heal, once another client wrote: a delayed write that rolls the counter " +
	"back, which only fenced storage stops (kleppmann-network-delay/zookeeper-unsafe)"

// zkOrphanVariants: right after client 1 invokes its second acquire, the
// servers' messages to it are cut for 8 s: its create is applied, no reply
// comes within the read timeout (6.7 s), so client 1 closes the connection,
// reconnects and retries; the reply, if the cut held it, comes on the closed
// connection and answers nothing. The cut outlasts the read timeout: over
// TCP a shorter one only delays the reply, and the client waits for it.
// Live (real ZooKeeper 3.8, go-zookeeper) the same happens: the create is
// the acquire's first request (its parents are made only on NONODE, as by
// Curator), the held reply reaches a connection the client closed, and the
// retry after the heal creates a second node.
func zkOrphanVariants() []scenario.Variant {
	test := func(protection string) scenario.Test {
		t := scenario.Test{System: "zookeeper", Clients: 3, Seed: 1, Time: 60 * time.Second,
			SystemOptions: map[string]string{"protection": protection}}
		t.Schedule = scenario.Schedule(nemesis.Fault{Kind: nemesis.Partition, From: []string{"servers"}, To: []string{"c1"},
			Duration: nemesis.Duration(8 * time.Second), After: &nemesis.Trigger{Node: "c1", F: history.FAcquire, Type: "invoke", Nth: 2}})
		return t
	}
	return zkStrandedNodeVariants(test, "an orphan node blocks the lock",
		"protection=false: the retry creates a second node; the first, owned by client 1's live session, blocks everyone (client 1 included) as long as the session lives",
		"protection=true (Curator's protected mode): the retry lists the children, finds the node with client 1's guid and adopts it")
}

// zkStrandedNodeVariants are the two outcomes of a lock node its client lost
// track of, in the test test makes of the option that decides it ("false",
// "true"): unsafe, the node stays while its session lives and blocks the
// lock (stranded says how), which only the liveness check sees; fixed, the
// client finds its node again.
func zkStrandedNodeVariants(test func(string) scenario.Test, stranded, unsafeDoc, fixedDoc string) []scenario.Variant {
	return []scenario.Variant{
		{Name: "unsafe", NoHunt: "its failure is liveness (" + stranded + "), which the violation kinds, read from overlaps, do not cover", Doc: unsafeDoc,
			Test: test("false"), Expect: scenario.Expect(models.Valid, models.Valid).And("liveness", models.Invalid)},
		{Name: "fixed", MatrixNote: zkHeldWriteNote, Doc: fixedDoc,
			Test: test("true"), Expect: scenario.Expect(models.Valid, models.Valid).And("liveness", models.Valid)},
	}
}

// zkHerdTest is n clients contending for one lock for 10 s, holding it 20 ms.
func zkHerdTest(n int, herd bool) scenario.Test {
	return scenario.Test{System: "zookeeper", Clients: n, Seed: 1, Time: 10 * time.Second,
		SystemOptions:   map[string]string{"herd": fmt.Sprint(herd)},
		WorkloadOptions: map[string]string{"hold": "20ms", "think": "20ms", "wait": "30s"}}
}

func zkHerdVariants() []scenario.Variant {
	within := func(lo, hi float64) func(scenario.Result) error {
		return func(r scenario.Result) error {
			if m := scenario.MessagesPerAcquisition(r); m < lo || m > hi {
				return fmt.Errorf("%.1f messages per acquisition, expected %v..%v", m, lo, hi)
			}
			return nil
		}
	}
	return []scenario.Variant{
		{Name: "herd", Doc: "herd=true: every release wakes all 19 waiters, each lists the children again",
			Test: zkHerdTest(20, true), Expect: scenario.Expect(models.Valid, models.Valid).And("liveness", models.Valid), Assert: within(herdLo, 1e9)},
		{Name: "fixed", Doc: "herd=false (Curator): each waiter watches only the next-lower node; a release wakes one",
			Test: zkHerdTest(20, false), Expect: scenario.Expect(models.Valid, models.Valid).And("liveness", models.Valid), Assert: within(0, predecessorHi)},
	}
}

// zkPartitionedHolderVariants: right after client 1's first read (it holds
// the lock 14 s), client 1 and its server are cut off from the other servers
// for 25 s; client 1 still reaches the storage.
func zkPartitionedHolderVariants() []scenario.Variant {
	test := func(onSuspend string, st storage.Mode) scenario.Test {
		t := scenario.Test{System: "zookeeper", Clients: 2, Seed: 1, Time: 45 * time.Second, Storage: st, FenceReads: st == storage.Fenced,
			SystemOptions: map[string]string{"on-suspend": onSuspend}, WorkloadOptions: map[string]string{"hold": "14s"}}
		t.Schedule = scenario.Schedule(nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"c1", "server-of:c1"}, {"servers-but:c1"}},
			Duration: nemesis.Duration(25 * time.Second), After: scenario.After("c1", history.FRead)})
		return t
	}
	expired := scenario.StoryMentions("session-expired", "node deleted")
	return []scenario.Variant{
		{Name: "unsafe", Kind: scenario.KindSessionExpiry, Doc: "on-suspend=continue (Curator's Session policy): client 1 believes it holds until LOST, long after the leader expired its session; two clients hold the lock and client 1's write lands",
			Test: test(SuspendContinue, storage.Unfenced), Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: scenario.AllOf(expired, beliefVsExpiry("c1", true))},
		{Name: "fixed", Doc: "on-suspend=stop (Standard policy) and storage fenced by czxid: client 1's belief ends at SUSPENDED, before its session can expire, " +
			"but the workload writes anyway (it does not ask the connection state), so the mutual-exclusion check still sees it act late; the fenced storage rejects that write",
			Test: test(SuspendStop, storage.Fenced), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
			Assert: scenario.AllOf(expired, scenario.WritesRejected(1), beliefVsExpiry("c1", false))},
	}
}

// zkReconnectVariants: as client 1 invokes its second acquire, the servers'
// messages to it are cut (its create is applied, the reply lost), and 50 ms
// later its own messages too, for 17.5 s; the leader crashes at 9.5 s for
// 3 s, so the new leader re-arms client 1's session: it expires about 10 s
// after the election, after client 1 called it LOST (session timeout since
// SUSPENDED, 16.7 s after the cut) and opened a new one. The cut outlasts
// LOST: over TCP, a connection attempt under way at the heal completes and
// the client resumes its session before LOST. Clients hold the lock 4 s.
// Live, LOST is locklab's (go-zookeeper has none): as Curator's
// ConnectionStateManager, the live client gives its session up the session
// timeout after SUSPENDED, without a word to the servers, and opens a new
// one; its protected-mode retry then finds the old node by its guid.
func zkReconnectVariants() []scenario.Variant {
	test := func(adoptCheck string) scenario.Test {
		trig := func(d time.Duration) *nemesis.Trigger {
			return &nemesis.Trigger{Node: "c1", F: history.FAcquire, Type: "invoke", Nth: 2, Delay: nemesis.Duration(d)}
		}
		t := scenario.Test{System: "zookeeper", Clients: 2, Seed: 1, Time: 45 * time.Second, SystemOptions: map[string]string{"adopt-check": adoptCheck},
			WorkloadOptions: map[string]string{"hold": "4s"}}
		t.Schedule = scenario.Schedule(
			nemesis.Fault{Kind: nemesis.Partition, From: []string{"servers"}, To: []string{"c1"}, Duration: nemesis.Duration(17500 * time.Millisecond), After: trig(0)},
			nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"servers"}, Duration: nemesis.Duration(17500 * time.Millisecond), After: trig(50 * time.Millisecond)},
			nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"leader"}, Duration: nemesis.Duration(3 * time.Second), After: trig(9500 * time.Millisecond)})
		return t
	}
	return []scenario.Variant{
		{Name: "unsafe", NoHunt: "its overlap classifies as session-expiry, which the zk-session-expiry hunt already hunts; the kinds cannot tell the adopted node of an expired session apart", Doc: "adopt-check=false (Curator): client 1 adopts the node of its expired session, which is the lowest, and believes it holds the lock; the node is deleted when the old session expires and client 2 takes the lock too",
			Test: test("false"), Expect: scenario.Expect(models.Invalid, models.Invalid)},
		{Name: "fixed", MatrixNote: "the fix is for a reconnect that adopts its expired session's node; its faults are of several kinds (the random column), where the unfenced recipe still breaks by a pause beyond the session (kleppmann-gc-pause/zookeeper-unsafe)", Doc: "adopt-check=true: a node is adopted only if its ephemeral owner is the current session; client 1 creates a new node and waits its turn",
			Test: test("true"), Expect: scenario.Expect(models.Valid, models.Valid)},
	}
}

// zkReleaseLossVariants: client 1's link to its server is cut for 16 s right
// as it invokes its first release: no reply within the read timeout, the
// client closes the connection and reconnects to another server; the delete
// is lost with its connection, which the cut outlasts (a connection's
// timeout is 15 s: over TCP a shorter cut delivers the delete at the heal,
// and the server, which does not model SESSIONMOVED, applies it). Live the
// client moves its session to the next server at its read timeout too, and
// the delete its closed socket still held reaches the old server at the
// heal, after the session moved: real ZooKeeper does not apply it (its
// SESSIONMOVED check; the node stays, as simulated).
func zkReleaseLossVariants() []scenario.Variant {
	test := func(retry string) scenario.Test {
		t := scenario.Test{System: "zookeeper", Clients: 3, Seed: 1, Time: 60 * time.Second, SystemOptions: map[string]string{"release-retry": retry}}
		t.Schedule = scenario.Schedule(nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"server-of:c1"},
			Duration: nemesis.Duration(16 * time.Second), After: &nemesis.Trigger{Node: "c1", F: history.FRelease, Type: "invoke"}})
		return t
	}
	return zkStrandedNodeVariants(test, "the node stays while the session lives",
		"release-retry=false (CURATOR-678): the client forgets its node; the node stays while its session lives and the lock is blocked for good",
		"release-retry=true (a guaranteed delete): the client deletes the node after it reconnects")
}

// beliefVsExpiry asserts whether node's first grant was still believed (its
// lease deadline, moved by pings) when the leader expired its session.
func beliefVsExpiry(node string, outlived bool) func(scenario.Result) error {
	return func(r scenario.Result) error {
		var expiredAt int64 = -1
		for _, e := range r.Events {
			if e.Type == history.Start && e.F == "session-expired" && slices.Contains(e.Targets, node) {
				expiredAt = e.Time
				break
			}
		}
		if expiredAt < 0 {
			return fmt.Errorf("%s's session never expired", node)
		}
		for _, h := range models.Holdings(r.Events) {
			if h.Node != node || h.Deadline == nil {
				continue
			}
			if got := *h.Deadline > expiredAt; got != outlived {
				return fmt.Errorf("%s believed it held until %s, its session expired at %s: expected outlived=%v",
					node, history.FormatTime(*h.Deadline), history.FormatTime(expiredAt), outlived)
			}
			return nil
		}
		return fmt.Errorf("%s never held the lock", node)
	}
}

// Bounds of the herd scenario's figure at 20 clients (measured: herd about
// 160, predecessor watch about 39 messages per acquisition).
const (
	herdLo        = 100
	predecessorHi = 60
)
