package harness

import (
	"maps"
	"slices"

	"github.com/locklab/locklab/backends/storage"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
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
}

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
)

// Designs lists every registered system's designs, systems in name order,
// each system's designs in its own order. The maps are the caller's own.
func Designs() []Design {
	var out []Design
	for _, s := range systems {
		for _, d := range s.Designs {
			d.System = s.Name
			d.SystemOptions = maps.Clone(d.SystemOptions)
			d.Modes = append([]DesignMode(nil), d.Modes...)
			out = append(out, d)
		}
	}
	return out
}

// FiredFaults counts, per fault kind, the faults that took hold during a
// run: a nemesis start event in its history. A fault drawn or scheduled that
// never started (due after the run ended, or triggered by a step that never
// came) is not counted: a run whose faults never fired is evidence of
// nothing about faults.
func FiredFaults(events []history.Event) map[string]int {
	out := map[string]int{}
	for _, e := range events {
		if e.Process == history.NemesisProcess && e.Type == history.Start && slices.Contains(nemesis.Kinds, nemesis.Kind(e.F)) {
			out[e.F]++
		}
	}
	return out
}
