package zookeeper

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

func init() {
	system.Register(system.System{
		Name: "zookeeper",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts: []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "session-timeout", What: "the session timeout"}},
		GroundTruth: []system.Truth{
			{Label: "zookeeper", LeasesBeyondPromise: "Curator's on-suspend=continue believes for the read timeout plus the session timeout after the last reply, " +
				"the leader keeps the session for the session timeout after the last contact"},
			{Label: "zookeeper-suspend-stop", Options: map[string]string{"on-suspend": "stop"},
				LeasesPastPromiseAfterAPause: "the client's read timeout runs from when it reads a reply (the real client's lastHeard): " +
					"a pause longer than the session timeout less the read timeout, with the reply unread, leaves it believing past the session"},
		},
		Recorded: []system.Recorded{
			{Label: "zookeeper", Nemesis: "random", Seeds: system.Seeds(1, 3), Time: time.Minute},
			{Label: "zookeeper", Nemesis: "random", Seeds: system.Seeds(11, 2), Time: 20 * time.Second, Trace: true},
		},
		Doc: "ZooKeeper ensemble (zk1..zkN, writes through a leader and a quorum) and Curator's InterProcessMutex: " +
			"EPHEMERAL_SEQUENTIAL nodes, sessions expired by the leader, protection, herd, on-suspend, czxid tokens",
		Options: Table,
		Deploy:  system.DeployService(Table, NewEnsemble, (*Ensemble).NewClient, deployZooKeeper),
		Claims:  []system.Claims{{Tokens: true, SafeRelease: true}},
		Designs: []system.Design{
			{Name: "ZooKeeper Curator InterProcessMutex", Modes: system.UnfencedOnly},
			{Name: "ZooKeeper Curator InterProcessMutex + czxid fencing", Modes: system.FencedModes},
			{Name: "ZooKeeper Curator InterProcessMutex, holder stops on SUSPENDED", SystemOptions: map[string]string{"on-suspend": "stop"},
				Modes: system.UnfencedOnly},
		},
	})
}

// deployZooKeeper hands the run what the ensemble records and offers.
// Schedules may name "leader", "followers", "server-of:cN" and
// "servers-but:cN".
func deployZooKeeper(w *sim.World, _ Options, e *Ensemble) system.Deployment {
	var log *history.Log
	e.OnEvent = func(ev Event) {
		if log != nil && ev.F == "session-expired" {
			e.recordSessionExpiry(log, w, ev)
		}
	}
	return system.Deployment{
		HasTokens: true,
		Roles:     Roles(),
		Record:    func(l *history.Log) { log = l },
		Messages:  MessageTypes(),
		Figures: func() map[string]any {
			return map[string]any{"elections": e.Elections, "sessions_expired": e.Expired}
		},
	}
}

// recordSessionExpiry records a session's expiry as a system event: one per
// lock node it deleted, naming the lock (Key), the node (Owner: the lease's
// owner) and until when the leader had promised the session (Deadline, true
// time), so that the lease check can tell a server that kept its promise
// from one that broke it; one event without them when it deleted no lock node.
// The lock nodes are the recipe's (LockNode), or a user's lock's (lockKey).
func (e *Ensemble) recordSessionExpiry(log *history.Log, w *sim.World, ev Event) {
	recorded := false
	for _, p := range ev.Deleted {
		key, ok := e.lockKey(p)
		if !ok {
			continue
		}
		recorded = true
		for _, t := range []history.Type{history.Start, history.Stop} {
			e := history.Event{Time: int64(w.Now()), Process: history.NemesisProcess, Type: t, F: string(ev.F), Targets: ev.Targets,
				Key: key, Owner: p, Detail: ev.Detail}
			if ev.Promised > 0 {
				e.Deadline = history.Ptr(int64(ev.Promised))
			}
			log.Append(e)
		}
	}
	if !recorded {
		system.RecordEvent(log, w, ev.F, ev.Targets, ev.Detail)
	}
}
