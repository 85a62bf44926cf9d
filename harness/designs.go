package harness

import (
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

type (
	// Design is a lock design as its users name it (system.Design).
	Design = system.Design
	// DesignMode is one way a design is used with the protected storage
	// (system.DesignMode).
	DesignMode = system.DesignMode
)

// DataChecks are the checks that judge a design without a lock (NoLock).
var DataChecks = system.DataChecks

// Guards of the storage modes (see system.GuardFencing and the rest).
const (
	GuardFencing      = system.GuardFencing
	GuardFencingReads = system.GuardFencingReads
	GuardSequencer    = system.GuardSequencer
	GuardTransaction  = system.GuardTransaction
	GuardVersion      = system.GuardVersion
	GuardVersions     = system.GuardVersions
	GuardEtcdTxn      = system.GuardEtcdTxn
)

// The storage modes most designs are offered in.
var (
	unfencedOnly = system.UnfencedOnly
	fencedModes  = system.FencedModes
)

// GuardOf names what keeps the data of a row safe when its lock breaks
// (system.GuardOf).
func GuardOf(sys string, options map[string]string, mode storage.Mode, fenceReads bool) string {
	return system.GuardOf(sys, options, mode, fenceReads)
}

// Designs lists every registered system's designs (system.Designs).
func Designs() []Design { return system.Designs() }
