package live

import (
	"errors"
	"fmt"
	"strings"

	"github.com/locklab/locklab/harness"
)

// ErrNoLiveForm marks a test that cannot run live at all: its system has no
// live form, or its options ask for something the real server or library
// does not do (a variant `repro --live --all` skips, naming the reason).
var ErrNoLiveForm = errors.New("no live form")

// noLiveForm wraps an option refusal as ErrNoLiveForm.
type noLiveForm struct{ err error }

func (e noLiveForm) Error() string        { return e.err.Error() }
func (e noLiveForm) Unwrap() error        { return e.err }
func (e noLiveForm) Is(target error) bool { return target == ErrNoLiveForm }

// Unavailable says why test t has no live form ("" if it has one): its
// system is not live, or its system refuses its options live.
func Unavailable(t harness.Test) string {
	dep, ok := deployers[t.System]
	if !ok {
		return fmt.Sprintf("system %s has no live form (live: %s)", t.System, strings.Join(Systems(), ", "))
	}
	if _, err := dep.Describe(t.WithDefaults()); errors.Is(err, ErrNoLiveForm) {
		return err.Error()
	}
	return ""
}
