package history

import (
	"sync"
	"time"
)

// Log is a history being recorded. It is safe for concurrent use: in the
// simulator only one thing runs at a time and the lock is never contended;
// live, client goroutines record at once, and stamping an event with its
// time and appending it happen under one lock, so the log stays in time
// order. Observers run after the lock is released (they may append).
type Log struct {
	mu        sync.Mutex
	events    []Event
	observers []func(Event)
	processes int
}

// NewLog returns an empty log.
func NewLog() *Log { return &Log{} }

// Events returns the recorded events (not a copy: read it once recording
// has stopped).
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events
}

// Len is the number of recorded events.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// Observe calls fn with every event appended from now on, after it is stored.
// The nemesis uses it to place faults at events ("right after client 1's
// acquire returns").
func (l *Log) Observe(fn func(Event)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observers = append(l.observers, fn)
}

// Append stores e with the next index and tells the observers.
func (l *Log) Append(e Event) Event { return l.AppendStamped(e, nil) }

// AppendStamped calls stamp (if not nil) on e and stores it with the next
// index, both under the log's lock, then tells the observers. A live recorder
// stamps the time this way, so that concurrent appends stay in time order.
func (l *Log) AppendStamped(e Event, stamp func(*Event)) Event {
	l.mu.Lock()
	if stamp != nil {
		stamp(&e)
	}
	e.Index = len(l.events)
	l.events = append(l.events, e)
	observers := l.observers
	l.mu.Unlock()
	for _, fn := range observers {
		fn(e)
	}
	return e
}

// NewProcess allocates the next unused process number.
func (l *Log) NewProcess() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.processes
	l.processes++
	return p
}

// Clock is what a recorder needs to know about time where a client runs.
type Clock interface {
	// Now is the true time (in a live system: the recorder's best estimate).
	Now() time.Duration
	// Local is the client node's monotonic clock.
	Local() time.Duration
	// TrueAt is the true time at which the local clock will read local.
	TrueAt(local time.Duration) time.Duration
}

// Recorder records the operations of one client. It keeps the client's node
// name and retires the process number after an info completion, as Jepsen
// does: the client carries on as a fresh process.
type Recorder struct {
	log     *Log
	node    string
	process int
	clock   Clock
	open    *Event
}

// NewRecorder returns a recorder for a client called node, with a fresh process.
func (l *Log) NewRecorder(node string, clock Clock) *Recorder {
	return &Recorder{log: l, node: node, process: l.NewProcess(), clock: clock}
}

// Process is the recorder's current process number.
func (r *Recorder) Process() int { return r.process }

// Node is the client's node name.
func (r *Recorder) Node() string { return r.node }

// Clock is the recorder's clock.
func (r *Recorder) Clock() Clock { return r.clock }

// Op is an operation that was invoked and awaits its completion.
type Op struct {
	r   *Recorder
	inv Event
}

// Invoke records the invocation described by e (F, Key, Owner, Token, Value).
// The recorder fills in time, process, node, type and clock.
func (r *Recorder) Invoke(e Event) *Op {
	if r.open != nil {
		panic("history: process " + r.node + " invoked " + e.F + " while " + r.open.F + " is still open")
	}
	e.Type = Invoke
	e = r.log.AppendStamped(e, r.stamp)
	r.open = &e
	return &Op{r: r, inv: e}
}

func (r *Recorder) stamp(e *Event) {
	e.Time = int64(r.clock.Now())
	e.Process = r.process
	e.Node = r.node
	e.Clock = Ptr(int64(r.clock.Local()))
}

// Invocation is the recorded invoke event.
func (op *Op) Invocation() Event { return op.inv }

// Complete records the completion of the operation with type t (OK, Fail or
// Info); fields of e that are set (Token, Value, Owner, Deadline, Detail) are
// copied into the completion; F and Key come from the invocation.
func (op *Op) Complete(t Type, e Event) Event {
	r := op.r
	if r.open == nil || r.open.Index != op.inv.Index {
		panic("history: completing an operation that is not open: " + op.inv.String())
	}
	if !t.IsCompletion() {
		panic("history: completion type " + string(t))
	}
	e.Type, e.F, e.Key = t, op.inv.F, op.inv.Key
	if e.Owner == "" {
		e.Owner = op.inv.Owner
	}
	e = r.log.AppendStamped(e, r.stamp)
	r.open = nil
	if t == Info {
		r.process = r.log.NewProcess()
	}
	return e
}

// Deadline converts a lease deadline measured on the client's monotonic clock
// into the true time recorded in the history.
func (r *Recorder) Deadline(local time.Duration) *int64 {
	return Ptr(int64(r.clock.TrueAt(local)))
}

// Sibling returns a recorder for another process of the same client (same
// node and clock), such as a lock's watchdog.
func (r *Recorder) Sibling() *Recorder {
	return &Recorder{log: r.log, node: r.node, process: r.log.NewProcess(), clock: r.clock}
}
