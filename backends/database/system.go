package database

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

func init() {
	system.Register(system.System{
		Name: "database",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts: []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "ttl", What: "the lock's lease"}},
		GroundTruth: []system.Truth{
			{Label: "database"},
			{Label: "database-db", Options: map[string]string{"resource": "db"}},
			{Label: "database-advisory", Options: map[string]string{"mode": "advisory"}},
			{Label: "database-unique-row", Options: map[string]string{"mode": "unique-row"}},
		},
		Recorded: []system.Recorded{{Label: "database", Nemesis: "random", Seeds: system.Seeds(1, 3), Time: time.Minute}},
		Doc: "a SQL-like database (node db): unique-row (expiry from the client's wall clock), for-update " +
			"(row lock held by a transaction), advisory (session locks) or optimistic (version compare-and-swap); " +
			"dead connections abort their transactions",
		Options: Table,
		Deploy:  deployDatabase,
		// Tokens are the server's grant numbers.
		Claims: []system.Claims{
			{Tokens: true, SafeRelease: true},
			{Variant: "for-update", Options: map[string]string{"mode": "for-update"}, Tokens: true, SafeRelease: true},
			{Variant: "advisory", Options: map[string]string{"mode": "advisory"}, Tokens: true, SafeRelease: true},
		},
		Designs: []system.Design{
			{Name: "PostgreSQL SELECT FOR UPDATE, data in the same transaction", SystemOptions: map[string]string{"resource": "db"},
				Modes: []system.DesignMode{{Storage: storage.Unfenced, Guard: system.GuardTransaction}}},
			{Name: "PostgreSQL SELECT FOR UPDATE, data in another store", Modes: system.UnfencedOnly},
			{Name: "PostgreSQL advisory lock", SystemOptions: map[string]string{"mode": "advisory"}, Modes: system.UnfencedOnly},
			{Name: "Lock table: unique row with expiry", SystemOptions: map[string]string{"mode": "unique-row"}, Modes: system.UnfencedOnly},
			{Name: "Lock table: unique row with expiry + fencing token", SystemOptions: map[string]string{"mode": "unique-row"}, Modes: system.FencedModes},
			{Name: "Optimistic locking (version column, compare-and-set)", SystemOptions: map[string]string{"mode": "optimistic"},
				Modes: []system.DesignMode{{Storage: storage.Unfenced, Guard: system.GuardVersion}}, NoLock: true},
		},
		DataGuard: databaseDataGuard,
	})
}

// databaseDataGuard: optimistic keeps the data in the database's rows behind
// a compare-and-set of versions; for-update with resource=db writes it in the
// lock's own transaction; unique-row and advisory with resource=db write it
// in rows that nothing but the lock guards.
func databaseDataGuard(opts map[string]string) (string, bool) {
	o, err := Table.Parse(opts)
	if err != nil || o.Data() != ResourceDB {
		return "", false
	}
	switch {
	case o.Mode == ModeOptimistic && o.Versions == VersionsPair:
		return system.GuardVersions, true
	case o.Mode == ModeOptimistic:
		return system.GuardVersion, true
	case o.Mode == ModeForUpdate:
		return system.GuardTransaction, true
	}
	return "", true
}

// deployDatabase adds the server "db"; with resource=db (or optimistic) the
// protected data is a row of it. The server's row take-overs and aborted
// transactions are recorded in the history, and so are the begin and the
// commit of every transaction that holds data writes (recordTxns); its
// grants are recorded in the deployment's Grants, and with resource=db the
// writes it applies to the data rows in the deployment's Writes.
func deployDatabase(w *sim.World, opts map[string]string) (system.Deployment, error) {
	o, err := Table.Parse(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	if err := o.Validate(); err != nil {
		return system.Deployment{}, err
	}
	srv := NewServer(o)
	grants := lockapi.NewGrantLog(1)
	srv.RecordGrants(grants)
	var log *history.Log
	srv.OnEvent = func(n *sim.Node, e Event) {
		if log != nil {
			system.RecordEvent(log, n.World(), e.Kind, []string{n.Name()}, e.Detail)
		}
	}
	db := w.AddNode("db", sim.NodeOptions{Handler: srv})
	dep := system.Deployment{
		Grants:  grants,
		Servers: []*sim.Node{db},
		NewLock: func(p *sim.Proc) lockapi.Lock {
			c := NewClient(p, db.ID(), o)
			if log != nil {
				c.OnTxn(recordTxns(log, p.Node()))
			}
			return c
		},
		HasTokens: o.Mode != ModeOptimistic,
		Messages:  MessageTypes(),
		Record:    func(l *history.Log) { log = l },
	}
	if o.Data() == ResourceDB {
		dep.Writes = lockapi.NewWriteLog()
		srv.RecordWrites(dep.Writes)
		dep.NewStorage = func(p *sim.Proc, lock lockapi.Lock) lockapi.Storage { return lock.(*Client) }
		dep.InitialData = srv.Preset
	}
	return dep, nil
}

// recordTxns records the begin and the commit of a database client's data
// transactions on a process of their own on the client's node (opened at
// the first: a run without transactions numbers its processes as before).
func recordTxns(log *history.Log, n *sim.Node) func(TxnStep) {
	return RecordTxns(func() *history.Recorder { return log.NewRecorder(n.Name(), system.Clock(n)) }, nil)
}

// RecordTxns returns the function that records the steps a client tells of
// its data transactions (Client.OnTxn) in the history, in both worlds: on
// the process newRecorder opens at the first step, linked to the writes by
// owner, so that a write inside a transaction applies only if its commit
// does (see package history, Transactions). When stopped (nil: never)
// reports true, nothing more is recorded: a commit whose outcome the run did
// not see stays without a completion (unknown).
func RecordTxns(newRecorder func() *history.Recorder, stopped func() bool) func(TxnStep) {
	var rec *history.Recorder
	var commit history.Op
	open := false
	return func(s TxnStep) {
		if stopped != nil && stopped() {
			return
		}
		if rec == nil {
			rec = newRecorder()
		}
		switch {
		case !s.Commit:
			rec.Invoke(history.Event{F: history.FBegin, Key: s.Key, Owner: s.Owner}).Complete(history.OK, history.Event{})
		case !s.Done:
			commit, open = rec.Invoke(history.Event{F: history.FCommit, Owner: s.Owner}), true
		case open:
			e := history.Event{}
			if s.Err != nil {
				e.Detail = s.Err.Error()
			}
			commit.Complete(workloads.Outcome(s.Err), e) // classified as the workloads classify their operations
			open = false
		}
	}
}
