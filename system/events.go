package system

import (
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

// EventKind names something a lock system did by itself (a failover, a
// session it expired), recorded in the history as a nemesis-process window
// beside the faults that caused it (its F). The system that records an
// event and the checks that read it (violation kinds, the story) use these
// constants, never free text.
type EventKind string

// The events the built-in systems record.
const (
	// EventFailover: the monitor promoted a replica (Targets: the new
	// primary, then the old one).
	EventFailover EventKind = "failover"
	// EventSessionExpired: the service expired a client's session and with
	// it the locks the session held (ZooKeeper's leader, Chubby's master).
	EventSessionExpired EventKind = "session-expired"
	// EventLeaderElected: a ZooKeeper server became the ensemble's leader.
	EventLeaderElected EventKind = "leader-elected"
	// EventMasterElected: a Chubby replica became the cell's master.
	EventMasterElected EventKind = "master-elected"
	// EventLockDelay: Chubby held a lock back from new holders after its
	// holder's session expired (its lock-delay).
	EventLockDelay EventKind = history.FLockDelay
	// EventLeaseExpired: an etcd leader revoked a lease its client had not
	// kept alive.
	EventLeaseExpired EventKind = "lease-expired"
	// EventLeaseExtended: a new etcd leader restarted the leases it found.
	EventLeaseExtended EventKind = "lease-extended"
	// EventRowTakenOver: the database gave an expired lock row to another
	// client (unique-row mode).
	EventRowTakenOver EventKind = "row-taken-over"
	// EventTransactionAborted: the database ended a silent connection and
	// aborted its transaction.
	EventTransactionAborted EventKind = "transaction-aborted"
)

// RecordEvent records something the system did by itself as an
// instantaneous nemesis-process window (a start and a stop at w's now), so
// that checks and reports show it beside the faults that caused it.
func RecordEvent(log *history.Log, w *sim.World, kind EventKind, targets []string, detail string) {
	for _, t := range []history.Type{history.Start, history.Stop} {
		log.Append(history.Event{Time: int64(w.Now()), Process: history.NemesisProcess, Type: t, F: string(kind), Targets: targets, Detail: detail})
	}
}
