package system

import (
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/storage"
)

// Design is a lock design as its users name it and choose between designs
// ("Redis SET NX PX + Lua release", "etcd clientv3 Mutex + guarded Txn
// write"): a system with the options that make it this design, and the
// storage modes it is offered in. Each system registers its own designs
// (System.Designs); the safety matrix's default rows are these.
type Design struct {
	// Name is the design in its users' words.
	Name string `json:"name"`
	// System is the registered system (filled in by the registry).
	System string `json:"system"`
	// SystemOptions are the options that make the design, defaults left out.
	SystemOptions map[string]string `json:"system_options,omitempty"`
	// Modes are the ways the design protects the data it guards, one row of
	// the matrix each; at least one.
	Modes []DesignMode `json:"modes"`
	// NoLock says the design takes no lock (optimistic concurrency: every
	// client goes ahead and a version check refuses the losers' writes):
	// only the data checks judge it, as a lock's checks would find "two
	// holders" in every run.
	NoLock bool `json:"no_lock,omitempty"`
}

// DataChecks are the checks that judge a design without a lock (NoLock):
// the protected data's, not the lock's.
var DataChecks = []string{"critical-sections"}

// DesignMode is one way a design is used with the protected storage.
type DesignMode struct {
	// Storage and FenceReads are the storage mode (see storage.Mode).
	Storage    storage.Mode `json:"storage"`
	FenceReads bool         `json:"fence_reads,omitempty"`
	// Guard names what keeps the data safe in this mode when the lock itself
	// breaks, in words a reader recognises ("fencing tokens checked by the
	// storage", "the database transaction", "a compare-and-set on the row's
	// version", "etcd's guarded Txn"); "" when nothing but the lock does.
	// An unfenced mode never says "fencing".
	Guard string `json:"guard,omitempty"`
}

// Guards of the storage modes every system with tokens shares.
const (
	// GuardFencing: the storage refuses a write whose token is older than
	// one it has seen.
	GuardFencing = "fencing tokens checked by the storage"
	// GuardFencingReads: the same, for reads too.
	GuardFencingReads = "fencing tokens checked by the storage on reads and writes"
	// GuardSequencer: the storage asks the lock service whether the
	// writer's sequencer is still current (Chubby's CheckSequencer).
	GuardSequencer = "the storage checks the sequencer with the lock service"
	// GuardTransaction: the data is written in the lock's own transaction,
	// which the database aborts when it ends the holder's connection: a
	// write after that is refused.
	GuardTransaction = "the database transaction"
	// GuardVersion: there is no lock; a write lands only if the row's
	// version is still the one read.
	GuardVersion = "a compare-and-set on the row's version"
	// GuardVersions: the same, over the versions of every row read since
	// the acquire (the database's versions=pair).
	GuardVersions = "a compare-and-set on the versions of every row read"
	// GuardEtcdTxn: the data is a key in etcd written by Txn(If the lock's
	// key is still ours Then Put).
	GuardEtcdTxn = "etcd's guarded Txn"
)

// The storage modes most designs are offered in.
var (
	// UnfencedOnly: the storage accepts every write; only the lock (or a
	// guard of the system's own, named by the design) keeps the data.
	UnfencedOnly = []DesignMode{{Storage: storage.Unfenced}}
	// FencedModes: the storage checks the grants' monotonic tokens, on
	// writes, then on reads and writes.
	FencedModes = []DesignMode{{Storage: storage.Fenced, Guard: GuardFencing}, {Storage: storage.Fenced, FenceReads: true, Guard: GuardFencingReads}}
)

// StorageName is the storage mode as rows name it: "unfenced", "fenced",
// "fenced+reads" or "check".
func (m DesignMode) StorageName() string {
	if m.FenceReads {
		return string(m.Storage) + "+reads"
	}
	return string(m.Storage)
}

// Flags are the exact flags of `locklab run` that run the design in mode m
// ("--system redis -o fencing=true --storage fenced"), options in name order.
func (d Design) Flags(m DesignMode) string {
	parts := []string{"--system", d.System}
	for _, k := range slices.Sorted(maps.Keys(d.SystemOptions)) {
		parts = append(parts, "-o", k+"="+d.SystemOptions[k])
	}
	parts = append(parts, "--storage", string(m.Storage))
	if m.FenceReads {
		parts = append(parts, "--fence-reads")
	}
	return strings.Join(parts, " ")
}

// GuardOf names what keeps the data of a row safe when its lock breaks (see
// DesignMode.Guard), for any row, not only a registered design's (the full
// matrix has every option variant): the guard of the registered design mode
// with the same system, options (defaults filled in) and storage mode; else
// the system's own when the options keep the data inside it (the database's
// transaction or compare-and-set, etcd's guarded Txn: System.DataGuard);
// else the storage mode's: fencing for fenced, the sequencer check for
// check, "" for unfenced. An unfenced row's guard never says "fencing".
func GuardOf(system string, options map[string]string, mode storage.Mode, fenceReads bool) string {
	if mode == "" {
		mode = storage.Unfenced
	}
	if mode != storage.Fenced {
		fenceReads = false
	}
	sys, err := Find(system)
	if err != nil {
		return modeGuard(mode, fenceReads)
	}
	if want, err := effective(sys, options); err == nil {
		for _, d := range sys.Designs {
			if got, err := effective(sys, d.SystemOptions); err != nil || !slices.Equal(got, want) {
				continue
			}
			for _, m := range d.Modes {
				if m.Storage == mode && m.FenceReads == fenceReads {
					return m.Guard
				}
			}
		}
	}
	if sys.DataGuard != nil {
		if guard, inSystem := sys.DataGuard(options); inSystem {
			return guard
		}
	}
	return modeGuard(mode, fenceReads)
}

// modeGuard is the guard of a storage mode alone.
func modeGuard(mode storage.Mode, fenceReads bool) string {
	switch {
	case mode == storage.Check:
		return GuardSequencer
	case mode == storage.Fenced && fenceReads:
		return GuardFencingReads
	case mode == storage.Fenced:
		return GuardFencing
	}
	return ""
}

// effective is every option of the system's with its value, defaults
// filled in, so that two spellings of one configuration compare equal.
func effective(sys System, options map[string]string) ([]opt.Setting, error) {
	if sys.Options == nil {
		return nil, nil
	}
	return sys.Options.Effective(options)
}

// Designs lists every registered system's designs, systems in name order,
// each system's designs in its own order. The maps are the caller's own.
func Designs() []Design {
	var out []Design
	for _, s := range registry {
		for _, d := range s.Designs {
			d.System = s.Name
			d.SystemOptions = maps.Clone(d.SystemOptions)
			d.Modes = append([]DesignMode(nil), d.Modes...)
			out = append(out, d)
		}
	}
	return out
}

// Sequencers lists the registered systems that offer a design whose storage
// checks the writer's sequencer with the lock service (storage.Check): the
// systems whose deployment has a CheckSequencer, for help texts and errors.
func Sequencers() []string {
	var out []string
	for _, s := range registry {
		if slices.ContainsFunc(s.Designs, func(d Design) bool {
			return slices.ContainsFunc(d.Modes, func(m DesignMode) bool { return m.Storage == storage.Check })
		}) {
			out = append(out, s.Name)
		}
	}
	return out
}

// FencingFlags lists, for every registered system whose fencing tokens
// must be asked for (Claims.FencedOptions), the system and the flags that
// ask for them ("redis: -o fencing=true"), for errors that say how to get
// tokens.
func FencingFlags() []string {
	var out []string
	for _, s := range registry {
		for _, c := range s.Claims {
			if len(c.FencedOptions) == 0 {
				continue
			}
			var flags []string
			for _, k := range slices.Sorted(maps.Keys(c.FencedOptions)) {
				flags = append(flags, "-o "+k+"="+c.FencedOptions[k])
			}
			if hint := s.Name + ": " + strings.Join(flags, " "); !slices.Contains(out, hint) {
				out = append(out, hint)
			}
		}
	}
	return out
}
