package history

import (
	"math"
	"sync"
)

// PairedOp is an operation of a Paired history: its invoke and its completion,
// both pointing into the Paired's events (read them, never write them).
type PairedOp struct {
	// Invoke is the invoke event.
	Invoke *Event
	// Completion is the ok, fail or info event; nil when the history ends
	// before the operation completed (which counts as info).
	Completion *Event
}

// Outcome is the completion's type, Info for a missing completion.
func (o PairedOp) Outcome() Type {
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

	memoMu sync.Mutex
	memo   []memoEntry
}

type memoEntry struct {
	key   any
	value any
}

// Pair pairs the operations of events and completes them (see Complete):
// the checks' view of a history. An operation whose two events name
// different values of node, key or owner is an error (*MismatchError), the
// first in the history.
func Pair(events []Event) (*Paired, error) { return pair(events, true) }

// PairRecorded pairs the operations of events as they were recorded, without
// completing them.
func PairRecorded(events []Event) *Paired {
	p, _ := pair(events, false)
	return p
}

// opens tracks the open invocation of every process (an index in the pairs
// being built), in a slice for the usual small process numbers.
type opens struct {
	dense  []int32
	sparse map[int]int32
}

func newOpens(events []Event) opens {
	hi := -1
	for i := range events {
		if p := events[i].Process; p > hi {
			hi = p
		}
	}
	if hi < 1<<20 {
		o := opens{dense: make([]int32, hi+2)}
		for i := range o.dense {
			o.dense[i] = -1
		}
		return o
	}
	return opens{sparse: map[int]int32{}}
}

func (o *opens) get(p int) int32 {
	if o.dense != nil && p >= 0 {
		return o.dense[p]
	}
	if j, ok := o.sparse[p]; ok {
		return j
	}
	return -1
}

func (o *opens) set(p int, j int32) {
	if o.dense != nil && p >= 0 {
		o.dense[p] = j
		return
	}
	if o.sparse == nil {
		o.sparse = map[int]int32{}
	}
	if j < 0 {
		delete(o.sparse, p)
		return
	}
	o.sparse[p] = j
}

func pair(events []Event, complete bool) (*Paired, error) {
	type pairIdx struct{ inv, comp int32 }
	n := 0
	for i := range events {
		if events[i].Type == Invoke {
			n++
		}
	}
	pairs := make([]pairIdx, 0, n)
	open := newOpens(events)
	p := &Paired{recorded: events}
	gaining := 0 // events that gain a field
	for i := range events {
		e := &events[i]
		if e.Type == Invoke {
			open.set(e.Process, int32(len(pairs)))
			pairs = append(pairs, pairIdx{inv: int32(i), comp: -1})
			continue
		}
		if !e.Type.IsCompletion() {
			continue
		}
		k := open.get(e.Process)
		if k < 0 {
			continue
		}
		open.set(e.Process, -1)
		pairs[k].comp = int32(i)
		if complete {
			inv := &events[pairs[k].inv]
			if err := mismatch(inv, e); err != nil {
				return nil, err
			}
			gaining += gains(inv, e) + gains(e, inv)
		}
	}
	if gaining > 0 {
		p.fixed = make([]Event, 0, gaining)
		p.at = make([]int32, len(events))
		for x := range p.at {
			p.at[x] = -1
		}
		for _, x := range pairs {
			if x.comp >= 0 {
				p.complete(int(x.inv), int(x.comp))
			}
		}
	}
	p.ops = make([]PairedOp, len(pairs))
	for k, x := range pairs {
		p.ops[k].Invoke = p.At(int(x.inv))
		if x.comp >= 0 {
			p.ops[k].Completion = p.At(int(x.comp))
		}
	}
	return p, nil
}

// gains is 1 when e lacks an identity field that other has.
func gains(e, other *Event) int {
	if (e.Node == "" && other.Node != "") || (e.Key == "" && other.Key != "") || (e.Owner == "" && other.Owner != "") {
		return 1
	}
	return 0
}

// complete gives the invocation j and its completion i the identity fields
// either of them recorded (they do not contradict each other): each of the
// two that gains a field is copied into fixed.
func (p *Paired) complete(j, i int) {
	for _, x := range [2][2]int{{j, i}, {i, j}} {
		e, other := &p.recorded[x[0]], &p.recorded[x[1]]
		if gains(e, other) == 0 {
			continue
		}
		p.at[x[0]] = int32(len(p.fixed))
		p.fixed = append(p.fixed, *e)
		c := &p.fixed[len(p.fixed)-1]
		if c.Node == "" {
			c.Node = other.Node
		}
		if c.Key == "" {
			c.Key = other.Key
		}
		if c.Owner == "" {
			c.Owner = other.Owner
		}
	}
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
	p.faultsOnce.Do(func() { p.faults = FaultWindows(p.recorded) })
	return p.faults
}

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
	if o.Completion == nil || o.Completion.Type == Info {
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
