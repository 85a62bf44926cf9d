package live

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	livedb "github.com/locklab/locklab/backends/database/live"
	"github.com/locklab/locklab/harness"
)

// noLiveForm wraps an option refusal as ErrNotLive.
type noLiveForm struct{ err error }

func (e noLiveForm) Error() string        { return e.err.Error() }
func (e noLiveForm) Unwrap() error        { return e.err }
func (e noLiveForm) Is(target error) bool { return target == ErrNotLive }

// Unavailable says why test t has no live form ("" if it has one): its
// system is not live, or its system refuses its options live.
func Unavailable(t harness.Test) string {
	dep, ok := deployers[t.System]
	if !ok {
		return fmt.Sprintf("system %s has no live form (live: %s)", t.System, strings.Join(Systems(), ", "))
	}
	if _, err := dep.Describe(t.WithDefaults()); errors.Is(err, ErrNotLive) {
		return err.Error()
	}
	return ""
}

// UnreachableOut says why the servers of test t cannot keep their data
// beside the run directory runDir ("" when they can): PostgreSQL, run as
// its own user when locklab runs as root, must pass through runDir's parent
// and every directory above it. Said before the run, so that an --out in a
// private directory (a 0700 temporary directory) is refused, or its
// database variants skipped, before any server starts.
func UnreachableOut(t harness.Test, runDir string) string {
	if t.System != "database" {
		return ""
	}
	if err := livedb.CheckReachable(filepath.Dir(filepath.Clean(runDir))); err != nil {
		return err.Error()
	}
	return ""
}
