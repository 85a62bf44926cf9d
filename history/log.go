package history

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/locklab/locklab/internal/reuse"
)

// Log is a history being recorded. It is safe for concurrent use: in the
// simulator only one thing runs at a time and the lock is never contended;
// live, client goroutines record at once, and stamping an event with its
// time and appending it happen under one lock, so the log stays in time
// order. Observers run after the lock is released (they may append).
//
// The log keeps its events in a compact form (fixed-size records without
// pointers, strings interned, optional fields as flags), so recording an
// operation allocates nothing in the steady state and the garbage collector
// never scans the record; Events materialises them as []Event once, when
// asked.
type Log struct {
	mu sync.Mutex
	*logBuffers
	n         int // how many records
	observers []func(Event)
	processes int
}

// logBuffers is the storage of a log, which Release hands to a later NewLog
// (a worker that runs world after world records each history into the
// previous one's arrays instead of allocating and collecting them again).
type logBuffers struct {
	chunks [][]record // the records, chunkSize to a chunk: growing never copies
	extras []extra    // the slices of the events that have them
	strs   interner
	mat    []Event // Events' materialisation of the first len(mat) records
	// ints and uints are where the optional fields of the materialised
	// events point; clocks, where the Clock of the events Complete returns
	// points. Each is carved from its end and replaced by a larger one when
	// full (the events already given out keep the old one).
	ints   []int64
	uints  []uint64
	clocks []int64
	// pair is the memory of the log's pairing (Pair).
	pair pairMemory
}

// released holds the storage of released logs for NewLog.
var released reuse.Pool[logBuffers]

// record is one event in the log's compact form; its index is its position.
type record struct {
	time, clock, value, deadline int64
	token                        uint64
	process                      int32
	extra                        int32 // 1 + the index of its extra in Log.extras; 0: none
	typ, node, f, key, owner     uint32
	detail                       uint32
	has                          uint8
}

// The optional fields a record has.
const (
	hasClock uint8 = 1 << iota
	hasValue
	hasDeadline
	hasToken
)

// extra holds copies of an event's slices (nil and empty kept apart).
type extra struct {
	values  []int64
	targets []string
}

// NewLog returns an empty log.
func NewLog() *Log {
	return &Log{logBuffers: released.Get()}
}

// Release hands the log's storage to a later NewLog. Call it only when
// neither the log nor anything it returned is used any more: the events of
// Events (and their optional fields), and the Clock of the events Complete
// returned, are overwritten by the next history recorded there. Strings stay
// valid (they are never overwritten). Using the log afterwards panics.
func (l *Log) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.logBuffers
	l.logBuffers, l.n, l.observers, l.processes = nil, 0, nil, 0
	clear(b.extras) // drop the slices they point to
	b.extras, b.mat, b.ints, b.uints, b.clocks = b.extras[:0], b.mat[:0], b.ints[:0], b.uints[:0], b.clocks[:0]
	b.strs.trim()
	released.Put(b)
}

// Events returns the recorded events (not a copy: read it once recording
// has stopped). The first call materialises the log; later calls add what
// was recorded since.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return nil // as a fresh log's (a released log's array is empty, not nil)
	}
	if len(l.mat) < l.n {
		l.materialise()
	}
	return l.mat
}

// Pair is Pair(l.Events()) in memory that Release hands, with the log's
// storage, to the next log: the pairing must not be used after Release, nor
// after a second Pair of the same log, which reuses the first one's memory.
func (l *Log) Pair() (*Paired, error) { return pair(l.Events(), true, true, &l.pair) }

// materialise turns the records not yet materialised into Events. The
// optional fields of all of them point into two arenas (ints, uints), and
// mat is grown once to the exact length: a released log's arrays are
// reused when they are large enough.
func (l *Log) materialise() {
	from := len(l.mat)
	ints, uints := 0, 0
	for i := from; i < l.n; i++ {
		h := l.rec(i).has
		ints += int(h&1 + h>>1&1 + h>>2&1)
		uints += int(h >> 3 & 1)
	}
	i64 := carve(&l.ints, ints)
	u64 := carve(&l.uints, uints)
	l.mat = slices.Grow(l.mat, l.n-from)[:l.n]
	for i := from; i < l.n; i++ {
		r := l.rec(i)
		e := &l.mat[i]
		l.fill(e, i, r) // field by field: a reused array holds an earlier history
		if r.has&hasClock != 0 {
			e.Clock = place(&i64, r.clock)
		}
		if r.has&hasValue != 0 {
			e.Value = place(&i64, r.value)
		}
		if r.has&hasDeadline != 0 {
			e.Deadline = place(&i64, r.deadline)
		}
		if r.has&hasToken != 0 {
			e.Token = place(&u64, r.token)
		}
	}
}

// place stores v in the first element of *carved, returns its address and
// drops it from *carved.
func place[T int64 | uint64](carved *[]T, v T) *T {
	c := *carved
	c[0] = v
	*carved = c[1:]
	return &c[0]
}

// carve returns the next n elements of *arena, replacing it with a larger
// one first when fewer than n are left (what was carved before stays where
// it is).
func carve[T any](arena *[]T, n int) []T {
	a := *arena
	if cap(a)-len(a) < n {
		a = make([]T, 0, max(n, 2*cap(a)))
	}
	*arena = a[:len(a)+n]
	return a[len(a) : len(a)+n : len(a)+n]
}

// event is record r (at index i) as an Event without its optional pointer
// fields.
func (l *Log) event(i int, r *record) Event {
	var e Event
	l.fill(&e, i, r)
	return e
}

// fill sets every field of *e to record r's (at index i), the optional
// pointer fields to nil. Assigning field by field, rather than copying a
// whole Event, spares the collector's bulk barrier over the struct.
func (l *Log) fill(e *Event, i int, r *record) {
	strs := l.strs.strs
	str := func(id uint32) string {
		if int(id) < len(presets) {
			return presets[id]
		}
		return strs[id]
	}
	e.Index, e.Time, e.Process = i, r.time, int(r.process)
	e.Node, e.Type, e.F, e.Key, e.Owner, e.Detail = str(r.node), Type(str(r.typ)), str(r.f), str(r.key), str(r.owner), str(r.detail)
	e.Clock, e.Value, e.Deadline, e.Token = nil, nil, nil, nil
	if r.extra > 0 {
		x := &l.extras[r.extra-1]
		e.Values, e.Targets = x.values, x.targets
	} else {
		e.Values, e.Targets = nil, nil
	}
}

// eventAt is the event at index i with freshly allocated optional fields.
func (l *Log) eventAt(i int) Event {
	r := l.rec(i)
	e := l.event(i, r)
	if r.has&hasClock != 0 {
		e.Clock = Ptr(r.clock)
	}
	if r.has&hasValue != 0 {
		e.Value = Ptr(r.value)
	}
	if r.has&hasDeadline != 0 {
		e.Deadline = Ptr(r.deadline)
	}
	if r.has&hasToken != 0 {
		e.Token = Ptr(r.token)
	}
	return e
}

// Len is the number of recorded events.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
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
	e.Index = l.store(&e)
	observers := l.observers
	l.mu.Unlock()
	for _, fn := range observers {
		fn(e)
	}
	return e
}

// store appends e in compact form (its Index is ignored) and returns its
// index. The caller holds the lock.
func (l *Log) store(e *Event) int { return l.storeKnown(e, unknownIDs) }

// known are the interned numbers of an event's strings that a recorder
// already knows (its node's; a completion's function, key and owner, which
// are its invocation's), so that storing it does not look them up again;
// noID: not known, intern the event's own string.
type known struct{ node, f, key, owner uint32 }

// noID marks a number that is not known.
const noID = ^uint32(0)

var unknownIDs = known{noID, noID, noID, noID}

// storeKnown is store with the numbers of some strings known (they are the
// numbers of e's strings).
func (l *Log) storeKnown(e *Event, k known) int {
	r := record{time: e.Time, process: int32(e.Process), typ: l.strs.id(string(e.Type)), node: k.node,
		f: k.f, key: k.key, owner: k.owner, detail: l.strs.id(e.Detail)}
	if r.node == noID {
		r.node = l.strs.id(e.Node)
	}
	if r.f == noID {
		r.f = l.strs.id(e.F)
	}
	if r.key == noID {
		r.key = l.strs.id(e.Key)
	}
	if r.owner == noID {
		r.owner = l.strs.id(e.Owner)
	}
	if e.Clock != nil {
		r.clock, r.has = *e.Clock, r.has|hasClock
	}
	if e.Value != nil {
		r.value, r.has = *e.Value, r.has|hasValue
	}
	if e.Deadline != nil {
		r.deadline, r.has = *e.Deadline, r.has|hasDeadline
	}
	if e.Token != nil {
		r.token, r.has = *e.Token, r.has|hasToken
	}
	if e.Values != nil || e.Targets != nil {
		l.extras = append(l.extras, extra{values: slices.Clone(e.Values), targets: slices.Clone(e.Targets)})
		r.extra = int32(len(l.extras))
	}
	if l.n == len(l.chunks)*chunkSize { // a released log's chunks are used again
		l.chunks = append(l.chunks, make([]record, chunkSize))
	}
	*l.rec(l.n) = r
	l.n++
	return l.n - 1
}

// chunkSize is the number of records in a chunk (20 KiB: a small object
// for the allocator, which takes larger ones from the heap one by one).
const chunkSize = 256

// rec is the record at index i.
func (l *Log) rec(i int) *record { return &l.chunks[uint(i)/chunkSize][uint(i)%chunkSize] }

// NewProcess allocates the next unused process number.
func (l *Log) NewProcess() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.newProcess()
}

func (l *Log) newProcess() int {
	p := l.processes
	l.processes++
	return p
}

// clockPtr returns a pointer to a copy of v, carved from a block shared by
// many events (each block twice the last, from 512 up to 16,384).
func (l *Log) clockPtr(v int64) *int64 {
	if len(l.clocks) == cap(l.clocks) {
		l.clocks = make([]int64, 0, min(max(512, 2*cap(l.clocks)), 1<<14))
	}
	l.clocks = append(l.clocks, v)
	return &l.clocks[len(l.clocks)-1]
}

// interner numbers the strings of a log: id 0 is "". It keeps its own copy
// of each string (so the strings it is given do not escape: an event built on
// the caller's stack stays there), and a small cache keyed by length and a
// few bytes spares the map lookup for the strings recorded again and again
// (node names, functions, keys, the owner of the lease in hand).
type interner struct {
	ids   map[string]uint32
	strs  []string
	cache [256]struct {
		s  string
		id uint32
	}
}

// presets are the strings every log has, with fixed numbers: the event types
// and the operation functions.
var presets = []string{"", string(Invoke), string(OK), string(Fail), string(Info), string(Start), string(Stop),
	FAcquire, FRelease, FRenew, FRead, FWrite, FAppend}

// presetID is the number of s if it is one of the presets (an event type or
// an operation function: two of every event's strings), found without
// hashing; ok is false otherwise.
func presetID(s string) (id uint32, ok bool) {
	switch s {
	case string(Invoke):
		return 1, true
	case string(OK):
		return 2, true
	case string(Fail):
		return 3, true
	case string(Info):
		return 4, true
	case string(Start):
		return 5, true
	case string(Stop):
		return 6, true
	case FAcquire:
		return 7, true
	case FRelease:
		return 8, true
	case FRenew:
		return 9, true
	case FRead:
		return 10, true
	case FWrite:
		return 11, true
	case FAppend:
		return 12, true
	}
	return 0, false
}

// id is s's number, given to it now if s is new.
func (in *interner) id(s string) uint32 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if id, ok := presetID(s); ok {
		return id
	}
	c := &in.cache[(uint(n)*31+uint(s[0])*7+uint(s[n-1])*3+uint(s[n/2]))&255]
	if len(c.s) == n && (unsafe.StringData(c.s) == unsafe.StringData(s) || c.s == s) {
		return c.id
	}
	if in.ids == nil {
		in.ids = make(map[string]uint32, 64)
		in.strs = append(in.strs[:0], presets...)
		for i, p := range presets[1:] {
			in.ids[p] = uint32(i + 1)
		}
	}
	id, ok := in.ids[s]
	if !ok {
		own := strings.Clone(s)
		id = uint32(len(in.strs))
		in.strs = append(in.strs, own)
		in.ids[own] = id
	}
	c.s, c.id = in.strs[id], id
	return id
}

// internKept is the most strings a released log's interner keeps for the
// next log (the names, functions, keys and details of a system's runs repeat
// from one run to the next; past this many, it starts afresh).
const internKept = 1024

// trim prepares the interner of a released log for the next one: its strings
// are kept (a string never changes, and numbers are private to a log) unless
// there are more than internKept.
func (in *interner) trim() {
	if len(in.strs) <= internKept {
		return
	}
	clear(in.ids)
	clear(in.cache[:])
	in.strs = append(in.strs[:0], presets...)
	for i, p := range presets[1:] {
		in.ids[p] = uint32(i + 1)
	}
}

// str is the string numbered id.
func (in *interner) str(id uint32) string {
	if int(id) < len(presets) {
		return presets[id]
	}
	return in.strs[id]
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
	nodeID  uint32 // node's number in the log's interner
	process int
	clock   Clock
	// The operation open now: the index of its invoke (-1: none).
	open int
}

// NewRecorder returns a recorder for a client called node, with a fresh process.
func (l *Log) NewRecorder(node string, clock Clock) *Recorder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &Recorder{log: l, node: node, nodeID: l.strs.id(node), process: l.newProcess(), clock: clock, open: -1}
}

// Process is the recorder's current process number.
func (r *Recorder) Process() int { return r.process }

// Node is the client's node name.
func (r *Recorder) Node() string { return r.node }

// Clock is the recorder's clock.
func (r *Recorder) Clock() Clock { return r.clock }

// Op is an operation that was invoked and awaits its completion. It is a
// small value: recording an operation allocates nothing.
type Op struct {
	r     *Recorder
	index int
}

// Invoke records the invocation described by e (F, Key, Owner, Token, Value).
// The recorder fills in time, process, node, type and clock.
func (r *Recorder) Invoke(e Event) Op {
	if r.open >= 0 {
		panic("history: process " + r.node + " invoked " + e.F + " while " + r.log.at(r.open).F + " is still open")
	}
	e.Type = Invoke
	r.open = r.record(&e, known{r.nodeID, noID, noID, noID})
	return Op{r: r, index: r.open}
}

// record stamps e (time, process, node, clock) and stores it under the log's
// lock, then tells the observers, and returns its index. e's pointers are
// read, never kept; k are the numbers of e's strings that are known.
func (r *Recorder) record(e *Event, k known) int {
	l := r.log
	l.mu.Lock()
	i := r.storeLocked(e, k)
	observers := l.observers
	l.mu.Unlock()
	l.tell(i, observers)
	return i
}

// storeLocked is record's stamping and storing; the caller holds the lock.
func (r *Recorder) storeLocked(e *Event, k known) int {
	l := r.log
	e.Time = int64(r.clock.Now())
	e.Process = r.process
	e.Node = r.node
	e.Clock = nil
	i := l.storeKnown(e, k)
	rec := l.rec(i)
	rec.clock, rec.has = int64(r.clock.Local()), rec.has|hasClock
	return i
}

// tell calls the observers with the event at index i (the caller does not
// hold the lock).
func (l *Log) tell(i int, observers []func(Event)) {
	if len(observers) == 0 {
		return
	}
	l.mu.Lock()
	o := l.eventAt(i)
	l.mu.Unlock()
	for _, fn := range observers {
		fn(o)
	}
}

// Invocation is the recorded invoke event.
func (op Op) Invocation() Event { return op.r.log.at(op.index) }

// at is the event at index i, with its own optional fields.
func (l *Log) at(i int) Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.eventAt(i)
}

// Complete records the completion of the operation with type t (OK, Fail or
// Info); fields of e that are set (Token, Value, Owner, Deadline, Detail) are
// copied into the completion; F and Key come from the invocation. It returns
// the completion as recorded.
func (op Op) Complete(t Type, e Event) Event {
	r := op.r
	if r == nil || r.open != op.index {
		panic("history: completing an operation that is not open (invoke #" + itoa(op.index) + ")")
	}
	if !t.IsCompletion() {
		panic("history: completion type " + string(t))
	}
	l := r.log
	l.mu.Lock()
	inv := l.rec(op.index)
	k := known{r.nodeID, inv.f, inv.key, inv.owner}
	e.Type, e.F, e.Key = t, l.strs.str(inv.f), l.strs.str(inv.key)
	if e.Owner == "" {
		e.Owner = l.strs.str(inv.owner)
	} else {
		k.owner = noID
	}
	e.Index = r.storeLocked(&e, k)
	if observers := l.observers; len(observers) > 0 {
		// The observers (which may record) see it before anything else moves.
		l.mu.Unlock()
		l.tell(e.Index, observers)
		l.mu.Lock()
	}
	r.open = -1
	if t == Info {
		r.process = l.newProcess()
	}
	e.Clock = l.clockPtr(l.rec(e.Index).clock)
	l.mu.Unlock()
	return e
}

// itoa formats a small non-negative number without fmt.
func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

// Deadline converts a lease deadline measured on the client's monotonic clock
// into the true time recorded in the history.
func (r *Recorder) Deadline(local time.Duration) *int64 {
	return Ptr(int64(r.clock.TrueAt(local)))
}

// Sibling returns a recorder for another process of the same client (same
// node and clock), such as a lock's watchdog.
func (r *Recorder) Sibling() *Recorder {
	return &Recorder{log: r.log, node: r.node, nodeID: r.nodeID, process: r.log.NewProcess(), clock: r.clock, open: -1}
}
