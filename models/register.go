package models

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"
)

// regState is what the protected resource may hold at a point of a
// linearization of critical sections.
//
// A write of unknown outcome may land at any time after it was invoked, or
// never; as a network may deliver it late or twice, it may even land more
// than once. Such a write is a rule "whenever the resource holds from, it may
// come to hold to", and the state keeps every rule that may still fire: vals
// is always closed under rules. The model is therefore monotone (more possible
// values never make a later operation illegal), which lets a search place
// these writes greedily and lets the state be carried across cuts.
type regState struct {
	// any: every value is possible (the initial value is unknown and nothing
	// has been read since).
	any bool
	// vals are the possible values.
	vals values
	// rules are the writes of unknown outcome that may still land.
	rules *ruleNode
}

// rule is a write of unknown outcome: from -> to (from any value, for a write
// that was not preceded by a read).
type rule struct {
	anyFrom  bool
	from, to value
}

// ruleNode is an immutable list of rules, newest first.
type ruleNode struct {
	rule
	next *ruleNode
	n    int
}

func (r *ruleNode) push(x rule) *ruleNode {
	n := 1
	if r != nil {
		n = r.n + 1
	}
	return &ruleNode{rule: x, next: r, n: n}
}

func (r *ruleNode) len() int {
	if r == nil {
		return 0
	}
	return r.n
}

func (r *ruleNode) slice() []rule {
	var out []rule
	for ; r != nil; r = r.next {
		out = append(out, r.rule)
	}
	// oldest first
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func rulesOf(rs []rule) *ruleNode {
	var out *ruleNode
	for _, r := range rs {
		out = out.push(r)
	}
	return out
}

// closure adds to vals every value the rules can produce from it.
func closure(vals values, rules *ruleNode) values {
	for changed := rules != nil; changed; {
		changed = false
		for r := rules; r != nil; r = r.next {
			if (r.anyFrom || vals.has(r.from)) && !vals.has(r.to) {
				vals = vals.with(r.to)
				changed = true
			}
		}
	}
	return vals
}

func (s regState) holds(v value) bool { return s.any || s.vals.has(v) }

// become is the state after the resource was seen to hold, or set to, one of vs.
func (s regState) become(vs values) regState {
	return regState{vals: closure(vs, s.rules), rules: s.rules}
}

// secStepKind is what a critical-section operation does to the resource.
type secStepKind int

const (
	// stepObserve: the resource held from (a section without a write, a
	// section whose write was rejected, or the read of a section whose write
	// has an unknown outcome).
	stepObserve secStepKind = iota
	// stepUpdate: the resource held from and was set to to, atomically.
	stepUpdate
	// stepOverwrite: the resource was set to to (a write without a read).
	stepOverwrite
	// stepBlindAppend: x was appended to whatever list the resource held.
	stepBlindAppend
	// stepMaybe: a write of unknown outcome, from -> to, may land from now on.
	stepMaybe
	// stepMaybeAppend: x may have been appended (once) to whatever list the
	// resource held (an append of unknown outcome without a read).
	stepMaybeAppend
)

// secStep is the input of a critical-section operation.
type secStep struct {
	kind     secStepKind
	anyFrom  bool
	from, to value
	x        int64
	sec      *section
}

// sets returns {from} and {to}, which are the section's {from} and {to}:
// made once per section, they are shared by its steps and the states they
// make (sets are never changed in place).
func (in *secStep) sets() (from, to values) {
	s := in.sec
	if s == nil {
		return values{in.from}, values{in.to}
	}
	if s.fromSet == nil {
		both := values{s.from, s.to}
		s.fromSet, s.toSet = both[0:1:1], both[1:2:2]
	}
	return s.fromSet, s.toSet
}

// regOf is the register state of a model state: a *regState (what the
// model's steps make) or a regState (what Init and a start operation carry).
func regOf(state any) regState {
	if p, ok := state.(*regState); ok {
		return *p
	}
	return state.(regState)
}

// registerStep is the model's step.
func registerStep(state, input, _ any) (bool, any) {
	if s, ok := input.(startOp); ok {
		return true, s.state
	}
	return stepRegister(regOf(state), input.(*secStep))
}

// stepRegister is the step of the register model from st by in.
func stepRegister(st regState, in *secStep) (bool, regState) {
	switch in.kind {
	case stepObserve:
		from, _ := in.sets()
		return st.holds(in.from), st.become(from)
	case stepUpdate:
		_, to := in.sets()
		return st.holds(in.from), st.become(to)
	case stepOverwrite:
		_, to := in.sets()
		return true, st.become(to)
	case stepBlindAppend:
		if st.any {
			return true, st
		}
		next := make(values, 0, len(st.vals))
		for _, v := range st.vals {
			next = next.with(v.appended(in.x))
		}
		return true, st.become(next)
	case stepMaybe:
		rules := st.rules.push(rule{anyFrom: in.anyFrom, from: in.from, to: in.to})
		if st.any {
			return true, regState{any: true, rules: rules}
		}
		return true, regState{vals: closure(st.vals, rules), rules: rules}
	case stepMaybeAppend:
		if st.any {
			return true, st
		}
		next := st.vals
		for _, v := range st.vals {
			next = next.with(v.appended(in.x))
		}
		return true, regState{vals: closure(next, st.rules), rules: st.rules}
	}
	panic(fmt.Sprintf("unknown critical-section step %d", in.kind))
}

// registerModel is the Porcupine model of a resource called noun ("counter",
// "stock", "list"). Its steps make *regState; a buffered model carves them
// from blocks, so that a step allocates nothing of its own: one search at a
// time may use it (Porcupine's parallel partitions need an unbuffered one).
func registerModel(noun string, buffered bool) porcupine.Model {
	if buffered {
		return registerModelIn(noun, new(regStates))
	}
	return registerModelIn(noun, nil)
}

// regStates are the blocks the register states of searches are carved from;
// the searches of one check (one per key, one at a time) share them.
type regStates struct{ blocks blocks[regState] }

// keep returns s in the blocks (a new heap copy when b is nil).
func (b *regStates) keep(s regState) *regState {
	if b == nil {
		return &s
	}
	p := &b.blocks.carve(1)[0]
	*p = s
	return p
}

// registerModelIn is registerModel with its states carved from states (nil:
// unbuffered).
func registerModelIn(noun string, states *regStates) porcupine.Model {
	keep := states.keep
	return porcupine.Model{
		Init: func() any { return regState{any: true} },
		Step: func(state, input, _ any) (bool, any) {
			if s, ok := input.(startOp); ok {
				return true, s.state
			}
			ok, next := stepRegister(regOf(state), input.(*secStep))
			return ok, keep(next)
		},
		// States with the same operations linearized have the same rules, so
		// comparing the values is enough within a search.
		Equal: func(a, b any) bool {
			x, y := regOf(a), regOf(b)
			return x.any == y.any && x.vals.equal(y.vals)
		},
		Hash: func(state any) uint64 {
			s := regOf(state)
			if s.any {
				return 1
			}
			return s.vals.hash()
		},
		DescribeOperation: func(input, _ any) string {
			switch in := input.(type) {
			case startOp:
				return "before: " + describeRegister(noun, in.state.(regState))
			case *secStep:
				return in.describe()
			}
			return fmt.Sprint(input)
		},
		DescribeState: func(state any) string { return describeRegister(noun, regOf(state)) },
	}
}

func describeRegister(noun string, s regState) string {
	var b strings.Builder
	switch {
	case s.any:
		b.WriteString(noun + " = any value (unknown initial value)")
	case len(s.vals) == 1:
		b.WriteString(noun + " = " + s.vals[0].String())
	default:
		parts := make([]string, len(s.vals))
		for i, v := range s.vals.sorted() {
			parts[i] = v.String()
		}
		b.WriteString(noun + " is one of {" + strings.Join(parts, ", ") + "}")
	}
	if n := s.rules.len(); n > 0 {
		fmt.Fprintf(&b, "; %d write(s) of unknown outcome may still land", n)
	}
	return b.String()
}

func (in secStep) describe() string {
	s := in.sec.String()
	switch in.kind {
	case stepObserve:
		if in.sec.kind == unsure {
			return s + " [the read]"
		}
	case stepMaybe, stepMaybeAppend:
		return s + " [the write, which may land any time later or never]"
	}
	return s
}
