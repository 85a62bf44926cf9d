package history

import (
	"math"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/reuse"
)

// PairedOp is an operation of a Paired history: its invoke and its completion,
// both pointing into the Paired's events (read them, never write them).
type PairedOp struct {
	// Invoke is the invoke event.
	Invoke *Event
	// Completion is the ok, fail or info event; nil when the history ends
	// before the operation completed (which counts as info).
	Completion *Event
	// fn and out are the function and outcome as the pairing noted them, so
	// that the checks' passes over the operations need not read the events
	// (200 bytes each, far apart in a long history) to skip the ones they
	// do not look at. 0: not noted (an operation built by hand, a function
	// of a workload of its own): read the events.
	fn  uint8
	out uint8
}

// notedFuncs and notedTypes are what the codes of PairedOp.fn and .out stand
// for (index 0: not noted).
var (
	notedFuncs = [...]string{"", FAcquire, FRelease, FRenew, FRead, FWrite, FAppend}
	notedTypes = [...]Type{"", OK, Fail, Info}
)

// funcCode is f's code in notedFuncs, 0 for a function not listed there.
func funcCode(f string) uint8 {
	switch f {
	case FAcquire:
		return 1
	case FRelease:
		return 2
	case FRenew:
		return 3
	case FRead:
		return 4
	case FWrite:
		return 5
	case FAppend:
		return 6
	}
	return 0
}

// typeCode is t's code in notedTypes, 0 for a type that completes nothing.
func typeCode(t Type) uint8 {
	switch t {
	case OK:
		return 1
	case Fail:
		return 2
	case Info:
		return 3
	}
	return 0
}

// Func is the operation's function (the invoke's F).
func (o PairedOp) Func() string {
	if o.fn != 0 {
		return notedFuncs[o.fn]
	}
	return o.Invoke.F
}

// Outcome is the completion's type, Info for a missing completion.
func (o PairedOp) Outcome() Type {
	if o.out != 0 {
		return notedTypes[o.out]
	}
	if o.Completion == nil {
		return Info
	}
	return o.Completion.Type
}

// Operation is the operation as history.Operations gives it.
func (o PairedOp) Operation() Operation {
	return Operation{Invoke: *o.Invoke, Completion: o.Completion}
}

// Paired is a history read once for its checks: every event, every operation
// paired (invoke with completion, as Operations pairs them), and, for a
// history paired by Pair, every operation's node, key and owner on both of
// its events (as Complete fills them in). It is built in one pass and shares
// the recorded events: only the events that gain a field are copied. It is
// read-only, so any number of checks may read the same one.
type Paired struct {
	recorded []Event
	// fixed are completed copies of the events that gained a field; at
	// maps an event's index to its copy (-1: none). Both nil when no event
	// gained a field.
	fixed []Event
	at    []int32
	ops   []PairedOp

	eventsOnce sync.Once
	events     []Event
	faultsOnce sync.Once
	faults     []FaultWindow

	// marks are the indexes of the start and stop events, in order.
	marks []int32
	// acquired counts the acquires that returned ok (Acquired).
	acquired Acquires

	// invokes counts the operations per function, in order of appearance.
	invokes []fnCount
	// grants counts the acquires that completed ok.
	grants int

	memoMu sync.Mutex
	memo   []memoEntry
}

type fnCount struct {
	f string
	n int
}

func (p *Paired) countInvoke(f string) {
	for i := range p.invokes {
		if p.invokes[i].f == f {
			p.invokes[i].n++
			return
		}
	}
	p.invokes = append(p.invokes, fnCount{f, 1})
}

// OpsOf is the number of operations whose invoke has function f (to size
// what a check collects from Ops without a pass of its own).
func (p *Paired) OpsOf(f string) int {
	for _, c := range p.invokes {
		if c.f == f {
			return c.n
		}
	}
	return 0
}

// Grants is the number of acquire operations that completed ok.
func (p *Paired) Grants() int { return p.grants }

type memoEntry struct {
	key   any
	value any
}

// Pair pairs the operations of events and completes them (see Complete):
// the checks' view of a history. An operation whose two events name
// different values of node, key or owner is an error (*MismatchError), the
// first in the history.
func Pair(events []Event) (*Paired, error) { return pair(events, true, true, nil) }

// PairEvents is Pair for a reader of the completed events alone (At,
// Events, Grants): it finds no operations (Ops is empty, OpsOf 0), which
// spares their memory.
func PairEvents(events []Event) (*Paired, error) { return pair(events, true, false, nil) }

// PairRecorded pairs the operations of events as they were recorded, without
// completing them.
func PairRecorded(events []Event) *Paired {
	p, _ := pair(events, false, true, nil)
	return p
}

// opens tracks the open invocation of every process (its operation's index
// in the operations being built, and its event's), in a slice for the usual
// small process numbers.
type opens struct {
	dense  []openOp // process -> its open operation (op 0: none)
	sparse map[int]openOp
}

// openOp is an open invocation: op is the index of its operation + 1 (0:
// none), at the index of its event.
type openOp struct{ op, at int32 }

// denseMax bounds the process numbers kept in the slice.
const denseMax = 1 << 20

func (o *opens) get(p int) openOp {
	if p >= 0 && p < denseMax {
		if p < len(o.dense) {
			return o.dense[p]
		}
		return openOp{}
	}
	return o.sparse[p]
}

func (o *opens) set(p int, x openOp) {
	if p >= 0 && p < denseMax {
		if p >= len(o.dense) {
			o.dense = append(o.dense, make([]openOp, p+1-len(o.dense)+16)...)
		}
		o.dense[p] = x
		return
	}
	if o.sparse == nil {
		o.sparse = map[int]openOp{}
	}
	if x.op == 0 {
		delete(o.sparse, p)
		return
	}
	o.sparse[p] = x
}

// conflicting reports whether inv and comp name different values of an
// identity field (see mismatch, which says which).
func conflicting(inv, comp *Event) bool {
	return (inv.Node != comp.Node && inv.Node != "" && comp.Node != "") ||
		(inv.Key != comp.Key && inv.Key != "" && comp.Key != "") ||
		(inv.Owner != comp.Owner && inv.Owner != "" && comp.Owner != "")
}

// gain: the operation k's invocation (bit 0 of fix) or completion (bit 1)
// gains a field; inv and comp are their event indexes.
type gain struct {
	k, inv, comp int32
	fix          uint8
}

// pairMemory is the memory of a pairing, reused from run to run with a
// log's storage (Log.Pair).
type pairMemory struct {
	marks  []int32
	ops    []PairedOp
	gained []gain
	fixed  []Event
	at     []int32
}

// pair pairs events (see Pair, PairEvents and PairRecorded), in mem's memory
// when mem is not nil.
func pair(events []Event, complete, withOps bool, mem *pairMemory) (*Paired, error) {
	// About half the events are invokes; a few more when operations are
	// still open at the end. The operations point into events; those with
	// an event that gains a field are listed in gained and repointed once
	// the completed copies are made.
	if mem == nil {
		mem = new(pairMemory)
	}
	p := &Paired{recorded: events}
	var ops []PairedOp
	if withOps {
		ops = reuse.Room(mem.ops, len(events)/2+64)
		defer func() { mem.ops = ops[:0] }()
	}
	var gained []gain
	if complete {
		gained = reuse.Room(mem.gained, len(events)/8+8) // usually enough: a recorder that leaves fields out leaves them out of one kind of event
		defer func() { mem.gained = gained[:0] }()
	}
	marks := mem.marks[:0]
	if marks == nil {
		marks = []int32{} // not nil: Faults reads the marks instead of the events
	}
	defer func() { p.marks, mem.marks = marks, marks[:0] }()
	var open opens
	gaining := 0 // events that gain a field
	for i := range events {
		e := &events[i]
		if e.Type == Invoke {
			open.set(e.Process, openOp{op: int32(len(ops)) + 1, at: int32(i)})
			if withOps {
				p.countInvoke(e.F)
				ops = append(ops, PairedOp{Invoke: e, fn: funcCode(e.F), out: typeCode(Info)})
			}
			continue
		}
		if !e.Type.IsCompletion() {
			if e.Type == Start || e.Type == Stop {
				marks = append(marks, int32(i))
			}
			continue
		}
		if e.Type == OK && e.F == FAcquire {
			p.countAcquired(e)
		}
		x := open.get(e.Process)
		if x.op == 0 {
			continue
		}
		open.set(e.Process, openOp{})
		k := x.op - 1
		if withOps {
			ops[k].Completion, ops[k].out = e, typeCode(e.Type)
		}
		if e.Type == OK && events[x.at].F == FAcquire {
			p.grants++
		}
		if !complete {
			continue
		}
		inv := &events[x.at]
		if inv.Node == e.Node && inv.Key == e.Key && inv.Owner == e.Owner {
			continue
		}
		if conflicting(inv, e) {
			return nil, mismatch(inv, e)
		}
		g := gain{k: k, inv: x.at, comp: int32(i)}
		if gains(inv, e) {
			g.fix |= 1
			gaining++
		}
		if gains(e, inv) {
			g.fix |= 2
			gaining++
		}
		if g.fix != 0 {
			gained = append(gained, g)
		}
	}
	if gaining > 0 {
		p.gain(mem, gained, gaining, ops, withOps)
	}
	p.ops = ops
	return p, nil
}

// countAcquired counts an acquire's ok completion e: with a lease, with a
// token.
func (p *Paired) countAcquired(e *Event) {
	p.acquired.OK++
	if e.Deadline != nil {
		p.acquired.Leased++
		p.acquired.LongestLease = max(p.acquired.LongestLease, time.Duration(*e.Deadline-e.Time))
	}
	if e.Token != nil {
		p.acquired.Tokened++
	}
}

// gain makes the completed copies of the gaining events (gaining of them,
// listed in gained) in mem's memory, and repoints the operations at them.
func (p *Paired) gain(mem *pairMemory, gained []gain, gaining int, ops []PairedOp, withOps bool) {
	n := len(p.recorded)
	p.fixed = reuse.Room(mem.fixed, gaining) // never grows: the operations point into it
	p.at = reuse.Room(mem.at, n)[:n]
	mem.fixed, mem.at = p.fixed[:0], p.at[:0]
	for x := range p.at {
		p.at[x] = -1
	}
	for _, g := range gained {
		if g.fix&1 != 0 {
			c := p.fill(int(g.inv), int(g.comp))
			if withOps {
				ops[g.k].Invoke = c
			}
		}
		if g.fix&2 != 0 {
			c := p.fill(int(g.comp), int(g.inv))
			if withOps {
				ops[g.k].Completion = c
			}
		}
	}
}

// gains reports whether e lacks an identity field that other has.
func gains(e, other *Event) bool {
	return (e.Node == "" && other.Node != "") || (e.Key == "" && other.Key != "") || (e.Owner == "" && other.Owner != "")
}

// fill copies event i into fixed with the identity fields it lacks taken
// from event j, its partner, and returns the copy.
func (p *Paired) fill(i, j int) *Event {
	p.at[i] = int32(len(p.fixed))
	p.fixed = append(p.fixed, p.recorded[i])
	c, other := &p.fixed[len(p.fixed)-1], &p.recorded[j]
	if c.Node == "" {
		c.Node = other.Node
	}
	if c.Key == "" {
		c.Key = other.Key
	}
	if c.Owner == "" {
		c.Owner = other.Owner
	}
	return c
}

// Len is the number of events.
func (p *Paired) Len() int { return len(p.recorded) }

// At is the event with index i, completed.
func (p *Paired) At(i int) *Event {
	if p.at != nil && p.at[i] >= 0 {
		return &p.fixed[p.at[i]]
	}
	return &p.recorded[i]
}

// Recorded are the events as recorded.
func (p *Paired) Recorded() []Event { return p.recorded }

// Events are the completed events: the recorded ones when no event gained a
// field, otherwise a copy made on the first call.
func (p *Paired) Events() []Event {
	p.eventsOnce.Do(func() {
		if p.at == nil {
			p.events = p.recorded
			return
		}
		p.events = make([]Event, len(p.recorded))
		for i := range p.recorded {
			p.events[i] = *p.At(i)
		}
	})
	return p.events
}

// Ops are the operations, in invoke order.
func (p *Paired) Ops() []PairedOp { return p.ops }

// Faults are the nemesis fault windows (see FaultWindows), computed once.
func (p *Paired) Faults() []FaultWindow {
	p.faultsOnce.Do(func() { p.faults = faultWindows(p.recorded, p.marks) })
	return p.faults
}

// Marks are the indexes of the start and stop events (faults and system
// events), in order: a reader of those alone need not scan the history.
func (p *Paired) Marks() []int32 { return p.marks }

// Acquires counts the events of acquires that returned ok, paired or not.
type Acquires struct {
	// OK is their number; Leased, Tokened, how many carry a lease deadline,
	// a fencing token.
	OK, Leased, Tokened int
	// LongestLease is the longest lease among them, from the event's time to
	// its deadline.
	LongestLease time.Duration
}

// Acquired counts the acquires that returned ok, as pairing saw them.
func (p *Paired) Acquired() Acquires { return p.acquired }

// End is the last event's time (0 for an empty history).
func (p *Paired) End() int64 {
	if len(p.recorded) == 0 {
		return 0
	}
	return p.recorded[len(p.recorded)-1].Time
}

// ReturnIndex is the completion's index, or math.MaxInt64 when the outcome is
// unknown.
func (o PairedOp) ReturnIndex() int64 {
	if o.Outcome() == Info {
		return math.MaxInt64
	}
	return int64(o.Completion.Index)
}

// Memo returns what build returns for key, calling build only the first
// time: the checks reading one history share what they derive from it (the
// holdings, say). The value is shared: treat it as read-only.
func (p *Paired) Memo(key any, build func() any) any {
	p.memoMu.Lock()
	defer p.memoMu.Unlock()
	for _, m := range p.memo {
		if m.key == key {
			return m.value
		}
	}
	v := build()
	p.memo = append(p.memo, memoEntry{key: key, value: v})
	return v
}
