package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/system"
)

// CheckNames lists the checks of a history, in report order: the checks
// `locklab check` can run. A run may also name its system's audits (see
// RunCheckNames).
var CheckNames = models.CheckNames()

// AuditNames lists the audits the registered systems run on their own
// servers after a run (raftkv: raft-audit), sorted.
func AuditNames() []string {
	var out []string
	for _, s := range system.All() {
		for _, a := range s.Audits {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}

// RunCheckNames lists every check a run can ask for: the checks of the
// history, then the systems' audits.
func RunCheckNames() []string { return append(slices.Clone(CheckNames), AuditNames()...) }

// AuditSystems lists the systems that run the audit called name.
func AuditSystems(name string) []string {
	var out []string
	for _, s := range system.All() {
		if slices.Contains(s.Audits, name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Selection is a run's choice of checks: the names for
// models.Config.Select, and the system's audits to run.
type Selection struct {
	// History are the names for models.Config.Select (nil: its default).
	History []string
	// NoHistory says that no check of the history runs (only audits were named).
	NoHistory bool
	// Audits are the audits of the system that run.
	Audits []string
}

// SelectChecks resolves t.Checks: with no names, every check that applies
// and every audit of the system; with names, exactly those (and "+name"
// adds one to the default). An audit of another system is an error that
// says which system runs it.
func (t Test) SelectChecks() (Selection, error) {
	sys, err := system.Find(t.System)
	if err != nil {
		return Selection{}, err
	}
	var s Selection
	var exactHistory, extraHistory []string
	exact := false
	for _, n := range t.Checks {
		name, plus := strings.CutPrefix(n, "+")
		exact = exact || !plus
		switch {
		case slices.Contains(CheckNames, name):
			if plus {
				extraHistory = append(extraHistory, name)
			} else {
				exactHistory = append(exactHistory, name)
			}
		case slices.Contains(AuditNames(), name):
			if !slices.Contains(sys.Audits, name) {
				return s, fmt.Errorf("check %q audits the servers of %s; system %s has no such servers (its audits: %s)",
					name, strings.Join(AuditSystems(name), ", "), t.System, listOrNone(sys.Audits))
			}
			if !slices.Contains(s.Audits, name) {
				s.Audits = append(s.Audits, name)
			}
		default:
			return s, fmt.Errorf("unknown check %q (known: %s)", name, strings.Join(RunCheckNames(), ", "))
		}
	}
	switch {
	case !exact:
		s.Audits = slices.Clone(sys.Audits)
		for _, n := range extraHistory {
			s.History = append(s.History, "+"+n)
		}
	case len(exactHistory) > 0:
		s.History = exactHistory
		for _, n := range extraHistory {
			s.History = append(s.History, "+"+n)
		}
	default: // only audits were named exactly: the history's checks are the extras
		s.History = extraHistory
		s.NoHistory = len(extraHistory) == 0
	}
	return s, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
