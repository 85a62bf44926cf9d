package models

import (
	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
)

// PorcupineModel is implemented by the checks that are Porcupine models
// (critical-sections, fencing-tokens, lease, mutex), so that other tools can
// run the models on a history with Porcupine directly.
type PorcupineModel interface {
	Check
	// Porcupine returns the model, partitioned by key (keys sorted), and the
	// history as Porcupine operations. Each partition starts with an operation
	// that sets the key's initial state; an operation of unknown outcome
	// returns after every other one. porcupine.CheckOperations on them is the
	// whole-history search, without the check's batches and budget.
	Porcupine(events []history.Event) (porcupine.Model, []porcupine.Operation)
}

// partitioned is what a key's operations look like to the whole-history view.
type partitioned struct {
	key   string
	start any
	ops   []linOp
}

// wholeHistory builds the Porcupine view of partitions searched with model.
func wholeHistory(model porcupine.Model, parts []partitioned) (porcupine.Model, []porcupine.Operation) {
	var out []porcupine.Operation
	end := int64(0)
	for _, p := range parts {
		for _, o := range p.ops {
			end = max(end, o.call+1, o.ret+1)
		}
	}
	for _, p := range parts {
		out = append(out, porcupine.Operation{Input: startOp{state: p.start, key: p.key}, Call: -2, Return: -1})
		for _, o := range p.ops {
			ret := o.ret
			if o.open {
				ret = end
			}
			out = append(out, porcupine.Operation{ClientId: o.client, Input: keyed{key: p.key, input: o.input}, Call: o.call, Return: ret})
		}
	}
	step, describe := model.Step, model.DescribeOperation
	model.StepContext = nil // Porcupine would call it instead of Step
	model.Step = func(state, input, output any) (bool, any) {
		if k, ok := input.(keyed); ok {
			input = k.input
		}
		return step(state, input, output)
	}
	model.DescribeOperation = func(input, output any) string {
		if k, ok := input.(keyed); ok {
			input = k.input
		}
		return describe(input, output)
	}
	model.Partition = func(ops []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		for _, o := range ops {
			by[partitionOf(o.Input)] = append(by[partitionOf(o.Input)], o)
		}
		var parts [][]porcupine.Operation
		for _, k := range sortedKeys(by) {
			parts = append(parts, by[k])
		}
		return parts
	}
	return model, out
}

// keyed is an operation's input with its partition.
type keyed struct {
	key   string
	input any
}

func partitionOf(input any) string {
	switch in := input.(type) {
	case keyed:
		return in.key
	case startOp:
		return in.key
	}
	return ""
}

// Porcupine is the register model of each key's critical sections.
func (c CriticalSections) Porcupine(events []history.Event) (porcupine.Model, []porcupine.Operation) {
	secs, _ := extractSections(completed(events).Ops(), newInterner())
	byKey := map[string][]*section{}
	for i := range secs {
		secs[i].noun = c.noun(secs[i].list)
		byKey[secs[i].key] = append(byKey[secs[i].key], &secs[i])
	}
	var parts []partitioned
	for _, k := range sortedKeys(byKey) {
		list := false
		var ops []linOp
		for _, s := range byKey[k] {
			list = list || s.list
			ops = append(ops, s.linOps()...)
		}
		parts = append(parts, partitioned{key: k, start: c.initial(k, list), ops: ops})
	}
	return wholeHistory(registerModel(c.noun(false), false), parts)
}

// Porcupine is the token model of each key's grants (and, when the storage
// fences, of each key's accepted tokens).
func (c FencingTokens) Porcupine(events []history.Event) (porcupine.Model, []porcupine.Operation) {
	h := completed(events)
	parts := tokenParts("grants", grantsByKey(h))
	if c.StorageFenced {
		parts = append(parts, tokenParts("storage", c.acceptedByKey(h))...)
	}
	return wholeHistory(tokenModel("granted or accepted"), parts)
}

func tokenParts(part string, byKey map[string][]tokenOp) []partitioned {
	var out []partitioned
	for _, k := range sortedKeys(byKey) {
		out = append(out, partitioned{key: part + " " + k, start: tokenState{}, ops: tokenLinOps(byKey[k])})
	}
	return out
}

// Porcupine is the lock model of each key's grants and releases.
func (c LockService) Porcupine(events []history.Event) (porcupine.Model, []porcupine.Operation) {
	byKey := c.opsByKey(completed(events))
	var parts []partitioned
	var all [][]linOp
	base := int32(0) // the owners are numbered across the keys: one model names them all
	for _, k := range sortedKeys(byKey) {
		ops := c.lockOps(byKey[k])
		owners := int32(0)
		for _, o := range ops {
			in := o.input.(*lockStep)
			owners = max(owners, in.ownerID+1)
			in.ownerID += base
		}
		base += owners
		all = append(all, ops)
		parts = append(parts, partitioned{key: k, start: []any{lockState{}}, ops: ops})
	}
	return wholeHistory(c.model(false, holderNames(all...)), parts)
}
