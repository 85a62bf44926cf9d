package cli

import (
	"os"
	"runtime/debug"
)

// Batch collection: a sweep or a matrix makes thousands of short simulated
// runs whose garbage dies with each run, so the collector can run less often
// than Go's default (GOGC=100) without holding much more. The matrix's CPU
// drops by about a sixth with a collection at 300% growth; the soft memory
// limit keeps the heap bounded as it nears it. GOGC and GOMEMLIMIT, when
// set, win.
const (
	batchGCPercent   = 300
	batchMemoryLimit = 3 << 30
)

// batchGC sets the collector for a long batch of simulated runs, unless the
// environment already does.
func batchGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(batchGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(batchMemoryLimit)
	}
}
