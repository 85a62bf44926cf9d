package nemesis

import (
	"fmt"
	"slices"
	"strings"
)

// The names a fault uses, how they are checked before a run and resolved as
// it starts: the same in both worlds.

// NamedField is one field of a fault that names nodes, with the names it
// gives.
type NamedField struct {
	// Field is the field's path in the schedule ("targets", "groups", ...).
	Field string
	// Names are the names it gives (a node, a role, "clients").
	Names []string
}

// NamedFields lists the fields of f that name nodes, in the order they are
// checked.
func (f Fault) NamedFields() []NamedField {
	return []NamedField{{"targets", f.Targets}, {"groups", flatten(f.Groups)}, {"from", f.From}, {"to", f.To}}
}

// Resolve maps names (nodes, roles, "clients") to the nodes they name, each
// once, in the order first named: the targets of a fault as it starts, in
// either world (N is its node type). A name resolve refuses is left out, and
// the first such refusal is returned with what the others name.
func Resolve[N comparable](names []string, resolve func(name string) ([]N, error)) ([]N, error) {
	var out []N
	var first error
	seen := map[N]bool{}
	for _, name := range names {
		ns, err := resolve(name)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("target %q no longer resolves: %w", name, err)
			}
			continue
		}
		for _, x := range ns {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out, first
}

// CheckNames checks every name of s against the names a system knows:
// resolve returns an error naming what is known for an unknown name; clients
// are the nodes a trigger may follow (nil: any name resolve knows); messages
// are the system's message types a delay's match may name (nil: not
// checked). The error is an *Error naming the fault and the field.
func (s Schedule) CheckNames(resolve func(name string) error, clients, messages []string) error {
	for i, f := range s.Faults {
		for _, field := range f.NamedFields() {
			for _, name := range field.Names {
				if err := resolve(name); err != nil {
					return s.errorAt(i, field.Field, err.Error())
				}
			}
		}
		for _, ft := range f.triggers() {
			field, t := ft.field, ft.trigger
			if clients == nil {
				if err := resolve(t.Node); err != nil {
					return s.errorAt(i, field+".node", err.Error())
				}
			} else if !slices.Contains(clients, t.Node) {
				return s.errorAt(i, field+".node", fmt.Sprintf("%q is not a client: a trigger follows the operations of a client (%s)",
					t.Node, listNames(clients)))
			}
		}
		if f.Match != "" && messages != nil && !slices.Contains(messages, f.Match) {
			return s.errorAt(i, "match", fmt.Sprintf("%q is not a message type of this system (want one of %s)",
				f.Match, strings.Join(messages, ", ")))
		}
	}
	return nil
}

// ErrorAt is the *Error "faults[i], field: msg", located in the schedule's
// file when it was read from one: for a world's own refusals of a fault.
func (s Schedule) ErrorAt(i int, field, msg string) *Error {
	return s.errorAt(i, field, msg)
}

// listNames lists names, eliding the middle of a long list.
func listNames(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:3], ", ") + ", ..., " + names[len(names)-1]
	}
	return strings.Join(names, ", ")
}

func flatten(groups [][]string) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// namedTrigger is one of a fault's triggers and the field that holds it.
type namedTrigger struct {
	field   string
	trigger *Trigger
}

// triggers are the fault's start and end anchors that are set, in that
// order ("after", "until").
func (f Fault) triggers() []namedTrigger {
	var out []namedTrigger
	if f.After != nil {
		out = append(out, namedTrigger{"after", f.After})
	}
	if f.Until != nil {
		out = append(out, namedTrigger{"until", f.Until})
	}
	return out
}
