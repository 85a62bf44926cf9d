package harness

import (
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/workloads"
)

// Deployment is a lock system set up in a world.
type Deployment struct {
	// Servers are the system's nodes (none for the control lock).
	Servers []*sim.Node
	// NewLock makes the lock client library of one client process.
	NewLock func(p *sim.Proc) backends.Lock
	// NewStorage, when set, makes the protected storage's client of one client
	// process from its lock client, for a resource kept inside the lock
	// service itself (etcd's guarded write); nil: the storage node.
	NewStorage func(p *sim.Proc, lock backends.Lock) backends.Storage
	// InitialData, when set, is given the workload's initial values of the
	// resource kept in the system itself (the database's rows).
	InitialData func(initial map[string]int64)
	// HasTokens reports whether grants carry fencing tokens.
	HasTokens bool
	// Resolve maps system-specific target names ("primary") to nodes; nil if none.
	Resolve func(name string) ([]*sim.Node, bool)
	// Roles are the names Resolve understands that follow the system's state
	// ("primary"); random schedules aim at them too.
	Roles []string
	// Record, when set, is given the run's history so that the system can
	// record its own events (a failover) beside the nemesis's faults.
	Record func(log *history.Log)
	// Audit, when set, judges the system's own invariants after the run (for
	// raftkv: one leader per term, no acknowledged command lost), as a check
	// run beside the checks of the history. Its name is in System.Audits.
	Audit models.Check
	// Figures, when set, returns what the system measured during the run
	// (elections, say), for results.json.
	Figures func() map[string]any
	// Check, when set, is the system's CheckSequencer, run from a process of
	// the storage node before each write in the storage's check mode.
	Check func(p *sim.Proc, key string, token uint64) (current bool, err error)
	// Messages are one value of every message type the system's nodes and
	// clients send (the harness adds the storage's): a schedule's delay may
	// match only these, by their %T name ("redis.SetNX").
	Messages []any
	// Release, when set, hands the storage of the servers' own records (a
	// raftkv cluster's logs and audit) to the next run's; Result.Release
	// calls it once the run's figures and verdicts are taken.
	Release func()
	// Grants is the servers' own record of the grants they made, in true
	// time: the ground truth the verdicts of a simulated run can be checked
	// against (see backends.GrantLog). It is kept out of the history.
	Grants *backends.GrantLog
	// Writes, when set, is the record of the writes the system's own
	// protected resource applied (a resource kept inside the lock service:
	// NewStorage), in true time; nil when the clients write to the storage
	// node, which keeps its own (Prepared.Writes).
	Writes *backends.WriteLog
}

// System is an entry of the system registry.
type System struct {
	// Name is the system's name on the command line.
	Name string
	// Doc is one line describing it.
	Doc string
	// Options is the system's option table (its opt.Table): every option's
	// name, meaning and default, for `locklab systems` and results.json.
	Options opt.Spec
	// Deploy checks the options and adds the system's nodes to w.
	Deploy func(w *sim.World, opts map[string]string) (Deployment, error)
	// Audits name the checks its Deployment.Audit runs on its own servers
	// (raftkv: raft-audit); a run may name them in Test.Checks.
	Audits []string
	// InOrder says the system applies each client's acquires and releases in
	// the order the client made them, refusing a request a later one had
	// superseded (raftkv's sessions): the lock checks then let a release of
	// unknown outcome land only before its owner's next request that returned
	// ok (models.LockService.InOrder).
	InOrder bool
	// Claims are what the system promises, one entry per configuration the
	// conformance suite (conformance) proves; every registered system
	// declares at least one.
	Claims []Claims
	// Uncounted says the system's lock does not count nested grants: a grant
	// to the holder is the same grant again and one release frees the lock
	// (the lease and mutex checks model it so: models.LockService.Uncounted).
	Uncounted bool
	// Designs are the lock designs people choose between that this system
	// offers, named as its users name them (see Design); the safety matrix's
	// default rows. System is filled in by Designs().
	Designs []Design
	// DataGuard, when set, says whether the protected data lives in the
	// system itself with these options (the database's rows, a key in etcd)
	// rather than on the storage node, whatever the storage mode, and if so
	// what keeps it safe when the lock breaks ("" when nothing but the lock
	// does). GuardOf asks it for rows that are not a registered design's.
	DataGuard func(opts map[string]string) (guard string, inSystem bool)
}

// Claims are the semantics a lock system declares for one configuration, so
// that the conformance suite knows which properties to demand of it.
type Claims struct {
	// Variant names the configuration ("" for the defaults, "replicated").
	Variant string
	// Options are the system options of this configuration.
	Options map[string]string
	// Tokens says grants carry fencing tokens that increase with every grant
	// (once FencedOptions are added): fenced storage then turns the GC-pause
	// counterexample valid. Redlock's random values are tokens but not monotonic.
	Tokens bool
	// FencedOptions are added to Options for the fenced runs (redis:
	// fencing=true); nil when the tokens come without asking.
	FencedOptions map[string]string
	// SafeRelease says a release by a client that no longer holds the lock
	// never frees another holder's lock.
	SafeRelease bool
	// HolderPause is a pause of the holder long enough that its lock is
	// certainly given to another client meanwhile (longer than its lease or
	// session timeout plus the time to notice). Default 15 s.
	HolderPause time.Duration
	// ExpectFail names the properties this configuration is known to break
	// (the control lock: baseline); the suite reports them if they hold.
	ExpectFail []string
}

// systems is the registry of lock systems; each system's file registers
// itself from init.
var systems []System

// registerSystem adds a system to the registry (called from init).
func registerSystem(s System) {
	systems = append(systems, s)
	slices.SortFunc(systems, func(a, b System) int { return strings.Compare(a.Name, b.Name) })
}

// Systems lists the registered systems, sorted by name.
func Systems() []System { return slices.Clone(systems) }

// FindSystem returns the system called name; an unknown name is a
// *suggest.UnknownError naming the systems it was probably meant to be.
func FindSystem(name string) (System, error) {
	for _, s := range systems {
		if s.Name == name {
			return s, nil
		}
	}
	return System{}, suggest.Unknown("system", name, SystemNames())
}

// SystemNames lists the registered systems.
func SystemNames() []string {
	out := make([]string, len(systems))
	for i, s := range systems {
		out[i] = s.Name
	}
	return out
}

// WorkloadEntry is an entry of the workload registry.
type WorkloadEntry struct {
	// Name is the workload's name on the command line.
	Name string
	// Doc is one line describing it.
	Doc string
	// Options is the workload's option table (its opt.Table).
	Options opt.Spec
	// New checks the options and returns the workload.
	New func(opts map[string]string) (workloads.Workload, error)
}

// workloadEntries is the registry of workloads; each workload's file registers
// itself from init.
var workloadEntries []WorkloadEntry

// registerWorkload adds a workload to the registry (called from init).
func registerWorkload(w WorkloadEntry) {
	workloadEntries = append(workloadEntries, w)
	slices.SortFunc(workloadEntries, func(a, b WorkloadEntry) int { return strings.Compare(a.Name, b.Name) })
}

// registerWorkloadTable registers a workload whose options are the table t:
// its name is the table's owner, and New parses the options with the table.
func registerWorkloadTable[W workloads.Workload](doc string, t opt.Table[W]) {
	registerWorkload(WorkloadEntry{Name: t.Owner, Doc: doc, Options: t,
		New: func(opts map[string]string) (workloads.Workload, error) {
			w, err := t.Parse(opts)
			if err != nil {
				return nil, err
			}
			return w, nil
		}})
}

// Workloads lists the registered workloads, sorted by name.
func Workloads() []WorkloadEntry { return slices.Clone(workloadEntries) }

// WorkloadNames lists the registered workloads.
func WorkloadNames() []string {
	out := make([]string, len(workloadEntries))
	for i, w := range workloadEntries {
		out[i] = w.Name
	}
	return out
}

// FindWorkload returns the workload called name; an unknown name is a
// *suggest.UnknownError naming the workloads it was probably meant to be.
func FindWorkload(name string) (WorkloadEntry, error) {
	for _, w := range workloadEntries {
		if w.Name == name {
			return w, nil
		}
	}
	return WorkloadEntry{}, suggest.Unknown("workload", name, WorkloadNames())
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
