package live

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/scenario"
)

// Unavailable says why test t has no live form ("" if it has one): its
// system is not live, or its system refuses its options live.
func Unavailable(t scenario.Test) string {
	dep, ok := liveform.Find(t.System)
	if !ok {
		return fmt.Sprintf("system %s has no live form (live: %s)", t.System, strings.Join(Systems(), ", "))
	}
	if _, err := dep.Describe(t.WithDefaults()); errors.Is(err, ErrNotLive) {
		return err.Error()
	}
	return ""
}

// UnreachableOut says why the servers of test t cannot keep their data
// beside the run directory runDir ("" when they can; see
// liveform.Form.UnreachableOut). Said before the run, so that an --out in a
// private directory (a 0700 temporary directory) is refused, or the
// variants it concerns skipped, before any server starts.
func UnreachableOut(t scenario.Test, runDir string) string {
	form, ok := liveform.Find(t.System)
	if !ok || form.UnreachableOut == nil {
		return ""
	}
	return form.UnreachableOut(t, runDir)
}
