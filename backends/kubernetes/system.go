package kubernetes

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// EventForeignRelease: a client's ReleaseOnCancel cleared the holder of a
// Lease another client held (recorded in the history as a system event).
const EventForeignRelease system.EventKind = "lease-released-by-another"

func init() {
	system.Register(system.System{
		Name: "kubernetes",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts: []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "lease-duration", What: "the Lease"}},
		GroundTruth: []system.Truth{
			{Label: "kubernetes", Strict: true},
			{Label: "kubernetes-leader-election", Workload: RowWorkload, Strict: true},
			{Label: "kubernetes-release-on-cancel", Options: map[string]string{"release-on-cancel": "true"},
				LeasesBeyondPromise: "with ReleaseOnCancel, client-go's renew() calls release() before Run cancels the leader's context, so the leader believes it leads until its release ends, " +
					"up to RenewDeadline past the poll that gave up, beyond the leaseDurationSeconds the API servers promised"},
		},
		Recorded: []system.Recorded{
			{Label: "kubernetes", Nemesis: "random", Seeds: system.Seeds(1, 2), Time: 30 * time.Second},
			{Label: "kubernetes-leader-election", Workload: RowWorkload, Nemesis: "random", Seeds: system.Seeds(1, 2), Time: 30 * time.Second},
		},
		Doc: "Kubernetes leader election: client-go's leaderelection over a coordination.k8s.io/v1 Lease, stored by " +
			"API servers (apiserver1..N, each its own etcd connection) in etcd with a compare-and-swap on resourceVersion; " +
			"observedTime on the candidate's own clock, renew deadline, ReleaseOnCancel; no fencing unless asked",
		Options:  Table,
		Workload: RowWorkload,
		Deploy:   system.DeployService(Table, NewCluster, (*Cluster).NewClient, deployKubernetes),
		Claims:   claims,
		// One design (the matrix holds 25): client-go's election with the
		// leaseTransitions token on offer; unfenced storage ignores the
		// token, which is client-go as everyone runs it.
		Designs: []system.Design{
			{Name: "client-go leader election (Lease), leaseTransitions token", SystemOptions: map[string]string{"fencing": string(FencingTransitions)},
				Modes: []system.DesignMode{
					{Storage: storage.Unfenced},
					{Storage: storage.Fenced, Guard: system.GuardFencing},
					{Storage: storage.Fenced, FenceReads: true, Guard: system.GuardFencingReads},
				}},
		},
	})
}

// RowWorkload is the workload of the system's matrix rows and catalog
// scenarios: a controller runs for leadership, works while it leads and
// runs again when it stops leading (workloads.LeaderElection), as client-go's
// LeaderElector is used.
const RowWorkload = "leader-election"

// claims are the configurations the conformance suite proves. The suite's
// workload has five clients contend with a 5 s wait: client-go's 2 s retry
// period cannot hand the Lease round that fast, so the claims elect with a
// 50 ms retry period (lease-duration 2s, renew-deadline 1s), releasing on
// cancel. ReleaseOnCancel is not a safe release: a leader whose renewals
// failed releases with the Lease's current resourceVersion whoever holds it
// (see tryRelease), so SafeRelease is not claimed with it; without it the
// suite's clients cannot hand the Lease round (the leader re-acquires its
// own Lease at once, the others wait for it to expire).
var claims = []system.Claims{
	{Options: fastElection("true"), Tokens: true, FencedOptions: map[string]string{"fencing": string(FencingTransitions)}},
	{Variant: "resource-version", Options: fastElection("true"), Tokens: true,
		FencedOptions: map[string]string{"fencing": string(FencingResourceVersion)}},
}

func fastElection(releaseOnCancel string) map[string]string {
	return map[string]string{"lease-duration": "2s", "renew-deadline": "1s", "retry-period": "50ms", "release-on-cancel": releaseOnCancel}
}

// deployKubernetes hands the run what etcd's members and the API servers
// record and offer. Schedules may name "apiservers", "etcd-leader" and
// "etcd-followers".
func deployKubernetes(w *sim.World, o Options, c *Cluster) system.Deployment {
	var log *history.Log
	c.OnForeignRelease = func(client, holder, lease string) {
		if log != nil {
			system.RecordEvent(log, w, EventForeignRelease, []string{client, holder},
				fmt.Sprintf("%s released Lease %s/%s, held by %s (ReleaseOnCancel with an old observation)", client, Namespace, lease, holder))
		}
	}
	return system.Deployment{
		HasTokens: o.Fencing != FencingNone,
		Roles:     Roles(),
		Record:    func(l *history.Log) { log = l },
		Messages:  append(MessageTypes(), etcd.Request{}, etcd.Response{}, etcd.RaftMessage{}),
		Figures: func() map[string]any {
			return map[string]any{"takeovers": c.Takeovers, "releases": c.Releases, "foreign_releases": c.ForeignReleases}
		},
	}
}
