package models

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// Budget bounds the linearizability searches of a check. The search of one
// key stops when either bound is reached, and the check then says unknown,
// naming the bound (Verdict.Exhausted). Valid and invalid results never depend
// on the budget.
type Budget struct {
	// Steps bounds the model steps the search of one key may take. 0 means
	// DefaultSteps; negative means no bound. It is deterministic: a search that
	// runs out of steps does so on every machine, so the verdict is
	// reproducible.
	Steps int64
	// Time bounds the wall-clock time of the search of one key; 0 means no
	// bound. A search that runs out of time depends on the machine: it is a
	// safety net for the step bound, not a replacement.
	Time time.Duration
}

// DefaultSteps is the step bound of a zero Budget: about a second or two of
// search per key, and a few hundred MB at most for the search's memo.
const DefaultSteps int64 = 2_000_000

func (b Budget) stepLimit() int64 {
	switch {
	case b.Steps == 0:
		return DefaultSteps
	case b.Steps < 0:
		return 0
	}
	return b.Steps
}

// String describes the budget in a verdict's words.
func (b Budget) String() string {
	s := "unbounded steps"
	if n := b.stepLimit(); n > 0 {
		s = fmt.Sprintf("%d steps", n)
	}
	if b.Time > 0 {
		s += fmt.Sprintf(" and %v", b.Time)
	}
	return s + " per key"
}

// linOp is one operation of a linearizability search on one key.
//
// Call and ret are history indexes. An open operation may take effect at any
// time after its call, or never (an indeterminate outcome); its return is the
// end of the batch it is searched in, and it holds back every cut until the
// history index until, after which it can no longer matter.
type linOp struct {
	call, ret int64
	open      bool
	until     int64
	// forcing: once this operation is legal, the state after it depends only
	// on the operation and on which operations precede it, not on their order
	// (see search).
	forcing bool
	client  int
	input   any
}

// startOp is the first operation of every batch: it puts the model into the
// state the previous batch left (or the initial state).
type startOp struct{ state any }

// searchSpec is a model and how to carry its state across a cut.
type searchSpec struct {
	// model steps over the inputs of linOps and over startOp.
	model porcupine.Model
	// settle returns the state after a batch whose last operation (in every
	// linearization) is the forcing operation last, from the state start.
	settle func(start any, batch []linOp, last linOp) any
}

// keyOutcome is the result of the search of one key.
type keyOutcome struct {
	result    Result
	exhausted string // "steps" or "time" when a bound ran out
	reason    string // why an unknown result is unknown
	steps     int64
	batches   int
	// start and batch are the state and the operations of the batch Porcupine
	// found illegal.
	start any
	batch []linOp
}

// batchTarget is the size from which a batch is cut at the next quiescent
// point. Small batches keep Porcupine's memo (one bitset of the batch's size
// per state visited) small; the exact size hardly matters.
var batchTarget = 128

// batch is a run of operations between two cuts; last is the forcing operation
// that ends it (nil for the final batch).
type batch struct {
	ops  []linOp
	last *linOp
}

// cutBatches splits ops (sorted by call) into batches at quiescent points: a
// cut after operation X and before the next operation is sound when X returned
// before the next operation was invoked, every other finite operation of the
// batch returned before X was invoked (so X is last in every linearization),
// X is forcing (so the state after the batch is the same in every
// linearization), and no open operation of the batch can still matter.
func cutBatches(ops []linOp) []batch {
	var out []batch
	var cur []linOp
	x := -1                   // index in cur of the last finite operation, if it is alone
	maxRet := int64(-1)       // max return of the finite operations in cur
	holdUntil := int64(-1)    // cuts must wait until after this index
	lastHeldCall := int64(-1) // call of the last open operation that holds cuts
	for _, o := range ops {
		if x >= 0 && len(cur) >= batchTarget && cur[x].forcing && maxRet < o.call && holdUntil < o.call &&
			cur[x].call > lastHeldCall {
			last := cur[x]
			out = append(out, batch{ops: cur, last: &last})
			cur, x, maxRet, holdUntil, lastHeldCall = nil, -1, -1, -1, -1
		}
		cur = append(cur, o)
		if o.open {
			holdUntil = max(holdUntil, o.until)
			lastHeldCall = max(lastHeldCall, o.call)
			continue
		}
		x = -1
		if maxRet < o.call {
			x = len(cur) - 1
		}
		maxRet = max(maxRet, o.ret)
	}
	if len(cur) > 0 {
		out = append(out, batch{ops: cur})
	}
	return out
}

// porcupineOps turns a batch into Porcupine operations after a start
// operation; open operations return at the end of the batch.
func porcupineOps(start any, ops []linOp) []porcupine.Operation {
	end := int64(0)
	for _, o := range ops {
		end = max(end, o.call+1)
		if !o.open {
			end = max(end, o.ret+1)
		}
	}
	out := make([]porcupine.Operation, 0, len(ops)+1)
	out = append(out, porcupine.Operation{ClientId: 0, Input: startOp{start}, Call: -2, Return: -1})
	clients := map[int]int{} // process -> dense row of the visualization
	for _, o := range ops {
		ret := o.ret
		if o.open {
			ret = end
		}
		row, seen := clients[o.client]
		if !seen {
			row = len(clients)
			clients[o.client] = row
		}
		out = append(out, porcupine.Operation{ClientId: row, Input: o.input, Call: o.call, Return: ret})
	}
	return out
}

// stepCounter wraps a model's Step to count steps, stop the search when the
// bound is reached (every step then fails, so Porcupine unwinds quickly and
// the result is discarded), and turn a panic inside the model into a recorded
// failure instead of a crash of Porcupine's goroutine.
type stepCounter struct {
	limit     int64
	n         atomic.Int64
	exhausted atomic.Bool
	crash     atomic.Value // string
}

func (c *stepCounter) wrap(m porcupine.Model) porcupine.Model {
	step := m.Step
	m.StepContext = nil
	m.Step = func(state, input, output any) (ok bool, next any) {
		if n := c.n.Add(1); c.limit > 0 && n > c.limit {
			c.exhausted.Store(true)
			return false, state
		}
		defer func() {
			if r := recover(); r != nil {
				c.crash.CompareAndSwap(nil, fmt.Sprint(r))
				ok, next = false, state
			}
		}()
		return step(state, input, output)
	}
	return m
}

// search decides whether ops (the operations of one key) are linearizable
// from the state start, batch by batch.
func search(spec searchSpec, start any, ops []linOp, b Budget) keyOutcome {
	slices.SortStableFunc(ops, func(x, y linOp) int { return cmp.Compare(x.call, y.call) })
	counter := &stepCounter{limit: b.stepLimit()}
	model := counter.wrap(spec.model)
	var deadline time.Time
	if b.Time > 0 {
		deadline = time.Now().Add(b.Time)
	}
	state := start
	out := keyOutcome{result: Valid}
	for _, bt := range cutBatches(ops) {
		out.batches++
		var timeout time.Duration
		if !deadline.IsZero() {
			if timeout = time.Until(deadline); timeout <= 0 {
				return exhaustedOutcome(out, counter, "time")
			}
		}
		res := porcupine.CheckOperationsTimeout(model, porcupineOps(state, bt.ops), timeout)
		out.steps = counter.n.Load()
		if msg, crashed := counter.crash.Load().(string); crashed {
			out.result, out.reason = Unknown, "the model crashed: "+msg
			return out
		}
		switch {
		case counter.exhausted.Load():
			return exhaustedOutcome(out, counter, "steps")
		case res == porcupine.Unknown:
			return exhaustedOutcome(out, counter, "time")
		case res == porcupine.Illegal:
			out.result, out.start, out.batch = Invalid, state, bt.ops
			return out
		}
		if bt.last != nil {
			state = spec.settle(state, bt.ops, *bt.last)
		}
	}
	return out
}

func exhaustedOutcome(out keyOutcome, c *stepCounter, bound string) keyOutcome {
	out.result, out.exhausted, out.steps = Unknown, bound, c.n.Load()
	if bound == "steps" {
		out.steps = c.limit
	}
	return out
}
