package nemesis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Kind is the kind of a fault.
type Kind string

// Fault kinds.
const (
	// Pause stops the target nodes (a GC or stop-the-world pause) for Duration.
	Pause Kind = "pause"
	// Crash crashes the targets and restarts them after Duration (0: never).
	Crash Kind = "crash"
	// Partition cuts links for Duration (0: until the end): between Groups, or
	// one-way From -> To, or between Targets and every other node.
	Partition Kind = "partition"
	// ClockJump moves the targets' wall clocks by Amount; with a Duration they
	// jump back by the same amount when it ends.
	ClockJump Kind = "clock-jump"
	// ClockDrift sets the targets' clock drift to Drift for Duration (0: until
	// the end), then restores the previous drift.
	ClockDrift Kind = "clock-drift"
	// Delay adds Amount to the latency of messages From -> To (Match restricts
	// them to one message type) for Duration or for Count messages.
	Delay Kind = "delay"
)

// Kinds lists every fault kind.
var Kinds = []Kind{Pause, Crash, Partition, ClockJump, ClockDrift, Delay}

// Duration is a time.Duration that reads and writes JSON as "1.5s" (integers
// are read as nanoseconds).
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s" or an integer number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("bad duration %q (use a Go duration such as \"1.5s\" or \"200ms\")", s)
		}
		*d = Duration(v)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("bad duration %s (use a string such as \"1.5s\", or integer nanoseconds)", b)
	}
	*d = Duration(n)
	return nil
}

// Trigger places a fault right after a history event of a client: the Nth
// (default 1st) event of node Node with function F and type Type (default ok)
// that happens at or after the fault's At, plus Delay.
type Trigger struct {
	Node  string   `json:"node"`
	F     string   `json:"f"`
	Type  string   `json:"type,omitempty"`
	Nth   int      `json:"nth,omitempty"`
	Delay Duration `json:"delay,omitempty"`
}

// Fault is one fault of a schedule.
type Fault struct {
	Kind Kind `json:"kind"`
	// At is when the fault starts (or, with After, when its trigger is armed),
	// as a time since the start of the run.
	At Duration `json:"at,omitempty"`
	// After, when set, starts the fault right after a history event.
	After *Trigger `json:"after,omitempty"`
	// Duration is how long the fault lasts; see each kind for what 0 means.
	Duration Duration `json:"duration,omitempty"`
	// Targets are the nodes the fault acts on (pause, crash, clocks, or the
	// nodes a partition isolates).
	Targets []string `json:"targets,omitempty"`
	// Groups are the sides of a partition.
	Groups [][]string `json:"groups,omitempty"`
	// From and To are the ends of one-way cuts and delays.
	From []string `json:"from,omitempty"`
	To   []string `json:"to,omitempty"`
	// Amount is a clock jump (negative: backwards) or a message delay.
	Amount Duration `json:"amount,omitempty"`
	// Drift is the clock rate error of a clock-drift fault (0.01 = 1% fast).
	Drift float64 `json:"drift,omitempty"`
	// Match restricts a delay to messages of one type, by Go type name
	// (for example "storage.WriteReq").
	Match string `json:"match,omitempty"`
	// Count limits a delay to that many messages (0: every message).
	Count int `json:"count,omitempty"`
}

// Schedule is a list of faults.
type Schedule struct {
	Faults []Fault `json:"faults"`
}

// Validate checks a schedule for mistakes a person could make in a file, and
// names the fault and field.
func (s Schedule) Validate() error {
	for i, f := range s.Faults {
		if err := f.validate(); err != nil {
			return fmt.Errorf("faults[%d] (%s): %w", i, f.Kind, err)
		}
	}
	return nil
}

func (f Fault) validate() error {
	known := false
	for _, k := range Kinds {
		known = known || k == f.Kind
	}
	if !known {
		return fmt.Errorf("field \"kind\": unknown fault kind %q (want one of %v)", f.Kind, Kinds)
	}
	if f.At < 0 {
		return errors.New("field \"at\": negative time")
	}
	if f.Duration < 0 {
		return errors.New("field \"duration\": negative duration")
	}
	if f.After != nil {
		if f.After.Node == "" || f.After.F == "" {
			return errors.New("field \"after\": needs \"node\" and \"f\"")
		}
		if f.After.Nth < 0 {
			return errors.New("field \"after.nth\": negative")
		}
	}
	switch f.Kind {
	case Pause:
		if len(f.Targets) == 0 {
			return errors.New("field \"targets\": a pause needs at least one target")
		}
		if f.Duration == 0 {
			return errors.New("field \"duration\": a pause needs a duration")
		}
	case Crash, ClockJump, ClockDrift:
		if len(f.Targets) == 0 {
			return fmt.Errorf("field \"targets\": a %s needs at least one target", f.Kind)
		}
		if f.Kind == ClockJump && f.Amount == 0 {
			return errors.New("field \"amount\": a clock jump needs a non-zero amount")
		}
		if f.Kind == ClockDrift && 1+f.Drift <= 0 {
			return errors.New("field \"drift\": must be greater than -1")
		}
	case Partition:
		shapes := 0
		if len(f.Groups) > 0 {
			shapes++
			if len(f.Groups) < 2 {
				return errors.New("field \"groups\": a partition needs at least two groups")
			}
		}
		if len(f.From) > 0 || len(f.To) > 0 {
			shapes++
			if len(f.From) == 0 || len(f.To) == 0 {
				return errors.New("fields \"from\"/\"to\": a one-way cut needs both")
			}
		}
		if len(f.Targets) > 0 {
			shapes++
		}
		if shapes != 1 {
			return errors.New("a partition needs exactly one of \"groups\", \"from\"+\"to\" or \"targets\"")
		}
	case Delay:
		if len(f.From) == 0 || len(f.To) == 0 {
			return errors.New("fields \"from\"/\"to\": a delay needs both")
		}
		if f.Amount <= 0 {
			return errors.New("field \"amount\": a delay needs a positive amount")
		}
	}
	return nil
}

// Parse reads a schedule from JSON, rejecting unknown fields; errors name the
// field and, for syntax errors, the line.
func Parse(data []byte, name string) (Schedule, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Schedule
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return Schedule{}, fmt.Errorf("%s:%d: %v", name, lineOf(data, se.Offset), se)
		case errors.As(err, &te):
			return Schedule{}, fmt.Errorf("%s:%d: field %q: %s is not a valid %s", name, lineOf(data, te.Offset), te.Field, te.Value, te.Type)
		default:
			return Schedule{}, fmt.Errorf("%s: %v", name, err)
		}
	}
	if dec.More() {
		return Schedule{}, fmt.Errorf("%s: trailing data after the schedule", name)
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// ReadFile reads and validates a schedule file.
func ReadFile(path string) (Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Schedule{}, fmt.Errorf("read schedule: %w", err)
	}
	return Parse(data, path)
}

// JSON renders the schedule as indented JSON.
func (s Schedule) JSON() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("nemesis: marshal schedule: %v", err))
	}
	return append(b, '\n')
}

func lineOf(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}
