package nemesis

import (
	"fmt"
	"strings"
)

// Error is a mistake in a schedule: where it is (file and line, fault index,
// field) and what is wrong. Every error Parse, Validate and Install return
// for a mistake in the schedule is an *Error.
type Error struct {
	// File is the schedule's file ("" for a schedule built in code) and Line
	// the line in it (0: unknown).
	File string
	Line int
	// Fault is the index of the fault (faults[i]), -1 for the schedule as a
	// whole; Kind is its kind, when known.
	Fault int
	Kind  Kind
	// Field is the field's path ("targets", "after.type"); "" for the fault or
	// the schedule as a whole.
	Field string
	// Msg says what is wrong, and what would be right.
	Msg string
}

// Error renders "file:line: faults[i] (kind): field "f": msg".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File == "":
		b.WriteString("schedule: ")
	case e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	default:
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	if e.Fault >= 0 {
		fmt.Fprintf(&b, "faults[%d]", e.Fault)
		if e.Kind != "" {
			fmt.Fprintf(&b, " (%s)", e.Kind)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}
