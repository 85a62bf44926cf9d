package kubernetes

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
	scenario.Register("kubernetes", kubernetesScenarios)
}

// lateStart pauses client c2 for the first 5 s, so that c1 (the client the
// story follows) becomes leader first.
var lateStart = nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c2"}, Duration: nemesis.Duration(5 * time.Second)}

// cutFromAPIServers cuts client node off from every API server (of n) right
// after its first read, until the end of the run.
func cutFromAPIServers(node string, n int) nemesis.Fault {
	servers := make([]string, n)
	for i := range servers {
		servers[i] = APIServerName(i + 1)
	}
	return nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{node}, servers}, After: scenario.After(node, "read")}
}

// kubernetesScenarios are client-go leader election's: the baseline, a
// leader paused past LeaseDuration, a leader's slow clock against a clock
// merely set wrong, a leader cut off from the API servers and an API server
// cut off from etcd, ReleaseOnCancel after a pause, and many candidates.
func kubernetesScenarios() []scenario.Scenario {
	return []scenario.Scenario{baselineScenario(), pausedLeaderScenario(), slowClockScenario(), cutOffScenario(),
		releaseOnCancelScenario(), manyCandidatesScenario()}
}

// k8sTest is a run of the kubernetes rows' workload, 2 controllers for 50 s,
// with the given system options.
func k8sTest(opts ...string) scenario.Test {
	return scenario.Test{System: "kubernetes", Workload: RowWorkload, Clients: 2, Seed: 1, Time: 50 * time.Second,
		SystemOptions: scenario.WithOpts(nil, opts...)}
}

// k8sFenced is t on fenced storage with the given fencing token.
func k8sFenced(t scenario.Test, fencing Fencing) scenario.Test {
	return scenario.Fenced(t, "fencing", string(fencing))
}

// baselineScenario: client-go's defaults, no faults.
func baselineScenario() scenario.Scenario {
	return scenario.Scenario{
		Name: "baseline-kubernetes",
		Doc:  "client-go leader election over a Lease, one API server and 3 etcd members, client-go's defaults, 5 controllers, no faults: every check valid",
		Variants: []scenario.Variant{{Name: "fixed", Doc: "no faults", Test: scenario.Test{System: "kubernetes", Workload: RowWorkload, Seed: 1},
			Expect: scenario.Expect(models.Valid, models.Valid).And("lease", models.Valid)}},
	}
}

// pausedLeaderScenario: a leader paused past LeaseDuration right after it
// read.
func pausedLeaderScenario() scenario.Scenario {
	paused := k8sTest()
	paused.Schedule = scenario.Schedule(lateStart, scenario.PauseAfter("c1", "read", 30*time.Second))

	return scenario.Scenario{
		Name: "kubernetes-paused-leader",
		Doc: "controller c1 leads and pauses 30 s (a GC or stop-the-world pause) right after it read; c2 saw the Lease unchanged for " +
			"LeaseDuration (15 s on its own clock) and took it over; c1 resumes, its renew poll's deadline has passed (it stops " +
			"leading), but the write it computed before the pause goes out (mutual exclusion broken even when fenced: c1 acted past its own deadline)",
		Variants: []scenario.Variant{
			{Name: "unsafe", Kind: scenario.KindGCPause, Doc: "client-go as it is (no fencing), unfenced storage: c1's stale write lands after c2's",
				Test: paused, Expect: scenario.Expect(models.Invalid, models.Invalid)},
			{Name: "fixed", MatrixNote: scenario.FencedWritesNote, Doc: "the Lease's leaseTransitions as a fencing token, checked by the storage: c1's token (1) is older than c2's (2), its write is rejected",
				Test: k8sFenced(paused, FencingTransitions), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: scenario.WritesRejected(1)},
			{Name: "fixed-resource-version", Doc: "the resourceVersion of the Lease write that made each leader, checked by the storage: c1's stale write is rejected",
				Test: k8sFenced(paused, FencingResourceVersion), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: scenario.WritesRejected(1)},
		},
	}
}

// slowClockScenario: a leader's slow clock against a clock merely set
// wrong, while it is cut off from the API server.
func slowClockScenario() scenario.Scenario {
	// c1 leads, reads, is cut off from the API servers and works 13 s (on
	// its own clock) before it writes.
	clock := func(f nemesis.Fault, opts ...string) scenario.Test {
		t := scenario.WithWorkload(k8sTest(opts...), "hold", "13s")
		t.Schedule = scenario.Schedule(lateStart, cutFromAPIServers("c1", 1), f)
		return t
	}
	slow := nemesis.Fault{Kind: nemesis.ClockDrift, Targets: []string{"c1"}, Drift: -0.5}
	jumped := nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c1"}, Amount: nemesis.Duration(-time.Hour)}

	return scenario.Scenario{
		Name: "kubernetes-slow-clock",
		Doc: "leader c1 is cut off from the API server right after it read and works 13 s on its own clock before it writes; " +
			"c2 takes the Lease over once it has seen it unchanged for LeaseDuration on c2's clock",
		Variants: []scenario.Variant{
			{Name: "unsafe", NoHunt: "the overlap needs a slow clock on the leader and a cut together, past what random faults draw at once",
				Doc: "c1's clock runs at half speed: its RenewDeadline (10 s on its clock) lasts 20 s, so it still believes it leads when c2, " +
					"15 s after it last saw the Lease change, takes over; c1's late write lands after c2's",
				Test: clock(slow), Expect: scenario.Expect(models.Invalid, models.Invalid)},
			{Name: "offset-only", Doc: "c1's wall clock is set an hour back instead: the elector compares only times it took itself on its " +
				"monotonic clock (observedTime), the Lease's renewTime only tells it that the record changed; c1 stops leading and writes before c2 takes over",
				Test: clock(jumped), Expect: scenario.Expect(models.Valid, models.Valid)},
			{Name: "fixed", Doc: "half-speed clock on c1, lease-duration 30s: client-go's rule, LeaseDuration/RenewDeadline at least the rate " +
				"skew to tolerate (here 3 against 2): c2 waits 30 s, c1 has written by then",
				Test: clock(slow, "lease-duration", "30s"), Expect: scenario.Expect(models.Valid, models.Valid)},
		},
	}
}

// cutOffScenario: a leader cut off from the API servers, and an API
// server cut off from etcd.
func cutOffScenario() scenario.Scenario {
	cutLeader := scenario.WithWorkload(k8sTest("api-servers", "3"), "hold", "25s")
	cutLeader.Schedule = scenario.Schedule(lateStart, cutFromAPIServers("c1", 3))

	etcdCut := k8sTest()
	etcdCut.Schedule = scenario.Schedule(nemesis.Fault{Kind: nemesis.Partition, At: nemesis.Duration(15 * time.Second),
		Duration: nemesis.Duration(20 * time.Second), Groups: [][]string{{"apiserver1"}, {"etcd1", "etcd2", "etcd3"}}})

	// With 3 API servers, seed 1: c1's connection goes to apiserver3
	// (viaAPIServer3 checks it), c2's to another.
	leadersServerCut := k8sTest("api-servers", "3")
	leadersServerCut.Schedule = scenario.Schedule(lateStart, nemesis.Fault{Kind: nemesis.Partition, At: nemesis.Duration(10 * time.Second),
		Groups: [][]string{{"apiserver3"}, {"etcd1", "etcd2", "etcd3"}}})

	return scenario.Scenario{
		Name: "kubernetes-cut-off",
		Doc:  "leader c1 is cut off from all 3 API servers right after it read, and its work in progress (25 s) outlives its leadership",
		Variants: []scenario.Variant{
			{Name: "unsafe", NoHunt: "the leader knows its deadline and acts past it while cut off, not paused: no violation kind has a rule for it",
				Doc: "c1's renewals fail; after RenewDeadline it stops leading (OnStoppedLeading), " +
					"but the work it started goes on; c2 takes over after LeaseDuration and c1's late write lands after c2's",
				Test: cutLeader, Expect: scenario.Expect(models.Invalid, models.Invalid)},
			{Name: "fixed", Doc: "leaseTransitions fencing on reads and writes (c2 reads before c1's late write: a fence on writes alone " +
				"would let c1's write through and lose c2's update): c1's late write is rejected",
				Test: fenceReads(k8sFenced(cutLeader, FencingTransitions)), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: scenario.WritesRejected(1)},
			{Name: "etcd-cut", Doc: "the one API server is cut off from etcd for 20 s: every request it serves fails, the leader stops leading " +
				"after RenewDeadline and nobody can take over until the cut heals: safe, unavailable",
				Test: etcdCut, Expect: scenario.Expect(models.Valid, models.Valid)},
			{Name: "leaders-apiserver-cut", Doc: "3 API servers; at 10 s the one leader c1 talks to (apiserver3) is cut off from etcd " +
				"for good: it answers c1's renewals with errors until one times out; c1 stops leading RenewDeadline after its " +
				"last successful renewal, and only then does anyone lead again, through another API server: c1 itself, running " +
				"again on the connection that moved to apiserver1 after the timeout, takes back the Lease that still names it " +
				"(a candidate that is not the holder would wait LeaseDuration after the Lease last changed): safe, unavailable meanwhile",
				Test: leadersServerCut, Expect: scenario.Expect(models.Valid, models.Valid), Assert: viaAPIServer3},
		},
	}
}

// releaseOnCancelScenario: ReleaseOnCancel after a pause, in each
// client-go release.
func releaseOnCancelScenario() scenario.Scenario {
	releasing := func(release string, v ClientGo) scenario.Test {
		t := k8sFenced(k8sTest("release-on-cancel", release, "client-go", string(v)), FencingTransitions)
		t.Schedule = scenario.Schedule(lateStart, scenario.PauseAfter("c1", "read", 30*time.Second))
		return t
	}

	return scenario.Scenario{
		Name: "kubernetes-release-on-cancel",
		Doc: "c1 leads and pauses 30 s right after it read; c2 takes over; c1 resumes, its renew poll has run out: it stops " +
			"leading, and its late write is rejected (storage fenced with leaseTransitions); what its ReleaseOnCancel does " +
			"depends on the client-go release",
		Variants: []scenario.Variant{
			{Name: "unsafe", NoHunt: "the overlap needs ReleaseOnCancel and a holder paused past LeaseDuration",
				Doc: "ReleaseOnCancel, client-go 0.37 (pre-release): c1 gets the Lease (now c2's), still believes " +
					"it leads (IsLeader reads its last observation, not the record just fetched), and updates it to no holder with " +
					"the resourceVersion it fetched (on a 409 Conflict it gets and updates again): the update succeeds and c2's " +
					"Lease is gone while c2 leads",
				Test: releasing("true", ClientGo037), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: foreignReleases(true)},
			{Name: "client-go-0.36", Doc: "ReleaseOnCancel, client-go v0.34.0 to v0.36 (the newest release): the same get and " +
				"update with the fetched resourceVersion, without the retry: c2's Lease is cleared as in /unsafe (a Conflict, " +
				"when a write of c2 lands between c1's get and update, would end the release instead)",
				Test: releasing("true", ClientGo036), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: foreignReleases(true)},
			{Name: "client-go-0.33", Doc: "ReleaseOnCancel, client-go v0.33 and before: release updates with the resourceVersion " +
				"c1 cached before its pause; the Lease has changed since: 409 Conflict, c2 keeps it",
				Test: releasing("true", ClientGo033), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: foreignReleases(false)},
			{Name: "fixed", MatrixNote: scenario.FencedWritesNote, Doc: "without ReleaseOnCancel (client-go's default) c1 stops leading and releases nothing: c2 keeps the Lease",
				Test: releasing("false", ClientGo036), Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid),
				Assert: foreignReleases(false)},
		},
	}
}

// manyCandidatesScenario: 10 candidates handing the Lease round.
func manyCandidatesScenario() scenario.Scenario {
	// Each leader is told to stop after 2 s (term) and runs again 500 ms
	// later; a candidate gives up running after wait (a failed acquire) and
	// runs again.
	many := func(wait string, opts ...string) scenario.Test {
		t := scenario.WithWorkload(k8sTest(append([]string{"release-on-cancel", "true"}, opts...)...), "term", "2s", "wait", wait)
		t.Clients, t.Time = 10, 30*time.Second
		return t
	}

	return scenario.Scenario{
		Name: "kubernetes-many-candidates",
		Doc: "10 controllers elect at once and hand the Lease round (each leader is told to stop after 2 s and releases: " +
			"ReleaseOnCancel), no faults. An earlier unsafe variant " +
			"(lease-duration 900ms: leaseDurationSeconds 0, every candidate taking the Lease over) is retired: it was an " +
			"artifact of a model that stored leaseDurationSeconds 0, which kube-apiserver's validation refuses",
		Variants: []scenario.Variant{
			{Name: "sub-second", Doc: "lease-duration 900ms: client-go writes leaseDurationSeconds in whole seconds, 0, and the API " +
				"server refuses every create and update (422 Invalid: must be greater than 0): nobody ever leads; safe, unavailable",
				Test:   many("5s", "lease-duration", "900ms", "renew-deadline", "600ms", "retry-period", "100ms"),
				Expect: scenario.Expect(models.Unknown, models.Unknown), Assert: nobodyLeads},
			{Name: "fixed", Doc: "lease-duration 2s: candidates take over only an unchanged Lease, and their concurrent updates conflict " +
				"on resourceVersion: one wins, the others get 409 Conflict",
				Test:   many("30s", "lease-duration", "2s", "renew-deadline", "1s", "retry-period", "100ms"),
				Expect: scenario.Expect(models.Valid, models.Valid)},
		},
	}
}

// viaAPIServer3 asserts that c1 first became leader through apiserver3,
// that its term ended with the renewals lost (a failed release), and that
// the next leadership came later through another API server.
func viaAPIServer3(r scenario.Result) error {
	first, lost := false, false
	for _, e := range r.Events {
		switch {
		case e.F == history.FRelease && e.Type == history.Fail && e.Node == "c1" && first:
			lost = true
		case e.F != history.FAcquire || e.Type != history.OK:
		case !first:
			if e.Node != "c1" || !strings.Contains(e.Detail, "via apiserver3") {
				return fmt.Errorf("%s first led (want c1, through apiserver3): %s", e.Node, e.Detail)
			}
			first = true
		case !lost:
			return fmt.Errorf("%s led at %s before c1 stopped leading", e.Node, history.FormatTime(e.Time))
		case strings.Contains(e.Detail, "via apiserver3"):
			return fmt.Errorf("%s led again through apiserver3, cut off from etcd: %s", e.Node, e.Detail)
		default:
			return nil
		}
	}
	return fmt.Errorf("want c1 to lead, stop leading and someone to lead again (c1 led: %t, stopped: %t)", first, lost)
}

// nobodyLeads asserts that no acquisition succeeded and that the API
// server refused the elector's writes as invalid.
func nobodyLeads(r scenario.Result) error {
	invalid := false
	for _, e := range r.Events {
		if e.F == history.FAcquire && e.Type == history.OK {
			return fmt.Errorf("%s became leader at %s", e.Node, history.FormatTime(e.Time))
		}
		invalid = invalid || strings.Contains(e.Detail, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0")
	}
	if !invalid {
		return fmt.Errorf("no acquisition failed with 422 Invalid (leaseDurationSeconds)")
	}
	return nil
}

// fenceReads fences the storage's reads too.
func fenceReads(t scenario.Test) scenario.Test {
	t.FenceReads = true
	return t
}

// foreignReleases asserts that some client's release cleared a Lease
// another held (want) or that none did.
func foreignReleases(want bool) func(scenario.Result) error {
	return func(r scenario.Result) error {
		n, _ := r.SystemFigures["foreign_releases"].(int)
		switch {
		case want && n == 0:
			return fmt.Errorf("no release cleared a Lease another client held")
		case !want && n > 0:
			return fmt.Errorf("%d release(s) cleared a Lease another client held", n)
		}
		return nil
	}
}
