package history

import "fmt"

// Version is the history format version this package writes.
const Version = 1

// FormatName is the value of the header's "format" field.
const FormatName = "locklab-history"

// Type is the kind of an event.
type Type string

// Event types: the four operation types and the two nemesis types.
const (
	Invoke Type = "invoke"
	OK     Type = "ok"
	Fail   Type = "fail"
	Info   Type = "info"
	Start  Type = "start"
	Stop   Type = "stop"
)

// Valid reports whether t is a known event type.
func (t Type) Valid() bool {
	switch t {
	case Invoke, OK, Fail, Info, Start, Stop:
		return true
	}
	return false
}

// IsCompletion reports whether t completes an operation.
func (t Type) IsCompletion() bool { return t == OK || t == Fail || t == Info }

// Operation functions recorded by workloads.
const (
	FAcquire = "acquire"
	FRelease = "release"
	FRenew   = "renew"
	FRead    = "read"
	FWrite   = "write"
	// FAppend appends value to the list stored under key (list resources).
	FAppend = "append"
	// FBegin marks that the writes of an acquisition (owner) from here on
	// are buffered in a transaction: they apply only if its FCommit does.
	FBegin = "begin"
	// FCommit is the commit of the transaction an FBegin of the same owner
	// opened: ok (its writes applied, at the commit), fail (none applied) or
	// info (unknown).
	FCommit = "commit"
)

// FLockDelay is the function of a system event: the service held the lock
// named by key back by design (a lock-delay after its holder's session
// expired), from the start event to the stop event with the same targets and
// detail (or to the end). The liveness check counts the lock as held back,
// not free, meanwhile.
const FLockDelay = "lock-delay"

// NemesisProcess is the process number of nemesis events.
const NemesisProcess = -1

// Event is one line of a history.
type Event struct {
	Index    int      `json:"index"`
	Time     int64    `json:"time"`
	Process  int      `json:"process"`
	Node     string   `json:"node,omitempty"`
	Type     Type     `json:"type"`
	F        string   `json:"f"`
	Key      string   `json:"key,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	Token    *uint64  `json:"token,omitempty"`
	Value    *int64   `json:"value,omitempty"`
	Values   []int64  `json:"values,omitzero"`
	Clock    *int64   `json:"clock,omitempty"`
	Deadline *int64   `json:"deadline,omitempty"`
	Targets  []string `json:"targets,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

// Ptr returns a pointer to v, for the optional fields of Event.
func Ptr[T any](v T) *T { return &v }

// String renders the event on one line for counterexamples and logs.
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s p%d", e.Index, fmtTime(e.Time), e.Process)
	if e.Node != "" {
		s += " " + e.Node
	}
	s += fmt.Sprintf(" %s %s", e.Type, e.F)
	if e.Key != "" {
		s += " key=" + e.Key
	}
	if e.Owner != "" {
		s += " owner=" + e.Owner
	}
	if e.Token != nil {
		s += fmt.Sprintf(" token=%d", *e.Token)
	}
	if e.Value != nil {
		s += fmt.Sprintf(" value=%d", *e.Value)
	}
	if e.Values != nil {
		s += fmt.Sprintf(" values=%v", e.Values)
	}
	if e.Deadline != nil {
		s += " deadline=" + fmtTime(*e.Deadline)
	}
	if len(e.Targets) > 0 {
		s += fmt.Sprintf(" targets=%v", e.Targets)
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// fmtTime renders nanoseconds as seconds with millisecond precision.
func fmtTime(ns int64) string { return fmt.Sprintf("%.3fs", float64(ns)/1e9) }

// FormatTime renders a history time (ns) as seconds with millisecond precision.
func FormatTime(ns int64) string { return fmtTime(ns) }
