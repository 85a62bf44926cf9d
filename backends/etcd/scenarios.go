package etcd

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("etcd", etcdScenarios)
}

// etcdTest is an etcd test of the catalog: seed 1, the given clients and
// duration, system options as key=value pairs.
func etcdTest(clients int, d time.Duration, s *nemesis.Schedule, opts ...string) scenario.Test {
	return scenario.Test{System: "etcd", Clients: clients, Seed: 1, Time: d, Schedule: s, SystemOptions: scenario.WithOpts(nil, opts...)}
}

// guarded turns an etcd test into its guarded-write form: the resource
// lives in etcd and is written by Txn(If IsOwner Then Put).
func guarded(t scenario.Test) scenario.Test {
	t.SystemOptions = scenario.WithOpts(t.SystemOptions, "resource", "etcd")
	return t
}

func etcdScenarios() []scenario.Scenario {
	return []scenario.Scenario{
		{
			Name:     "baseline-etcd",
			Doc:      "3-member etcd, no faults: the queue mutex, the simple txn lock and the guarded write are valid; acquires succeed",
			Variants: etcdBaselineVariants(),
		},
		{
			Name:     "kleppmann-gc-pause",
			Variants: etcdGCPauseVariants(),
		},
		{
			Name:     "kleppmann-network-delay",
			Variants: etcdNetworkDelayVariants(),
		},
		{
			Name: "etcd-lease-expiry",
			Doc: "the etcd lock holder is paused right after its acquire for longer than its lease TTL (its keep-alives " +
				"stop with it); the leader expires the lease and deletes the key; another client acquires; the holder wakes " +
				"and runs its read-modify-write",
			Variants: etcdLeaseExpiryVariants(),
		},
		{
			Name: "etcd-leader-change-extends-lease",
			Doc: "the lock holder crashes right after its acquire; 2 s later the leader crashes; the new leader restarts " +
				"every lease (etcd's Promote): the lock stays unavailable for election timeout + TTL after the election " +
				"instead of TTL after the holder's last keep-alive",
			Variants: etcdLeaderChangeVariants(),
		},
		{
			Name: "etcd-waiter-lease-lost",
			Doc: "a waiter's keep-alives are lost while it waits behind the holder; its lease expires and its key is " +
				"deleted (it is cut off from the leader only: its watch, moved to a follower, still works); when its " +
				"predecessor goes, Lock returns success with the key gone, beside the rightful holder, unless the mutex " +
				"checks its own key after waiting (etcd issue 11456)",
			Variants: etcdWaiterLeaseLostVariants(),
		},
		{
			Name: "etcd-jepsen-3.4.3-lock",
			Doc: "Jepsen's etcd 3.4.3 lock finding: a network partition isolates a waiting client (keep-alives and watch) " +
				"for longer than its TTL; its lease expires; after the heal its watch sees the predecessor's release and " +
				"3.4.3's Lock returns success with the lease gone: two holders, lost updates",
			Variants: etcdJepsenVariants(),
		},
		{
			Name: "etcd-stale-unlock-retry",
			Doc: "client 1's unlock commits but every reply is lost (a one-way cut), so it fails and is retried 2 s later " +
				"in the background; meanwhile the same session has taken the lock again under the same key name; the " +
				"retry deletes that newer incarnation and client 2 acquires while client 1 still holds (etcd issue 22082)",
			Variants: etcdStaleUnlockVariants(),
		},
		{
			Name: "etcd-txn-unlock-retry",
			Doc: "the simple txn lock released by a plain Delete(key): client 1's delete commits but its replies are lost " +
				"(a one-way cut), so the client retries it; meanwhile client 2 created the same key and holds the lock; the " +
				"retried delete removes client 2's key and client 3 acquires while client 2 holds",
			Variants: etcdTxnUnlockRetryVariants(),
		},
	}
}

func etcdTxnUnlockRetryVariants() []scenario.Variant {
	cut := nemesis.Fault{Kind: nemesis.Partition, From: []string{"servers"}, To: []string{"c1"}, Duration: nemesis.Duration(1200 * time.Millisecond),
		After: &nemesis.Trigger{Node: "c1", F: "release", Type: "invoke"}}
	t := func(unlock string) scenario.Test {
		return scenario.WithWorkload(etcdTest(3, 20*time.Second, scenario.Schedule(cut), "lock", "txn", "unlock", unlock, "initial-leader", "etcd1"),
			"hold", "1s")
	}
	return []scenario.Variant{
		{Name: "unsafe", Kind: scenario.KindNonOwnerRelease, Doc: "unlock=delete: the client's retry of a delete that already committed deletes the next holder's key; " +
			"from then on every holder that believes it holds deletes its successor's key on release: the double holding never stops",
			Test: t("delete"), Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Invalid)},
		{Name: "fixed", Doc: "unlock=guarded: the delete compares the create revision; the retry deletes nothing",
			Test: t("guarded"), Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)},
	}
}

func etcdBaselineVariants() []scenario.Variant {
	all := scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid).And("liveness", models.Valid)
	return []scenario.Variant{
		{Name: "fixed", Doc: "the queue mutex (clientv3 concurrency.Mutex), storage node, no faults",
			Test: etcdTest(5, time.Minute, nil), Expect: all, Assert: scenario.AllOf(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic)},
		{Name: "txn", Doc: "the simple txn lock (If CreateRevision(key)==0 Then Put Else Get), no faults",
			Test: etcdTest(5, time.Minute, nil, "lock", "txn"), Expect: all, Assert: scenario.AllOf(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic)},
		{Name: "guarded", Doc: "the queue mutex and the resource kept in etcd, written by Txn(If IsOwner Then Put), no faults",
			Test: guarded(etcdTest(5, time.Minute, nil)), Expect: all, Assert: scenario.AllOf(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic)},
	}
}

func etcdGCPauseVariants() []scenario.Variant {
	t := etcdTest(2, 30*time.Second, scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second)))
	return etcdPausedHolderVariants(t, [3]string{"etcd-unsafe", "etcd-fixed", "etcd-guarded"}, [3]string{
		"etcd mutex, unfenced storage: client 1's stale write lands after client 2's, an increment is lost",
		"fenced storage with the create revision of the lock key as token: the stale write is rejected; the overlap remains",
		"the resource in etcd, written by Txn(If IsOwner Then Put): client 1's key is gone, its write fails; the overlap remains"})
}

// etcdPausedHolderVariants are the outcomes of t, in which client 1 is
// paused past its lease and writes when it wakes: on unfenced storage its
// stale write loses increments (the leader expired the lease: the lease
// check holds); fenced storage, with the create revision as token, and the
// guarded write in etcd each reject it; the overlap remains. names and docs
// are the three variants', in that order.
func etcdPausedHolderVariants(t scenario.Test, names, docs [3]string) []scenario.Variant {
	return []scenario.Variant{
		{Name: names[0], Kind: scenario.KindGCPause, Doc: docs[0],
			Test: t, Expect: scenario.Expect(models.Invalid, models.Invalid).And("lease", models.Valid),
			Assert: scenario.AllOf(scenario.TokensMonotonic, scenario.StoryMentions("lease-expired"))},
		{Name: names[1], MatrixNote: scenario.FencedWritesNote, Doc: docs[1],
			Test: scenario.Fenced(t), Expect: scenario.Expect(models.Valid, models.Invalid).And("lease", models.Valid).And("fencing-tokens", models.Valid),
			Assert: scenario.AllOf(scenario.TokensMonotonic, scenario.WritesRejected(1))},
		{Name: names[2], Doc: docs[2],
			Test: guarded(t), Expect: scenario.Expect(models.Valid, models.Invalid).And("lease", models.Valid),
			Assert: scenario.AllOf(scenario.TokensMonotonic, scenario.WritesRejected(1))},
	}
}

func etcdNetworkDelayVariants() []scenario.Variant {
	t := etcdTest(2, 30*time.Second, scenario.Schedule(scenario.DelayNextWrite("c1", 15*time.Second)))
	delayTxn := nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"servers"}, Amount: nemesis.Duration(15 * time.Second),
		Match: "etcd.Request", Count: 1, After: scenario.After("c1", "read")}
	return []scenario.Variant{
		{Name: "etcd-unsafe", Kind: scenario.KindDelayedWrite, Doc: "etcd mutex, unfenced storage: the late write overwrites newer data",
			Test: t, Expect: scenario.Expect(models.Invalid, models.Valid)},
		{Name: "etcd-fixed", Doc: "fenced storage with the create revision as token: the late write is rejected",
			Test: scenario.Fenced(t), Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
		{Name: "etcd-guarded", Doc: "the resource in etcd: client 1's guarded Txn is the delayed message; its retry lands " +
			"at once, and the late original finds the lock key gone and writes nothing",
			Test: guarded(etcdTest(2, 30*time.Second, scenario.Schedule(delayTxn))), Expect: scenario.Expect(models.Valid, models.Valid)},
	}
}

func etcdLeaseExpiryVariants() []scenario.Variant {
	t := scenario.WithWorkload(etcdTest(3, 40*time.Second, scenario.Schedule(scenario.PauseAfter("c1", "acquire", 12*time.Second))), "hold", "2s")
	return etcdPausedHolderVariants(t, [3]string{"unsafe", "fenced", "guarded"}, [3]string{
		"unfenced storage: client 1 reads after waking, the others increment meanwhile, its write loses them",
		"fenced storage with the create revision as token: client 1's write is rejected",
		"the resource in etcd, Txn(If IsOwner Then Put): client 1's key is gone, its write fails"})
}

// etcdLeaderChange crashes client 1 right after its first acquire, and the
// leader 2 s later (for 3 s).
var etcdLeaderChange = scenario.Schedule(
	nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"c1"}, Duration: nemesis.Duration(time.Minute), After: scenario.After("c1", "acquire")},
	nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"leader"}, Duration: nemesis.Duration(3 * time.Second),
		After: &nemesis.Trigger{Node: "c1", F: "acquire", Delay: nemesis.Duration(2 * time.Second)}},
)

func etcdLeaderChangeVariants() []scenario.Variant {
	t := scenario.WithWorkload(etcdTest(2, 40*time.Second, etcdLeaderChange, "initial-leader", "etcd1"), "wait", "30s")
	safe := scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)
	return []scenario.Variant{
		{Name: "extends", Doc: "etcd's behaviour: the new leader restarts the dead holder's lease; the lock is unavailable " +
			"for about 2 s + election + election timeout + TTL",
			Test: t, Expect: safe, Assert: scenario.AllOf(scenario.StoryMentions("lease-extended", "lease-expired"), scenario.AvailabilityGapWithin(13*time.Second, 17*time.Second))},
		{Name: "checkpoint", Doc: "leader-change-extends=false: keep-alives checkpointed in the log, the new leader keeps the " +
			"lease's expiry: unavailable for at most the TTL after the holder's last keep-alive",
			Test: withOpts2(t, "leader-change-extends", "false"), Expect: safe,
			Assert: scenario.AllOf(scenario.StoryMentions("lease-expired"), scenario.AvailabilityGapWithin(5*time.Second, 11*time.Second))},
	}
}

// withOpts2 returns t with system options added.
func withOpts2(t scenario.Test, kv ...string) scenario.Test {
	t.SystemOptions = scenario.WithOpts(t.SystemOptions, kv...)
	return t
}

// etcdWaiterTest: three clients hold the lock 12 s each (wait budget 60 s);
// whoever does not win first queues; c2's lease is made to expire while it
// waits.
func etcdWaiterTest(f nemesis.Fault, opts ...string) scenario.Test {
	opts = append([]string{"initial-leader", "etcd1"}, opts...)
	return scenario.WithWorkload(etcdTest(3, 40*time.Second, scenario.Schedule(f), opts...), "hold", "12s", "wait", "60s")
}

func etcdWaiterLeaseLostVariants() []scenario.Variant {
	lost := nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{"c2"}, {"leader"}}, Duration: nemesis.Duration(12 * time.Second),
		After: &nemesis.Trigger{Node: "c2", F: "acquire", Type: "invoke", Delay: nemesis.Duration(time.Second)}}
	return []scenario.Variant{
		{Name: "unsafe", NoHunt: "its overlap (a waiter told it holds after its lease expired while it waited) has no violation kind of its own yet: it is classified other", Doc: "check-after-wait=false (clientv3 3.4.3): c2's Lock returns success with its key gone; c2 and c3 hold at once",
			Test: etcdWaiterTest(lost, "check-after-wait", "false"), Expect: scenario.Expect(models.Invalid, models.Invalid),
			Assert: scenario.StoryMentions("lease-expired")},
		{Name: "fixed", Doc: "check-after-wait=true (clientv3 since 3.4.4): after waiting, Get(myKey) finds nothing and Lock fails with session expired",
			Test: etcdWaiterTest(lost), Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid),
			Assert: sessionExpiredSeen},
	}
}

func etcdJepsenVariants() []scenario.Variant {
	cut := nemesis.Fault{Kind: nemesis.Partition, Targets: []string{"c2"}, Duration: nemesis.Duration(12 * time.Second),
		After: &nemesis.Trigger{Node: "c2", F: "acquire", Type: "invoke", Delay: nemesis.Duration(time.Second)}}
	return []scenario.Variant{
		{Name: "unsafe", NoHunt: "its overlap (a waiter told it holds after its lease expired while it was cut off) has no violation kind of its own yet: it is classified other", Doc: "clientv3 3.4.3 (check-after-wait=false), unfenced storage: two holders, a lost update",
			Test: etcdWaiterTest(cut, "check-after-wait", "false"), Expect: scenario.Expect(models.Invalid, models.Invalid),
			Assert: scenario.StoryMentions("lease-expired")},
		{Name: "guarded", Doc: "3.4.3 still, but the data is written by Txn(If IsOwner Then Put) (Jepsen's advice: check the " +
			"revision with every write): the holder whose key is gone cannot write",
			Test: guarded(etcdWaiterTest(cut, "check-after-wait", "false")), Expect: scenario.Expect(models.Valid, models.Invalid),
			Assert: scenario.WritesRejected(1)},
		{Name: "fixed", Doc: "clientv3 since 3.4.4: the own key is checked after waiting; Lock fails with session expired",
			Test: etcdWaiterTest(cut), Expect: scenario.Expect(models.Valid, models.Valid), Assert: sessionExpiredSeen},
	}
}

func etcdStaleUnlockVariants() []scenario.Variant {
	cut := nemesis.Fault{Kind: nemesis.Partition, From: []string{"servers"}, To: []string{"c1"}, Duration: nemesis.Duration(4 * time.Second),
		After: &nemesis.Trigger{Node: "c1", F: "release", Type: "invoke"}}
	t := func(unlock string) scenario.Test {
		return scenario.WithWorkload(etcdTest(2, 30*time.Second, scenario.Schedule(cut), "unlock", unlock, "unlock-retry", "2s"), "hold", "2s", "wait", "30s")
	}
	return []scenario.Variant{
		{Name: "unsafe", NoHunt: "its overlap (a retried unlock deleted the same session's newer key) has no violation kind of its own yet: it is classified other", Doc: "unlock=delete (clientv3 today): the retried delete removes the same session's newer key; c2 acquires while c1 holds",
			Test: t("delete"), Expect: scenario.Expect(models.Invalid, models.Invalid)},
		{Name: "fixed", Doc: "unlock=guarded: the delete compares the create revision; the retry deletes nothing",
			Test: t("guarded"), Expect: scenario.Expect(models.Valid, models.Valid)},
	}
}

// sessionExpiredSeen asserts that an acquire failed because the mutex found
// its own key gone after waiting.
func sessionExpiredSeen(r scenario.Result) error {
	for _, e := range r.Events {
		if e.F == "acquire" && e.Type == "fail" && strings.Contains(e.Detail, "session expired") {
			return nil
		}
	}
	return fmt.Errorf("no acquire failed with session expired")
}
