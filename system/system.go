// Package system is the contract between locklab and a lock system: what a
// system is (System: its options, how it deploys into a simulated world, what
// it claims, the designs people choose it for), what a deployment hands the
// run (Deployment), and the registry every system adds itself to from its
// own package's init, the way database/sql drivers do. A lock system's
// package imports this one; this one imports no system, so a system outside
// the repository registers the same way the built-in ones do.
//
// It imports only the simulator, the history, the checks' models and the
// backends' shared types.
package system

import (
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
)

// Deployment is a lock system set up in a world.
type Deployment struct {
	// Servers are the system's nodes (none for the control lock).
	Servers []*sim.Node
	// NewLock makes the lock client library of one client process.
	NewLock func(p *sim.Proc) lockapi.Lock
	// NewStorage, when set, makes the protected storage's client of one client
	// process from its lock client, for a resource kept inside the lock
	// service itself (etcd's guarded write); nil: the storage node.
	NewStorage func(p *sim.Proc, lock lockapi.Lock) lockapi.Storage
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
	// Notes, when set, returns what the servers saw during the run that the
	// history cannot show and a reader of the verdicts must know (a Redis
	// script that raised an error, which the lock's call returned as a mere
	// failure): the run's notes, said beside the verdicts.
	Notes func() []string
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
	// against (see lockapi.GrantLog). It is kept out of the history.
	Grants *lockapi.GrantLog
	// Writes, when set, is the record of the writes the system's own
	// protected resource applied (a resource kept inside the lock service:
	// NewStorage), in true time; nil when the clients write to the storage
	// node, which keeps its own (Prepared.Writes).
	Writes *lockapi.WriteLog
}

// System is a lock system as the registry knows it: how to deploy it, its
// options, what it claims and the designs it offers.
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
	// Workload, when set, is the workload the safety matrix's rows of this
	// system run (what the system's users' clients do: a Kubernetes
	// controller leads, it does not lock around each operation); "": the
	// default workload. Runs that name their workload (the conformance
	// suite, the ground-truth sweeps, the command line) keep it.
	Workload string
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
	// Recorded are the runs of the system whose histories (and, with Trace,
	// raft messages) the repository has recorded: the byte-identity guards
	// replay every registered system's and compare, so that no change of
	// behaviour goes unnoticed. Changing them is a re-record.
	Recorded []Recorded
	// GroundTruth are the configurations the ground-truth sweeps run under
	// random faults, seed after seed: every verdict must agree with the
	// servers' record of grants (Deployment.Grants). Empty: the defaults,
	// once, not strict.
	GroundTruth []Truth
	// Timeouts are the design's declared timeouts that faults must outlast
	// to test it (a holder paused past its lease, a client cut off past its
	// session timeout): a run whose faults of a kind all stayed shorter
	// warns, as a run with no fault does. Empty: none declared.
	Timeouts []Timeout
}

// Truth is one configuration of a system that the ground-truth sweeps cover,
// with what its record and its verdicts must agree on.
type Truth struct {
	// Label names the row: the system's name, or a name for its options
	// ("redis-replicated").
	Label string
	// Options, Workload, Storage and FenceReads are the runs' (nil, "", "",
	// false: the defaults).
	Options    map[string]string
	Workload   string
	Storage    storage.Mode
	FenceReads bool
	// Seeds caps the sweep (0: the sweep's own count): a lock that is
	// invalid on every seed (the control) shows that in a few.
	Seeds int
	// Strict says the agreement holds the other way round too: every
	// broken promise of the record that the history can show is judged
	// INVALID, and every INVALID is backed by one.
	Strict bool
	// LeasesBeyondPromise, when set, says why the clients count their
	// leases beyond what the servers promise, by design: their lease
	// INVALIDs blame the client's own deadline.
	LeasesBeyondPromise string
	// LeasesPastPromiseAfterAPause, when set, says why a client may count a
	// lease past the servers' promise when it was paused while the reply
	// waited unread; the check allows it only right after such a pause.
	LeasesPastPromiseAfterAPause string
}

// Recorded is a set of runs of a system whose histories the repository has
// recorded, one per seed, named Label/Nemesis/seed=N
// ("redis-replicated/random/seed=2").
type Recorded struct {
	// Label names the configuration: the system's name, or a name for its
	// options ("redis-replicated", "raftkv/5nodes").
	Label string
	// Options and Workload are the runs' (nil and "": the defaults).
	Options  map[string]string
	Workload string
	// Nemesis is "random" or a list of fault kinds drawn at random.
	Nemesis string
	// Seeds are the runs' seeds.
	Seeds []uint64
	// Time is the simulated duration of each run.
	Time time.Duration
	// Trace says the runs record every raft message the system sends, not
	// the history alone (a system built on raft).
	Trace bool
}

// Seeds returns the seeds from first to first+n-1.
func Seeds(first uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}

// PerNemesis returns one Recorded configuration per nemesis: label's
// defaults under that nemesis alone, one run of seed for d each.
func PerNemesis(label string, seed uint64, d time.Duration, nemeses ...string) []Recorded {
	out := make([]Recorded, len(nemeses))
	for i, n := range nemeses {
		out[i] = Recorded{Label: label, Nemesis: n, Seeds: []uint64{seed}, Time: d}
	}
	return out
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

// Timeout is a timeout of a design that faults of the kinds Kinds must
// outlast to test it: its length is the system option Option.
type Timeout struct {
	// Kinds are the fault kinds ("pause", "partition", "delay") measured
	// against it: a pause's or a cut's duration, a delay's amount.
	Kinds []string
	// Option is the system option that sets it ("lease-duration", "ttl").
	Option string
	// What names it in a warning ("the lease", "the session timeout").
	What string
	// Then is the option of a timeout that starts when this one ends (the
	// lock-delay that starts when a session lease runs out): a fault must
	// outlast both, in turn, to hand the lock to another client, and the
	// matrix fits its runs to that chain. Empty: the matrix chains the two
	// longest timeouts the design declares.
	Then string
}

// registry holds the registered systems, sorted by name.
var registry []System

// Register adds a lock system to the registry; a system's package calls it
// from init. A second system of the same name, or one without a name or a
// Deploy, is a programming error: Register panics.
func Register(s System) {
	if s.Name == "" || s.Deploy == nil {
		panic("system.Register: a system needs a Name and a Deploy")
	}
	for _, r := range registry {
		if r.Name == s.Name {
			panic("system.Register: system " + s.Name + " registered twice")
		}
	}
	registry = append(registry, s)
	slices.SortFunc(registry, func(a, b System) int { return strings.Compare(a.Name, b.Name) })
}

// All lists the registered systems, sorted by name.
func All() []System { return slices.Clone(registry) }

// Find returns the system called name; an unknown name is a
// *suggest.UnknownError naming the systems it was probably meant to be.
func Find(name string) (System, error) {
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	return System{}, suggest.Unknown("system", name, Names())
}

// Names lists the registered systems' names, sorted.
func Names() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.Name
	}
	return out
}

// RowWorkload is the workload the safety matrix's rows of the system called
// name run: its System.Workload ("" when it has none or is not registered).
func RowWorkload(name string) string {
	for _, s := range registry {
		if s.Name == name {
			return s.Workload
		}
	}
	return ""
}

// Unregister removes the system called name from the registry and reports
// whether it was there. A system registers for the life of the program; this
// is for a test that registers a throw-away system (to see what a new system
// gets without further code) and must leave the registry as it found it.
func Unregister(name string) bool {
	n := len(registry)
	registry = slices.DeleteFunc(registry, func(s System) bool { return s.Name == name })
	return len(registry) < n
}
