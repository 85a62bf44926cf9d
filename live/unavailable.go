package live

import (
	"errors"
	"fmt"
	"strings"

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
