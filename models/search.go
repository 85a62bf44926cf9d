package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/internal/reuse"
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
	until     int64
	client    int
	input     any
	open      bool
	// forcing: once this operation is legal and last, the state after it
	// depends only on the operation and on which operations precede it, not on
	// their order (see cutBatches).
	forcing bool
}

// startOp is the first operation of every batch: it puts the model into the
// state the previous batch left (or the initial state).
type startOp struct {
	state any
	key   string // the partition it starts (in a whole-history view)
}

// searchSpec is a model and how to carry its state across a cut.
type searchSpec struct {
	// model steps over the inputs of linOps and over startOp.
	model porcupine.Model
	// settle returns the state after a batch whose last operation (in every
	// linearization) is the forcing operation last, from the state start.
	settle func(start any, batch []linOp, last linOp) any
	// order says whether y, concurrent with the forcing operation x, precedes
	// x (-1) or follows it (1) in every legal linearization, or cannot tell (0).
	// -1 may also mean "either, with the same state after the batch".
	order func(x, y linOp) int
	// batches, when set, is the memory the batches are cut in (see
	// cutBatchesIn); nil: memory of their own.
	batches *batchScratch
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

// cutBatches splits ops (sorted by call) into batches. A cut is made at a
// forcing operation X when every operation concurrent with X is known to
// precede X or to follow it in every legal linearization (order says which,
// or 0 when it cannot tell): the batch is then the operations before X, and
// X, which is last in every legal linearization of the batch, so the state
// after the batch is settled. The operations that must follow X move to the
// next batch, with their own invocation times. An open operation that can
// still matter (until) holds every cut back.
//
// Without concurrency this is a cut at every quiescent point; with clients
// queueing for a lock, whose acquires overlap many other operations, the
// model's order makes the cut (a waiting client's grant must follow the
// current grant).
func cutBatches(ops []linOp, order func(x, y linOp) int) []batch {
	return cutBatchesIn(ops, order, new(batchScratch))
}

// batchScratch is the memory batches are cut in, reused by the next cut.
type batchScratch struct {
	// all holds the operations of every batch: each operation is in exactly
	// one batch, so the batches are carved one after the other from it.
	all           []linOp
	pending, next []linOp
	live          []int
	batches       []batch
	lasts         []linOp
}

// cutBatchesIn is cutBatches in bs's memory: the batches are valid until
// the next call with bs.
func cutBatchesIn(ops []linOp, order func(x, y linOp) int, bs *batchScratch) []batch {
	out := bs.batches[:0]
	all := reuse.Room(bs.all, len(ops))
	lasts := bs.lasts[:0]
	pending := reuse.Room(bs.pending, min(2*batchTarget, len(ops))) // reused from batch to batch
	next := bs.next[:0]                                             // scratch for the operations a cut moves on
	live := bs.live[:0]                                             // indexes in pending of the operations that may still overlap later ones
	for i := 0; i < len(ops); i++ {
		x := ops[i]
		kept := live[:0]
		for _, j := range live {
			if pending[j].open || pending[j].ret > x.call {
				kept = append(kept, j)
			}
		}
		live = kept
		if len(pending)+1 >= batchTarget && x.forcing && !x.open {
			end := i + 1
			for end < len(ops) && ops[end].call < x.ret {
				end++
			}
			during := ops[i+1 : end]
			if fits(x, pending, live, during, order) {
				// pending, x and during are in no batch yet: all has room for them.
				n := len(all)
				var cur []linOp
				cur, next = split(x, pending, during, order, all[n:n:n+len(pending)+1+len(during)], next[:0])
				all = all[:n+len(cur)]
				lasts = append(lasts, x)
				out = append(out, batch{ops: cur})
				pending, live = append(pending[:0], next...), live[:0]
				for j := range next {
					live = append(live, j)
				}
				i = end - 1
				continue
			}
		}
		pending = append(pending, x)
		live = append(live, len(pending)-1)
	}
	if len(pending) > 0 {
		n := len(all)
		all = append(all, pending...)
		out = append(out, batch{ops: all[n:len(all):len(all)]})
	}
	for i := range lasts { // lasts no longer grows: point into it
		out[i].last = &lasts[i]
	}
	bs.all, bs.pending, bs.next, bs.live, bs.batches, bs.lasts = all, pending, next, live, out, lasts
	return out
}

// side says where y goes for a cut at x: -1 before, 1 after, 0 no cut.
func side(x, y linOp, order func(x, y linOp) int) int {
	if y.open && y.until >= x.call {
		return 0
	}
	if !y.open && y.ret < x.call {
		return -1
	}
	return order(x, y)
}

// fits reports whether a cut at x is possible: every operation invoked
// before x that may overlap it (live) and every operation invoked while x
// was open (during) has a side.
func fits(x linOp, pending []linOp, live []int, during []linOp, order func(x, y linOp) int) bool {
	for _, j := range live {
		if side(x, pending[j], order) == 0 {
			return false
		}
	}
	for _, y := range during {
		if side(x, y, order) == 0 {
			return false
		}
	}
	return true
}

// split sorts the operations around a cut at x: the batch ending in x
// (appended to cur), and the operations left for the next batches (appended
// to next).
func split(x linOp, before, during []linOp, order func(x, y linOp) int, cur, next []linOp) (_, _ []linOp) {
	for _, y := range before {
		if side(x, y, order) < 0 {
			cur = append(cur, y)
		} else {
			next = append(next, y)
		}
	}
	cur = append(cur, x)
	for _, y := range during {
		if side(x, y, order) < 0 {
			cur = append(cur, y)
		} else {
			next = append(next, y)
		}
	}
	return cur, next
}

// porcupineRows are the processes of a batch's operations in the order of
// the rows porcupineOps gives them: row 0 holds the start operation alone,
// row i+1 the operations of the i-th process by number, so that the first
// processes, one per client in client order, come first.
func porcupineRows(ops []linOp) []int {
	var rows []int
	seen := map[int]bool{}
	for _, o := range ops {
		if !seen[o.client] {
			seen[o.client] = true
			rows = append(rows, o.client)
		}
	}
	slices.Sort(rows)
	return rows
}

// porcupineOps turns a batch into Porcupine operations after a start
// operation, each process on a row of its own (porcupineRows); open
// operations return at the end of the batch.
func porcupineOps(start any, ops []linOp) []porcupine.Operation {
	end := int64(0)
	for _, o := range ops {
		end = max(end, o.call+1)
		if !o.open {
			end = max(end, o.ret+1)
		}
	}
	out := make([]porcupine.Operation, 0, len(ops)+1)
	out = append(out, porcupine.Operation{ClientId: 0, Input: startOp{state: start}, Call: -2, Return: -1})
	rows := map[int]int{} // process -> row of the visualization
	for i, p := range porcupineRows(ops) {
		rows[p] = i + 1
	}
	for _, o := range ops {
		ret := o.ret
		if o.open {
			ret = end
		}
		out = append(out, porcupine.Operation{ClientId: rows[o.client], Input: o.input, Call: o.call, Return: ret})
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
	byCall := func(x, y linOp) int { return cmp.Compare(x.call, y.call) }
	if !slices.IsSortedFunc(ops, byCall) { // a stable sort leaves sorted operations as they are
		slices.SortStableFunc(ops, byCall)
	}
	counter := &stepCounter{limit: b.stepLimit()}
	model := counter.wrap(spec.model)
	var deadline time.Time
	if b.Time > 0 {
		deadline = time.Now().Add(b.Time)
	}
	state := start
	out := keyOutcome{result: Valid}
	w := wgls.Get()
	defer w.release()
	bs := spec.batches
	if bs == nil {
		bs = new(batchScratch)
	}
	for _, bt := range cutBatchesIn(ops, spec.order, bs) {
		out.batches++
		if !deadline.IsZero() && time.Until(deadline) <= 0 {
			return exhaustedOutcome(out, counter, "time")
		}
		res := w.check(model, counter, state, bt.ops, deadline)
		out.steps = counter.n.Load()
		if msg, crashed := counter.crash.Load().(string); crashed {
			out.result, out.reason = Unknown, "the model crashed: "+msg
			return out
		}
		switch {
		case counter.exhausted.Load():
			return exhaustedOutcome(out, counter, "steps")
		case res == wglTimedOut:
			return exhaustedOutcome(out, counter, "time")
		case res == wglIllegal:
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

// undecided collects the keys whose search could not decide.
type undecided struct {
	keys      []string
	exhausted string
}

// add records an unknown outcome of the search of what (a key, quoted).
func (u *undecided) add(what string, out keyOutcome, b Budget) {
	u.keys = append(u.keys, fmt.Sprintf("%s (%s)", what, unknownWhy(out, b)))
	if u.exhausted == "" {
		u.exhausted = out.exhausted
	}
}

// verdict is the unknown verdict of the collected keys; ok is false when
// every search decided.
func (u undecided) verdict(stats map[string]float64) (Verdict, bool) {
	if len(u.keys) == 0 {
		return Verdict{}, false
	}
	return Verdict{Result: Unknown, Stats: stats, Exhausted: u.exhausted,
		Reason: "the search could not decide on " + strings.Join(u.keys, "; ")}, true
}

// unknownWhy says why a key's search is undecided.
func unknownWhy(out keyOutcome, b Budget) string {
	switch out.exhausted {
	case "steps":
		return fmt.Sprintf("ran out of its budget of %d steps; raise the step budget to decide", b.stepLimit())
	case "time":
		return fmt.Sprintf("ran out of its time budget of %v after %d steps; this result depends on the machine", b.Time, out.steps)
	}
	return out.reason
}

// fnvOffset is the FNV-1a offset basis, a seed for hashes.
const fnvOffset uint64 = 14695981039346656037
