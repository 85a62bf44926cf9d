package models

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/reuse"
)

// Resource is the shape of the resource a lock protects.
type Resource string

// Resource shapes. They differ in how values are read and written (numbers or
// lists) and in how a violation is told (a lost update, an oversold stock, a
// lost append).
const (
	// ResourceAuto: a list for keys read as lists or appended to, a counter
	// for the others.
	ResourceAuto Resource = ""
	// ResourceCounter: a number; each section reads it and writes a new value.
	ResourceCounter Resource = "counter"
	// ResourceStock: a stock level; each section reads it and, if enough is
	// left, writes the level after a sale.
	ResourceStock Resource = "stock"
	// ResourceList: a list; each section reads it whole and appends one element.
	ResourceList Resource = "list"
)

// ParseResource parses a resource shape ("" or "auto" is ResourceAuto).
func ParseResource(s string) (Resource, error) {
	switch Resource(s) {
	case ResourceAuto, "auto":
		return ResourceAuto, nil
	case ResourceCounter, ResourceStock, ResourceList:
		return Resource(s), nil
	}
	return "", fmt.Errorf("unknown resource %q (want auto, counter, stock or list)", s)
}

// CriticalSections is the critical-section atomicity check: every critical
// section (a successful read of a key and the same process's next operation,
// when it writes or appends to that key) is one operation on a model of the
// resource, and the sections must be linearizable. With mutual exclusion they
// are; overlapping holders that both read 5 and both write 6 are not.
//
//   - A write the storage rejected (fencing) had no effect: the section only read.
//   - A write of unknown outcome may land at any time after it was invoked
//     (even more than once, as a network may duplicate it) or never.
//   - A write without a read before it sets the value (or appends) blindly.
//   - A write inside a transaction (its owner's begin before it) takes effect
//     only when the transaction commits: during an ok commit; maybe, if the
//     commit's outcome is unknown; never, if it failed or never came.
//
// The search runs per key (sorted) and in batches cut at quiescent points,
// which keeps long histories fast (see Budget for its bounds).
type CriticalSections struct {
	// Budget bounds the search. Default: DefaultSteps per key, no time bound.
	Budget Budget
	// Initial is the value of every key before the history; nil means
	// unknown (any first value is accepted). Lists start empty when it is set.
	Initial *int64
	// InitialByKey overrides Initial for the keys it names (numbers only).
	InitialByKey map[string]int64
	// Resource is the shape of the resource. Default ResourceAuto.
	Resource Resource
	// StorageFenced and ReadsFenced say how the storage fenced with the lock's
	// tokens, so that a lost update behind a fence can be explained.
	StorageFenced, ReadsFenced bool
}

// Name is "critical-sections".
func (CriticalSections) Name() string { return "critical-sections" }

// Applies reports whether the history has reads of the protected resource.
func (CriticalSections) Applies(events []history.Event) (bool, string) {
	return appliesIfAny(events, history.FRead, history.OK, "no successful read of the protected resource in the history")
}

// sectionKind is what the write of a section did.
type sectionKind int

const (
	readOnly sectionKind = iota // no write followed the read
	applied                     // the write was acknowledged
	rejected                    // the write certainly did not happen (the storage refused it)
	unsure                      // the write's outcome is unknown
)

func (k sectionKind) String() string {
	return [...]string{"no write", "write applied", "write rejected", "write outcome unknown"}[k]
}

// section is one critical section: a successful read and the write after it,
// or a write without a read (read is nil).
type section struct {
	key   string
	list  bool
	read  *op
	write *op
	kind  sectionKind
	from  value // the value read
	to    value // the value after the write (applied or unsure, after a read)
	x     int64 // the number written or appended
	noun  string
	// txn says the write was made inside a transaction; commit is its
	// commit (nil: it never committed).
	txn    bool
	commit *op
	// steps are the inputs of the section's search operations (linOps).
	steps [2]secStep
	// fromSet and toSet are {from} and {to} (see secStep.sets).
	fromSet, toSet values
}

func (s section) who() string {
	first := s.first()
	if first.Node != "" {
		return first.Node
	}
	return fmt.Sprintf("p%d", first.Process)
}

func (s section) first() *history.Event {
	if s.read != nil {
		return s.read.Invoke
	}
	return s.write.Invoke
}

func (s section) events() []history.Event {
	var out []history.Event
	for _, o := range []*op{s.read, s.write, s.commit} {
		if o != nil {
			out = append(out, *o.Invoke)
			if o.Completion != nil {
				out = append(out, *o.Completion)
			}
		}
	}
	return out
}

func (s section) String() string {
	var b strings.Builder
	b.WriteString(s.who())
	if s.read != nil {
		fmt.Fprintf(&b, " read %s at %s", s.from, history.FormatTime(s.read.Completion.Time))
		if s.read.Invoke.Token != nil {
			fmt.Fprintf(&b, " (token %d)", *s.read.Invoke.Token)
		}
	}
	if s.write != nil {
		verb := "wrote"
		if s.list {
			verb = "appended"
		}
		if s.read != nil {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %d at %s", verb, s.x, history.FormatTime(s.write.Invoke.Time))
		if s.read == nil && s.write.Invoke.Token != nil {
			fmt.Fprintf(&b, " (token %d)", *s.write.Invoke.Token)
		}
		fmt.Fprintf(&b, ": %s", s.outcome())
	}
	return b.String()
}

// outcome says what became of the section's write.
func (s section) outcome() string {
	if !s.txn || s.write.Outcome() == history.Fail {
		return s.kind.String()
	}
	switch {
	case s.commit == nil:
		return "write not applied: its transaction never committed"
	case s.kind == applied:
		return "write applied when its transaction committed at " + history.FormatTime(s.commit.Completion.Time)
	case s.kind == rejected:
		return "write not applied: its transaction's commit failed"
	case s.commit.Outcome() == history.Info:
		return "write outcome unknown: its transaction's commit outcome is unknown"
	}
	return s.kind.String()
}

// applyRet is the index of the event by which an applied write surely took
// effect: its completion, or its transaction's commit's.
func (s *section) applyRet() int64 {
	if s.commit != nil {
		return int64(s.commit.Completion.Index)
	}
	return int64(s.write.Completion.Index)
}

// txnSpan is a transaction of the history: its begin and its commit.
type txnSpan struct {
	begin  int // the begin's invoke index
	commit *op // nil: never committed
}

// txnIndex is the transactions of a history by owner, in begin order.
type txnIndex map[string][]txnSpan

// indexTxns finds the transactions of ops (nil when there are none).
func indexTxns(ops []op) txnIndex {
	var idx txnIndex
	for i := range ops {
		o := &ops[i]
		switch o.Func() {
		case history.FBegin:
			if o.Outcome() != history.OK {
				continue
			}
			if idx == nil {
				idx = txnIndex{}
			}
			owner := ownerOf(o)
			idx[owner] = append(idx[owner], txnSpan{begin: o.Invoke.Index})
		case history.FCommit:
			if spans := idx[ownerOf(o)]; len(spans) > 0 && spans[len(spans)-1].commit == nil {
				spans[len(spans)-1].commit = o
			}
		}
	}
	return idx
}

// of is the transaction of its owner that write w belongs to: the last one
// begun before w completed (a client may note the begin while it sends the
// write), unless its commit was invoked before w was.
func (idx txnIndex) of(w *op) (txnSpan, bool) {
	end := math.MaxInt
	if w.Completion != nil {
		end = w.Completion.Index
	}
	spans := idx[ownerOf(w)]
	for i := len(spans) - 1; i >= 0; i-- {
		if t := spans[i]; t.begin < end {
			return t, t.commit == nil || t.commit.Invoke.Index > w.Invoke.Index
		}
	}
	return txnSpan{}, false
}

// ownerOf is the owner an operation names, on its invoke or its completion.
func ownerOf(o *op) string {
	if o.Invoke.Owner == "" && o.Completion != nil {
		return o.Completion.Owner
	}
	return o.Invoke.Owner
}

// inTxn makes the write of s, made inside transaction t, take effect only
// as t's commit does.
func (s *section) inTxn(t txnSpan) {
	s.txn, s.commit = true, t.commit
	switch {
	case s.kind == rejected:
	case t.commit == nil || t.commit.Outcome() == history.Fail:
		s.kind = rejected
	case t.commit.Outcome() == history.Info:
		s.kind = unsure
	}
}

// readValue is the value an ok read returned.
func readValue(comp *history.Event, in *interner) (value, bool) {
	switch {
	case comp.Values != nil:
		return in.list(comp.Values), true
	case comp.Value != nil:
		return number(*comp.Value), true
	}
	return value{}, false
}

// extractSections finds the critical sections of a history (its operations),
// in invoke order, and counts the storage operations it cannot use (reads and
// writes without a value).
func extractSections(ops []op, in *interner) (secs []section, unusable int) {
	return extractSectionsIn(ops, in, new(sectionScratch))
}

// sectionScratch is the memory of a critical-sections check: its sections
// and their search operations, reused by the next check once the verdict
// keeps nothing of them (sectionScratches).
type sectionScratch struct {
	pending procSlots
	secs    []section
	sets    values
	ptrs    []*section
	ops     []linOp
	states  regStates
	batches batchScratch
}

// sectionScratches keeps the scratch of critical-sections checks for the
// next one (an invalid verdict's once its visualization is released:
// withScratch).
var sectionScratches reuse.Pool[sectionScratch]

// extractSectionsIn is extractSections in sc's memory: the sections are
// valid until the next call with sc.
func extractSectionsIn(ops []op, in *interner, sc *sectionScratch) (secs []section, unusable int) {
	pending := &sc.pending // process -> index in secs of its section awaiting a write
	if pending.dense == nil {
		pending.dense = make([]int32, 0, 64)
	}
	secs = reuse.Room(sc.secs, countSections(ops, pending))
	txns := indexTxns(ops)
	defer func() {
		sc.secs = secs
		for p := range pending.dense {
			pending.dense[p] = 0
		}
		clear(pending.sparse)
	}()
	for i := range ops {
		o := &ops[i]
		if f := o.Func(); f != history.FRead && f != history.FWrite && f != history.FAppend {
			pending.del(o.Invoke.Process)
			continue
		}
		p := o.Invoke.Process
		j := pending.get(p)
		has := j >= 0
		pending.del(p)
		switch o.Func() {
		case history.FRead:
			if o.Outcome() != history.OK {
				continue
			}
			v, ok := readValue(o.Completion, in)
			if !ok {
				unusable++
				continue
			}
			secs = append(secs, section{key: o.Invoke.Key, list: v.list, read: o, from: v})
			pending.set(p, int32(len(secs)-1))
		case history.FWrite, history.FAppend:
			if o.Invoke.Value == nil {
				unusable++
				continue
			}
			isList := o.Func() == history.FAppend
			if !has || secs[j].key != o.Invoke.Key || secs[j].list != isList {
				secs = append(secs, section{key: o.Invoke.Key, list: isList})
				j = int32(len(secs) - 1)
			}
			attachWrite(&secs[j], o, in)
			if txns != nil {
				if t, ok := txns.of(o); ok {
					secs[j].inTxn(t)
				}
			}
		}
	}
	return secs, unusable
}

// countSections is the number of sections extractSections finds in ops, by
// the same walk without building them, so that it allocates them once at
// their size. pending is its scratch space (left empty).
func countSections(ops []op, pending *procSlots) int {
	n := 0
	for i := range ops {
		o := &ops[i]
		p := o.Invoke.Process
		f := o.Func()
		if f != history.FRead && f != history.FWrite && f != history.FAppend {
			pending.del(p)
			continue
		}
		j := pending.get(p) // the index in ops of the read of its section
		pending.del(p)
		switch f {
		case history.FRead:
			if o.Outcome() != history.OK || (o.Completion.Values == nil && o.Completion.Value == nil) {
				continue
			}
			n++
			pending.set(p, int32(i))
		default:
			if o.Invoke.Value == nil {
				continue
			}
			if j < 0 || ops[j].Invoke.Key != o.Invoke.Key || (ops[j].Completion.Values != nil) != (f == history.FAppend) {
				n++
			}
		}
	}
	for p := range pending.dense {
		pending.dense[p] = 0
	}
	clear(pending.sparse)
	return n
}

// procSlots maps process numbers to an int32 (-1: none), in a slice for the
// usual small process numbers.
type procSlots struct {
	dense  []int32 // process -> value + 1 (0: none)
	sparse map[int]int32
}

// procDenseMax bounds the process numbers kept in the slice.
const procDenseMax = 1 << 20

func (s *procSlots) get(p int) int32 {
	if p >= 0 && p < procDenseMax {
		if p < len(s.dense) {
			return s.dense[p] - 1
		}
		return -1
	}
	if j, ok := s.sparse[p]; ok {
		return j
	}
	return -1
}

func (s *procSlots) set(p int, j int32) {
	if p >= 0 && p < procDenseMax {
		if p >= len(s.dense) {
			s.dense = append(s.dense, make([]int32, p+1-len(s.dense)+16)...)
		}
		s.dense[p] = j + 1
		return
	}
	if s.sparse == nil {
		s.sparse = map[int]int32{}
	}
	s.sparse[p] = j
}

func (s *procSlots) del(p int) {
	if p >= 0 && p < procDenseMax {
		if p < len(s.dense) {
			s.dense[p] = 0
		}
		return
	}
	delete(s.sparse, p)
}

func attachWrite(s *section, w *op, in *interner) {
	s.write, s.x = w, *w.Invoke.Value
	switch {
	case s.read != nil && s.list:
		s.to = in.appended(s.from, s.x)
	case !s.list:
		s.to = number(s.x)
	}
	switch w.Outcome() {
	case history.OK:
		s.kind = applied
	case history.Fail:
		s.kind = rejected
	default:
		s.kind = unsure
	}
}

// linOps are the search operations of a section.
func (s *section) linOps() []linOp { return s.appendLinOps(nil) }

// appendLinOps appends the search operations of s to dst. Their inputs
// point into s (s.steps).
func (s *section) appendLinOps(dst []linOp) []linOp {
	client := s.first().Process
	if s.read == nil {
		return s.blindOps(dst, client)
	}
	r := s.read
	s.steps[0] = secStep{kind: stepObserve, from: s.from, sec: s}
	observe := linOp{call: int64(r.Invoke.Index), ret: int64(r.Completion.Index), forcing: true, client: client, input: &s.steps[0]}
	switch s.kind {
	case applied:
		s.steps[0] = secStep{kind: stepUpdate, from: s.from, to: s.to, sec: s}
		return append(dst, linOp{call: int64(r.Invoke.Index), ret: s.applyRet(), forcing: true, client: client,
			input: &s.steps[0]})
	case unsure:
		s.steps[1] = secStep{kind: stepMaybe, from: s.from, to: s.to, sec: s}
		return append(dst, observe, maybe(s.write, client, &s.steps[1]))
	}
	return append(dst, observe)
}

func (s *section) blindOps(dst []linOp, client int) []linOp {
	w := s.write
	switch {
	case s.kind == rejected:
		return dst
	case s.kind == applied && s.list:
		s.steps[0] = secStep{kind: stepBlindAppend, x: s.x, sec: s}
		return append(dst, linOp{call: int64(w.Invoke.Index), ret: s.applyRet(), client: client, input: &s.steps[0]})
	case s.kind == applied:
		s.steps[0] = secStep{kind: stepOverwrite, to: s.to, sec: s}
		return append(dst, linOp{call: int64(w.Invoke.Index), ret: s.applyRet(), forcing: true, client: client,
			input: &s.steps[0]})
	case s.list:
		s.steps[0] = secStep{kind: stepMaybeAppend, x: s.x, sec: s}
		return append(dst, linOp{call: int64(w.Invoke.Index), open: true, until: math.MaxInt64, client: client, input: &s.steps[0]})
	}
	s.steps[0] = secStep{kind: stepMaybe, anyFrom: true, to: s.to, sec: s}
	return append(dst, maybe(w, client, &s.steps[0]))
}

// maybe is the operation of a write of unknown outcome: a rule that may fire
// from the write's invocation on. The model is monotone in its rules (a rule
// added earlier never makes a later operation illegal, and it can fire at any
// later point), so adding it at the invocation itself loses nothing: the
// operation is the point [call, call], which spares the search from trying
// every later placement.
func maybe(w *op, client int, in *secStep) linOp {
	return linOp{call: int64(w.Invoke.Index), ret: int64(w.Invoke.Index), client: client, input: in}
}

// noun names the resource of key in descriptions.
func (c CriticalSections) noun(list bool) string {
	switch {
	case list || c.Resource == ResourceList:
		return "list"
	case c.Resource == ResourceStock:
		return "stock"
	}
	return "counter"
}

// initial is the state of key before the history.
func (c CriticalSections) initial(key string, list bool) regState {
	v, known := c.InitialByKey[key]
	if !known && c.Initial != nil {
		v, known = *c.Initial, true
	}
	switch {
	case !known:
		return regState{any: true}
	case list:
		return regState{vals: values{{list: true}}}
	}
	return regState{vals: values{number(v)}}
}

// Check runs the search per key (keys sorted) and merges the results.
func (c CriticalSections) Check(events []history.Event) Verdict {
	return c.checkPaired(completed(events))
}

// sectionKindStats are the stats' names of the section kinds.
var sectionKindStats = [...]string{"no-write", "write-applied", "write-rejected", "write-outcome-unknown"}

func (c CriticalSections) checkPaired(h *history.Paired) Verdict {
	return withScratch(&sectionScratches, func(sc *sectionScratch) Verdict { return c.checkIn(h, sc) })
}

// checkIn is checkPaired with the sections and their searches in sc's memory.
func (c CriticalSections) checkIn(h *history.Paired, sc *sectionScratch) Verdict {
	in := newInterner()
	secs, unusable := extractSectionsIn(h.Ops(), in, sc)
	if len(secs) == 0 {
		return Verdict{Result: Unknown, Reason: "no critical sections (no successful read under a lock, and no write) in the history"}
	}
	sets := reuse.Room(sc.sets, 2*len(secs))[:2*len(secs)] // every section's {from} and {to}, in one block
	sc.sets = sets
	oneKey := true
	for i := range secs {
		s := &secs[i]
		s.noun = c.noun(s.list)
		sets[2*i], sets[2*i+1] = s.from, s.to
		s.fromSet, s.toSet = sets[2*i:2*i+1:2*i+1], sets[2*i+1:2*i+2:2*i+2]
		oneKey = oneKey && s.key == secs[0].key
	}
	var byKey map[string][]*section
	if oneKey { // the usual case: the sections as they are
		ptrs := reuse.Room(sc.ptrs, len(secs))
		for i := range secs {
			ptrs = append(ptrs, &secs[i])
		}
		sc.ptrs = ptrs
		byKey = map[string][]*section{secs[0].key: ptrs}
	} else {
		byKey = map[string][]*section{}
		for i := range secs {
			byKey[secs[i].key] = append(byKey[secs[i].key], &secs[i])
		}
	}
	keys := sortedKeys(byKey)
	stats := map[string]float64{"sections": float64(len(secs)), "keys": float64(len(keys))}
	for _, s := range secs {
		stats[sectionKindStats[s.kind]]++
	}
	if unusable > 0 {
		stats["unusable-operations"] = float64(unusable)
	}
	var unknown undecided
	states := &sc.states // shared by the keys' searches, one at a time
	states.blocks.reset()
	for _, k := range keys {
		list := slices.ContainsFunc(byKey[k], func(s *section) bool { return s.list })
		ops := reuse.Room(sc.ops, 2*len(byKey[k]))
		for _, s := range byKey[k] {
			ops = s.appendLinOps(ops)
		}
		sc.ops = ops
		spec := sectionSpecIn(c.noun(list), ops, states)
		spec.batches = &sc.batches
		out := search(spec, c.initial(k, list), ops, c.Budget)
		stats["search-steps"] += float64(out.steps)
		stats["search-batches"] += float64(out.batches)
		switch out.result {
		case Invalid:
			return c.invalid(h, k, spec, out, stats)
		case Unknown:
			unknown.add(fmt.Sprintf("%q", k), out, c.Budget)
		}
	}
	if v, ok := unknown.verdict(stats); ok {
		return v
	}
	reason := fmt.Sprintf("%s on %s %s linearizable", history.Plural(len(secs), "critical section", ""), history.Plural(len(keys), "key", ""), isAre(len(secs)))
	if n := stats["write-outcome-unknown"]; n > 0 {
		reason += fmt.Sprintf(" (%.0f writes of unknown outcome taken as possibly applied)", n)
	}
	if unusable > 0 {
		reason += fmt.Sprintf("; %d reads or writes without a value were left out", unusable)
	}
	return Verdict{Result: Valid, Stats: stats, Reason: reason}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sectionSpec is the search spec of one key's sections: the model and how a
// cut carries its state. The state after a batch is the value of its last
// section (closed under the rules that may still land); rules that can no
// longer matter after the cut are dropped.
func sectionSpec(noun string, ops []linOp) searchSpec {
	return sectionSpecIn(noun, ops, new(regStates))
}

// sectionSpecIn is sectionSpec with the model's states carved from states.
func sectionSpecIn(noun string, ops []linOp, states *regStates) searchSpec {
	var future *futureUse // made when a rule first needs pruning
	return searchSpec{
		model: registerModelIn(noun, states),
		settle: func(start any, batch []linOp, last linOp) any {
			rules := regOf(start).rules
			for _, o := range batch {
				if in := o.input.(*secStep); in.kind == stepMaybe {
					rules = rules.push(rule{anyFrom: in.anyFrom, from: in.from, to: in.to})
				}
			}
			in := last.input.(*secStep)
			v := in.to
			if in.kind == stepObserve {
				v = in.from
			}
			if rules != nil {
				if future == nil {
					future = newFutureUse(ops)
				}
				rules = future.prune(rules, values{v}, last.ret)
			}
			return regState{vals: closure(values{v}, rules), rules: rules}
		},
		// A write of unknown outcome only adds a rule: before or after the
		// batch's last section, the state after the batch is the same.
		order: func(_, y linOp) int {
			if y.input.(*secStep).kind == stepMaybe {
				return -1
			}
			return 0
		},
	}
}

// futureUse records, per value, the last operation that reads it and the last
// that may produce it, so that a cut can drop the rules that cannot matter.
type futureUse struct {
	read, produced map[valueKey]int64
	// blind: the key has appends without reads, which may produce any list.
	blind bool
}

func newFutureUse(ops []linOp) *futureUse {
	reads, produces := 0, 0 // the maps' sizes at most
	for _, o := range ops {
		switch o.input.(*secStep).kind {
		case stepObserve:
			reads++
		case stepUpdate:
			reads++
			produces++
		case stepOverwrite, stepMaybe:
			produces++
		}
	}
	f := &futureUse{read: make(map[valueKey]int64, reads), produced: make(map[valueKey]int64, produces)}
	for _, o := range ops {
		in := o.input.(*secStep)
		switch in.kind {
		case stepObserve, stepUpdate:
			k := in.from.key()
			if v, ok := f.read[k]; !ok || o.call > v {
				f.read[k] = max(v, o.call)
			}
		case stepBlindAppend, stepMaybeAppend:
			f.blind = true
		}
		if in.kind == stepUpdate || in.kind == stepOverwrite || in.kind == stepMaybe {
			k := in.to.key()
			if v, ok := f.produced[k]; !ok || o.call > v {
				f.produced[k] = max(v, o.call)
			}
		}
	}
	return f
}

// prune keeps the rules that may still fire (their source is possible now or
// may be produced later) and still matter (their result may be read later, or
// feed another kept rule), after the history index pos.
func (f *futureUse) prune(rules *ruleNode, vals values, pos int64) *ruleNode {
	rs := rules.slice()
	keep := make([]bool, len(rs))
	for i := range keep {
		keep[i] = true
	}
	feeds := func(i int, match func(r rule) bool) bool {
		for j, r := range rs {
			if j != i && keep[j] && match(r) {
				return true
			}
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for i, r := range rs {
			if !keep[i] {
				continue
			}
			reachable := r.anyFrom || f.blind || vals.has(r.from) || f.produced[r.from.key()] > pos ||
				feeds(i, func(o rule) bool { return o.to.eq(r.from) })
			useful := f.read[r.to.key()] > pos || feeds(i, func(o rule) bool { return !o.anyFrom && o.from.eq(r.to) })
			if !reachable || !useful {
				keep[i], changed = false, true
			}
		}
	}
	var kept []rule
	for i, r := range rs {
		if keep[i] {
			kept = append(kept, r)
		}
	}
	return rulesOf(kept)
}

// invalid builds the verdict of a key whose sections are not linearizable.
func (c CriticalSections) invalid(h *history.Paired, key string, spec searchSpec, out keyOutcome, stats map[string]float64) Verdict {
	events := h.Recorded() // for the fault windows around the counterexample
	var an *analysis       // only when the explanation needs it
	cx, short := c.lostUpdate(h, key, out.batch)
	if cx == nil {
		a := analyze(spec, out.start, out.batch, c.Budget)
		an = &a
		cx, short = c.explainStuck(key, spec, a)
		short = explainLateRead(h, key, cx, short, a)
	}
	return Verdict{Result: Invalid, Stats: stats, Counterexample: withFaults(cx, events),
		Reason:        fmt.Sprintf("the critical sections on %q are not atomic: %s", key, short),
		Visualization: visualize(spec, out.start, out.batch, c.Budget, events, an)}
}

// lostUpdate looks in a batch for two applied sections that read the same
// value: the classic lost update (an oversold stock, a lost append). Behind a
// fenced storage it also says why the fence let both writes through.
func (c CriticalSections) lostUpdate(h *history.Paired, key string, batch []linOp) (*Counterexample, string) {
	var done []*section
	for _, o := range batch {
		in := o.input.(*secStep)
		if in.kind != stepUpdate {
			continue
		}
		for _, prev := range done {
			if prev.from.eq(in.from) {
				cx, short := describeLostUpdate(key, prev, in.sec)
				short = explainLateLanding(h, key, cx, short, prev, in.sec)
				if lines, why := c.throughTheFence(h, prev, in.sec); lines != nil {
					cx.Explanation = append(cx.Explanation, lines...)
					short += "; " + why
				}
				return cx, short
			}
		}
		done = append(done, in.sec)
	}
	return nil, ""
}

// throughTheFence explains a lost update whose two writes a fenced storage
// accepted: the older token wrote first, before the storage had seen the
// newer one, which had only been read with (reads are not fenced); the newer
// token then wrote too. Nil when the storage did not fence, fenced reads too,
// or the writes carry no distinct tokens.
func (c CriticalSections) throughTheFence(h *history.Paired, a, b *section) ([]string, string) {
	if !c.StorageFenced || c.ReadsFenced || a.write.Invoke.Token == nil || b.write.Invoke.Token == nil ||
		*a.write.Invoke.Token == *b.write.Invoke.Token {
		return nil, ""
	}
	if *a.write.Invoke.Token > *b.write.Invoke.Token {
		a, b = b, a // a: the older token, whose write the storage took first
	}
	ta, tb := *a.write.Invoke.Token, *b.write.Invoke.Token
	seen := func(w *op) string {
		if t, ok := highestAccepted(h, w.Invoke.Key, w.Invoke.Index); ok {
			return fmt.Sprintf("token %d", t)
		}
		return "no token"
	}
	lines := []string{
		"Fencing did not stop it: the storage refuses a write whose token is lower than the highest it has seen, and it sees tokens only on writes (reads are not fenced).",
		fmt.Sprintf("When %s wrote with token %d at %s, the storage had seen %s from the writes before it, so it accepted the write. "+
			"%s held the newer token %d but had only read with it (at %s): the storage did not know of it yet.",
			a.who(), ta, history.FormatTime(a.write.Invoke.Time), seen(a.write), b.who(), tb, history.FormatTime(b.read.Completion.Time)),
		fmt.Sprintf("When %s wrote with token %d at %s, the storage had seen %s: %d is not lower, so it accepted that write too, over a value %s had read before %s's write.",
			b.who(), tb, history.FormatTime(b.write.Invoke.Time), seen(b.write), tb, b.who(), a.who()),
		fmt.Sprintf("Remedy: fence reads too (--fence-reads: %s's read would have raised the storage's token to %d and %s's write with %d would have been rejected), "+
			"or make the write a compare-and-set on the token (or on the value read), so that a write is refused once a newer holder has touched the resource.",
			b.who(), tb, a.who(), ta),
	}
	return lines, fmt.Sprintf("the fence let both writes through: %s had only read with its newer token %d (reads are not fenced)", b.who(), tb)
}

// highestAccepted is the highest token of the accepted writes (appends) of
// key that completed before the event index before.
func highestAccepted(h *history.Paired, key string, before int) (uint64, bool) {
	var best uint64
	found := false
	for i := range h.Len() {
		e := h.At(i)
		if e.Index >= before {
			break
		}
		if e.Type == history.OK && e.Key == key && (e.F == history.FWrite || e.F == history.FAppend) && e.Token != nil {
			best, found = max(best, *e.Token), true
		}
	}
	return best, found
}

func describeLostUpdate(key string, a, b *section) (*Counterexample, string) {
	if a.read.Completion.Index > b.read.Completion.Index {
		a, b = b, a
	}
	evs := append(a.events(), b.events()...)
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	var first, short string
	switch a.noun {
	case "stock":
		soldA, soldB := a.from.num-a.to.num, b.from.num-b.to.num
		first = fmt.Sprintf("Oversold %q: %s and %s both saw a stock of %s and both sales were applied: %d items sold from a stock of %s.",
			key, a.who(), b.who(), a.from, soldA+soldB, a.from)
		short = fmt.Sprintf("oversold (%d items sold from a stock of %s)", soldA+soldB, a.from)
	case "list":
		first = fmt.Sprintf("Lost append on %q: %s and %s both read %s and both appends were applied; one of the elements is lost.",
			key, a.who(), b.who(), a.from)
		short = fmt.Sprintf("lost append (%s and %s both appended to %s)", a.who(), b.who(), a.from)
	default:
		first = fmt.Sprintf("Lost update on %q: %s and %s both read %s and both writes were applied.", key, a.who(), b.who(), a.from)
		short = fmt.Sprintf("lost update (%s and %s both read %s and both wrote)", a.who(), b.who(), a.from)
	}
	return &Counterexample{
		Explanation: []string{
			first,
			"First:  " + a.String() + ".",
			"Second: " + b.String() + ".",
			"Had the sections run one after the other, the later one would have read what the earlier one wrote.",
		},
		Events: evs,
	}, short
}

// explainStuck explains an illegal batch by the section Porcupine could not
// place after the longest consistent order.
func (c CriticalSections) explainStuck(key string, spec searchSpec, an analysis) (*Counterexample, string) {
	if an.stuck == nil {
		return &Counterexample{Explanation: []string{fmt.Sprintf("No order of the critical sections on %q as if each ran alone explains what the clients read.", key)}},
			"no order of them as if each ran alone explains what the clients read"
	}
	stuck := an.stuck.Input.(*secStep)
	state := spec.model.DescribeState(an.state)
	lines := []string{fmt.Sprintf("On %q, the longest consistent order of these %d operations places %d and leaves the %s.",
		key, an.total, len(an.placed), state)}
	if n := len(an.placed); n > 0 {
		if last, ok := an.placed[n-1].Input.(*secStep); ok {
			lines = append(lines, "Last placed: "+last.describe()+".")
		}
	}
	lines = append(lines, "Cannot follow: "+stuck.describe()+".")
	evs := stuck.sec.events()
	for _, o := range an.concurrent {
		if in, ok := o.Input.(*secStep); ok && in.sec != stuck.sec {
			lines = append(lines, "Concurrent: "+in.describe()+".")
			evs = append(evs, in.sec.events()...)
		}
	}
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	evs = slices.CompactFunc(evs, func(x, y history.Event) bool { return x.Index == y.Index })
	short := fmt.Sprintf("%s read %s, which no order of the sections explains (the %s)", stuck.sec.who(), stuck.from, state)
	if stuck.kind == stepOverwrite || stuck.kind == stepBlindAppend {
		short = fmt.Sprintf("%s's write cannot be placed (the %s)", stuck.sec.who(), state)
	}
	return &Counterexample{Explanation: lines, Events: evs}, short
}
