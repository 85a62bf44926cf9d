package nemesis

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
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

// UnmarshalJSON reads "1.5s" or an integer number of nanoseconds; null leaves
// the duration as it is.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
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
	// Until, when set, ends the fault right after a history event recorded
	// after the fault started (its trigger's Nth such event, plus its delay):
	// "resume c1 1 ms after c2's first read". Duration is then the longest
	// the fault lasts (0: until that event, or the end of the run). A
	// delay takes no until (it ends by its duration or count).
	Until *Trigger `json:"until,omitempty"`
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
	// (for example "storage.WriteReq"); Install rejects a name that is not a
	// message type of the system.
	Match string `json:"match,omitempty"`
	// Count limits a delay to that many messages (0: every message).
	Count int `json:"count,omitempty"`
	// Lossy makes a partition a lossy cut: its links drop what they catch
	// (sim.Network.BlockLossy, datagram semantics) whatever the world's cuts
	// do (Test.Cuts, --cuts). A link already cut keeps its first cut's
	// mode.
	Lossy bool `json:"lossy,omitempty"`
}

// Schedule is a list of faults.
type Schedule struct {
	Faults []Fault `json:"faults"`
	// src is where the schedule was read from (nil: built in code), so that
	// mistakes found when it is installed name the file and line.
	src *source
}

// source is the file a schedule was read from and the line of each of its
// faults and fields, by path ("faults[2]", "faults[2].after.type").
type source struct {
	file  string
	lines map[string]int
}

// File is the name of the file the schedule was read from ("" if it was built
// in code).
func (s Schedule) File() string {
	if s.src == nil {
		return ""
	}
	return s.src.file
}

// errorAt is the error "fault i, field: msg", located in the schedule's file
// when it was read from one. field may be "" (the fault as a whole) or a path
// such as "after.type".
func (s Schedule) errorAt(i int, field, msg string) *Error {
	e := &Error{Fault: i, Kind: s.Faults[i].Kind, Field: field, Msg: msg}
	if s.src != nil {
		e.File = s.src.file
		path := fmt.Sprintf("faults[%d]", i)
		e.Line = s.src.lines[path]
		// The line of the field itself, or of the closest enclosing one given.
		for f := field; f != ""; f = f[:max(strings.LastIndexByte(f, '.'), 0)] {
			if l, ok := s.src.lines[path+"."+f]; ok {
				e.Line = l
				break
			}
		}
	}
	return e
}

// Validate checks a schedule for mistakes a person could make in a file:
// unknown kinds, functions and event types, missing or negative values, and
// fields that the fault's kind does not take (they would silently do
// nothing). The error is an *Error naming the fault and the field.
func (s Schedule) Validate() error {
	for i, f := range s.Faults {
		if field, msg := f.validate(); msg != "" {
			return s.errorAt(i, field, msg)
		}
	}
	return nil
}

// kindFields are the fields each kind takes besides kind, at, after, until
// and duration.
var kindFields = map[Kind][]string{
	Pause:      {"targets"},
	Crash:      {"targets"},
	ClockJump:  {"targets", "amount"},
	ClockDrift: {"targets", "drift"},
	Partition:  {"targets", "groups", "from", "to", "lossy"},
	Delay:      {"from", "to", "amount", "match", "count"},
}

// TriggerTypes are the event types a trigger can follow.
var TriggerTypes = []history.Type{history.Invoke, history.OK, history.Fail, history.Info}

// TriggerFunctions are the functions a trigger can follow: every function the
// workloads record (see the F constants of package history).
var TriggerFunctions = []string{history.FAcquire, history.FRelease, history.FRenew, history.FRead, history.FWrite, history.FAppend}

// given lists the kind-specific fields of f that are set, in schedule order.
func (f Fault) given() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("targets", len(f.Targets) > 0)
	add("groups", len(f.Groups) > 0)
	add("from", len(f.From) > 0)
	add("to", len(f.To) > 0)
	add("amount", f.Amount != 0)
	add("drift", f.Drift != 0)
	add("match", f.Match != "")
	add("count", f.Count != 0)
	add("lossy", f.Lossy)
	return out
}

// validate returns the field at fault and what is wrong with it ("" if
// nothing is).
func (f Fault) validate() (field, msg string) {
	takes, known := kindFields[f.Kind]
	if !known {
		return "kind", fmt.Sprintf("unknown fault kind %q (want one of %s)", f.Kind, joinKinds(Kinds))
	}
	for _, g := range f.given() {
		if !slices.Contains(takes, g) {
			return g, fmt.Sprintf("a %s takes no %q (it takes %s, and kind, at, after, until, duration)", f.Kind, g, strings.Join(takes, ", "))
		}
	}
	if f.At < 0 {
		return "at", "negative time"
	}
	if f.Duration < 0 {
		return "duration", "negative duration"
	}
	if f.After != nil {
		if field, msg := f.After.validate(); msg != "" {
			return "after." + field, msg
		}
	}
	if f.Until != nil {
		if f.Kind == Delay {
			return "until", "a delay takes no until: it ends after its duration or its count of messages"
		}
		if field, msg := f.Until.validate(); msg != "" {
			return "until." + field, msg
		}
	}
	return f.validateKind()
}

func (t Trigger) validate() (field, msg string) {
	switch {
	case t.Node == "":
		return "node", `missing: a trigger follows the events of one client, such as "c1"`
	case t.F == "":
		return "f", fmt.Sprintf("missing: the function whose event starts the fault (want one of %s)", strings.Join(TriggerFunctions, ", "))
	case !slices.Contains(TriggerFunctions, t.F):
		return "f", fmt.Sprintf("unknown function %q (want one of %s)", t.F, strings.Join(TriggerFunctions, ", "))
	case t.Type != "" && !slices.Contains(TriggerTypes, history.Type(t.Type)):
		return "type", fmt.Sprintf("unknown event type %q (want one of %s; default ok)", t.Type, joinTypes(TriggerTypes))
	case t.Nth < 0:
		return "nth", "negative (1 is the first event, the default)"
	case t.Delay < 0:
		return "delay", "negative delay"
	}
	return "", ""
}

// validateKind checks what each kind needs.
func (f Fault) validateKind() (field, msg string) {
	switch f.Kind {
	case Pause:
		if len(f.Targets) == 0 {
			return "targets", "a pause needs at least one target"
		}
		if f.Duration == 0 && f.Until == nil {
			return "duration", `a pause needs a duration, or an end anchor ("until")`
		}
	case Crash, ClockJump, ClockDrift:
		if len(f.Targets) == 0 {
			return "targets", fmt.Sprintf("a %s needs at least one target", f.Kind)
		}
		if f.Kind == ClockJump && f.Amount == 0 {
			return "amount", "a clock jump needs a non-zero amount"
		}
		if f.Kind == ClockDrift && 1+f.Drift <= 0 {
			return "drift", "must be greater than -1"
		}
	case Partition:
		return f.validatePartition()
	case Delay:
		if len(f.From) == 0 || len(f.To) == 0 {
			return missingEnd(f), `a delay needs both "from" and "to"`
		}
		if f.Amount <= 0 {
			return "amount", "a delay needs a positive amount"
		}
		if f.Count < 0 {
			return "count", "negative (0: every message)"
		}
	}
	return "", ""
}

func (f Fault) validatePartition() (field, msg string) {
	shapes := 0
	if len(f.Groups) > 0 {
		shapes++
		if len(f.Groups) < 2 {
			return "groups", "a partition needs at least two groups"
		}
		for i, g := range f.Groups {
			if len(g) == 0 {
				return "groups", fmt.Sprintf("group %d is empty", i+1)
			}
		}
	}
	if len(f.From) > 0 || len(f.To) > 0 {
		shapes++
		if len(f.From) == 0 || len(f.To) == 0 {
			return missingEnd(f), `a one-way cut needs both "from" and "to"`
		}
	}
	if len(f.Targets) > 0 {
		shapes++
	}
	if shapes != 1 {
		return "", `a partition needs exactly one of "groups", "from"+"to" or "targets"`
	}
	return "", ""
}

// missingEnd names the end of a cut or delay that is missing.
func missingEnd(f Fault) string {
	if len(f.From) == 0 {
		return "from"
	}
	return "to"
}

func joinKinds(ks []Kind) string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return strings.Join(out, ", ")
}

func joinTypes(ts []history.Type) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return strings.Join(out, ", ")
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
