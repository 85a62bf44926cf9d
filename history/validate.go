package history

import "fmt"

// validator checks the invariants of a history event by event.
type validator struct {
	lastTime int64
	open     map[int]Event // process -> its open invocation
	retired  map[int]bool  // processes that completed with info
}

func newValidator() *validator {
	return &validator{open: map[int]Event{}, retired: map[int]bool{}}
}

// Validate checks that events form a well-formed history (see the package
// documentation) and returns the first problem found.
func Validate(events []Event) error {
	v := newValidator()
	for i, e := range events {
		if err := v.check(e, i); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	return nil
}

func (v *validator) check(e Event, pos int) error {
	if e.Index != pos {
		return fmt.Errorf("index %d out of sequence (expected %d)", e.Index, pos)
	}
	if e.Time < 0 {
		return fmt.Errorf("negative time %d", e.Time)
	}
	if e.Time < v.lastTime {
		return fmt.Errorf("time %d is earlier than the previous event's %d", e.Time, v.lastTime)
	}
	v.lastTime = e.Time
	if !e.Type.Valid() {
		return fmt.Errorf("unknown type %q (want invoke, ok, fail, info, start or stop)", e.Type)
	}
	if e.F == "" {
		return fmt.Errorf("empty field \"f\"")
	}
	if e.Type == Start || e.Type == Stop {
		return v.checkNemesis(e)
	}
	if e.Process < 0 {
		return fmt.Errorf("operation with negative process %d (only nemesis events use %d)", e.Process, NemesisProcess)
	}
	if v.retired[e.Process] {
		return fmt.Errorf("process %d continues after an info completion (a client must continue as a new process)", e.Process)
	}
	inv, isOpen := v.open[e.Process]
	if e.Type == Invoke {
		if isOpen {
			return fmt.Errorf("process %d invokes %s while its %s (event %d) is still open", e.Process, e.F, inv.F, inv.Index)
		}
		v.open[e.Process] = e
		return nil
	}
	if !isOpen {
		return fmt.Errorf("%s %s of process %d without a preceding invoke", e.Type, e.F, e.Process)
	}
	if inv.F != e.F {
		return fmt.Errorf("completion %s of process %d does not match its invoke %s (event %d)", e.F, e.Process, inv.F, inv.Index)
	}
	if err := mismatch(&inv, &e); err != nil {
		return err
	}
	delete(v.open, e.Process)
	if e.Type == Info {
		v.retired[e.Process] = true
	}
	return nil
}

func (v *validator) checkNemesis(e Event) error {
	if e.Process != NemesisProcess {
		return fmt.Errorf("nemesis event %s with process %d (must be %d)", e.Type, e.Process, NemesisProcess)
	}
	return nil
}
