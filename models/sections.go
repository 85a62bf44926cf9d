package models

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
)

// CriticalSections is the critical-section atomicity check for a counter
// resource (the fenced-counter workload): every (read v, write v') a client made
// under one lock grant is one operation on the counter, and the operations must
// be linearizable.
type CriticalSections struct {
	// Budget bounds Porcupine's search per key; 0 means no bound. When the
	// budget runs out the verdict is unknown: such a result depends on the
	// budget (and the machine), every other result does not.
	Budget time.Duration
	// Initial is the counter's value before the history; nil means unknown
	// (any value is accepted as the first state). Default in the simulator: 0.
	Initial *int64
	// InitialByKey overrides Initial for the keys it names.
	InitialByKey map[string]int64
}

// Name is "critical-sections".
func (CriticalSections) Name() string { return "critical-sections" }

// sectionKind is what the write of a section did.
type sectionKind int

const (
	readOnly sectionKind = iota // no write followed the read
	applied                     // the write was acknowledged
	rejected                    // the storage refused the write (fencing): no effect
	unsure                      // the write's outcome is unknown: it may or may not have taken effect
)

func (k sectionKind) String() string {
	return [...]string{"no write", "write applied", "write rejected", "write outcome unknown"}[k]
}

// section is one critical section: a successful read and the write after it.
type section struct {
	key   string
	read  op
	write *op
	kind  sectionKind
	value int64 // read
	wrote int64 // written (applied or unsure)
}

func (s section) call() int64 { return int64(s.read.inv.Index) }

func (s section) ret() int64 {
	switch {
	case s.write == nil:
		return int64(s.read.comp.Index)
	default:
		return s.write.returnIndex()
	}
}

func (s section) events() []history.Event {
	out := []history.Event{s.read.inv, *s.read.comp}
	if s.write != nil {
		out = append(out, s.write.inv)
		if s.write.comp != nil {
			out = append(out, *s.write.comp)
		}
	}
	return out
}

func (s section) String() string {
	who := s.read.inv.Node
	if who == "" {
		who = fmt.Sprintf("p%d", s.read.inv.Process)
	}
	txt := fmt.Sprintf("%s read %d at %s", who, s.value, history.FormatTime(s.read.comp.Time))
	if s.read.inv.Token != nil {
		txt += fmt.Sprintf(" (token %d)", *s.read.inv.Token)
	}
	if s.write != nil {
		txt += fmt.Sprintf(", wrote %d at %s: %s", s.wrote, history.FormatTime(s.write.inv.Time), s.kind)
	}
	return txt
}

// sections extracts the critical sections from a history: every successful
// read, together with the write the same process invoked next on the same key
// (if its next operation is such a write).
func sections(events []history.Event) []section {
	var out []section
	pending := map[int]int{} // process -> index in out of its section awaiting a write
	for _, o := range pairOps(events) {
		p := o.inv.Process
		j, has := pending[p]
		delete(pending, p)
		switch {
		case o.inv.F == history.FRead && o.outcome() == history.OK && o.comp.Value != nil:
			out = append(out, section{key: o.inv.Key, read: o, value: *o.comp.Value})
			pending[p] = len(out) - 1
		case o.inv.F == history.FWrite && has && out[j].key == o.inv.Key && o.inv.Value != nil:
			s := &out[j]
			w := o
			s.write, s.wrote = &w, *o.inv.Value
			switch o.outcome() {
			case history.OK:
				s.kind = applied
			case history.Fail:
				s.kind = rejected
			default:
				s.kind = unsure
			}
		}
	}
	return out
}

// counterState is the set of values the counter may hold (more than one only
// after writes of unknown outcome); any means every value is possible.
type counterState struct {
	any  bool
	vals []int64
}

var counterModel = porcupine.Model{
	Step: func(state, input, output any) (bool, any) {
		s, in := state.(counterState), input.(section)
		if !s.any && !slices.Contains(s.vals, in.value) {
			return false, state
		}
		switch in.kind {
		case applied:
			return true, counterState{vals: []int64{in.wrote}}
		case unsure:
			vals := []int64{in.value, in.wrote}
			slices.Sort(vals)
			return true, counterState{vals: slices.Compact(vals)}
		default:
			return true, counterState{vals: []int64{in.value}}
		}
	},
	Equal: func(a, b any) bool {
		x, y := a.(counterState), b.(counterState)
		return x.any == y.any && slices.Equal(x.vals, y.vals)
	},
	Hash: func(state any) uint64 {
		s := state.(counterState)
		h := fnv.New64a()
		if s.any {
			h.Write([]byte{1})
		}
		for _, v := range s.vals {
			h.Write([]byte(fmt.Sprint(v, ",")))
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string { return input.(section).String() },
	DescribeState: func(state any) string {
		s := state.(counterState)
		if s.any {
			return "any"
		}
		return fmt.Sprint(s.vals)
	},
}

// Check runs Porcupine per key (keys sorted) and merges the results.
func (c CriticalSections) Check(events []history.Event) Verdict {
	secs := sections(events)
	if len(secs) == 0 {
		return Verdict{Result: Unknown, Reason: "no critical sections (no successful read under a lock) in the history"}
	}
	byKey := map[string][]section{}
	for _, s := range secs {
		byKey[s.key] = append(byKey[s.key], s)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	stats := map[string]float64{"sections": float64(len(secs)), "keys": float64(len(keys))}
	for _, s := range secs {
		stats[strings.ReplaceAll(s.kind.String(), " ", "-")]++
	}
	var unknownKeys []string
	for _, k := range keys {
		model := counterModel
		model.Init = func() any {
			if v, ok := c.InitialByKey[k]; ok {
				return counterState{vals: []int64{v}}
			}
			if c.Initial == nil {
				return counterState{any: true}
			}
			return counterState{vals: []int64{*c.Initial}}
		}
		ops := make([]porcupine.Operation, len(byKey[k]))
		for i, s := range byKey[k] {
			ops[i] = porcupine.Operation{ClientId: s.read.inv.Process, Input: s, Call: s.call(), Return: s.ret()}
		}
		res, info := porcupine.CheckOperationsVerbose(model, ops, c.Budget)
		switch res {
		case porcupine.Illegal:
			return Verdict{Result: Invalid, Stats: stats,
				Reason:         fmt.Sprintf("the critical sections on %q are not atomic: no order of them as if each ran alone explains what the clients read", k),
				Counterexample: explainSections(model, k, byKey[k], info)}
		case porcupine.Unknown:
			unknownKeys = append(unknownKeys, k)
		}
	}
	if len(unknownKeys) > 0 {
		return Verdict{Result: Unknown, Stats: stats,
			Reason: fmt.Sprintf("the linearizability search on %v ran out of its %v budget (this result depends on the budget)", unknownKeys, c.Budget)}
	}
	return Verdict{Result: Valid, Stats: stats,
		Reason: fmt.Sprintf("%d critical sections on %d keys are linearizable", len(secs), len(keys))}
}

// explainSections builds the counterexample of an illegal key: a lost update
// (two applied sections that read the same value) when there is one, otherwise
// the section that the longest consistent order cannot place.
func explainSections(model porcupine.Model, key string, secs []section, info porcupine.LinearizationInfo) *Counterexample {
	for i := range secs {
		for j := i + 1; j < len(secs); j++ {
			a, b := secs[i], secs[j]
			if a.kind == applied && b.kind == applied && a.value == b.value {
				first, second := a, b
				if cmp.Compare(first.write.comp.Index, second.write.comp.Index) > 0 {
					first, second = second, first
				}
				evs := append(first.events(), second.events()...)
				slices.SortFunc(evs, func(x, y history.Event) int { return cmp.Compare(x.Index, y.Index) })
				return &Counterexample{
					Explanation: []string{
						fmt.Sprintf("Lost update on %q: two critical sections read the same value %d and both writes were applied.", key, a.value),
						"First:  " + first.String() + ".",
						"Second: " + second.String() + ".",
						"If each section had run alone, the second would have read the first one's write.",
					},
					Events: evs,
				}
			}
		}
	}
	longest := []porcupine.Operation{}
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	placed := map[int64]bool{}
	state := model.Init()
	for _, o := range longest {
		placed[o.Call] = true
		_, state = model.Step(state, o.Input, o.Output)
	}
	var stuck *section
	for i := range secs {
		if !placed[secs[i].call()] && (stuck == nil || secs[i].call() < stuck.call()) {
			stuck = &secs[i]
		}
	}
	if stuck == nil {
		return &Counterexample{Explanation: []string{fmt.Sprintf("Porcupine found no linearization of the %d sections on %q.", len(secs), key)}}
	}
	return &Counterexample{
		Explanation: []string{
			fmt.Sprintf("On %q, the longest order of critical sections that is consistent places %d of %d sections and leaves the counter at %s.",
				key, len(longest), len(secs), model.DescribeState(state)),
			fmt.Sprintf("The next section cannot follow: %s.", stuck.String()),
		},
		Events: stuck.events(),
	}
}
