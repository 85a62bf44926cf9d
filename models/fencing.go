package models

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
)

// FencingTokens checks that fencing tokens can do their job:
//
//   - grants: the lock service issues strictly increasing tokens in the
//     real-time order of its grants, per key (a reentrant acquire that returns
//     the holder's own token again is the same grant);
//   - storage (when the storage fences): the storage never accepts a token
//     lower than one it already accepted, per key.
//
// Both are Porcupine models over operation intervals. An acquire of unknown
// outcome granted no token anyone saw, and a write of unknown outcome can only
// have raised the storage's highest token, so leaving both out is exact.
type FencingTokens struct {
	// Budget bounds the search. Default: DefaultSteps per key.
	Budget Budget
	// StorageFenced: the storage fences writes with the tokens, so its
	// accepted writes are checked too, and the check applies by default.
	// Default false: nothing relies on the tokens.
	StorageFenced bool
	// ReadsFenced: the storage fences reads too (their tokens count as
	// accepted).
	ReadsFenced bool
}

// Name is "fencing-tokens".
func (FencingTokens) Name() string { return "fencing-tokens" }

// Applies reports whether grants carry tokens and the storage relies on them.
func (c FencingTokens) Applies(events []history.Event) (bool, string) {
	return c.appliesPaired(history.PairRecorded(events))
}

// appliesPaired is Applies from what pairing counted.
func (c FencingTokens) appliesPaired(h *history.Paired) (bool, string) {
	if h.Acquired().Tokened == 0 {
		return false, "the lock grants no fencing tokens"
	}
	if !c.StorageFenced {
		return false, "the storage does not fence, so nothing relies on the tokens (name the check to judge them anyway)"
	}
	return true, ""
}

// tokenOp is a grant of a token or its acceptance by the storage.
type tokenOp struct {
	token  uint64
	o      op
	strict bool // grants must increase strictly; accepted tokens may repeat
	// after is the model's state after the operation (see tokenModel).
	after tokenState
}

func (t tokenOp) who() string {
	if t.o.Invoke.Node != "" {
		return t.o.Invoke.Node
	}
	return fmt.Sprintf("p%d", t.o.Invoke.Process)
}

func (t tokenOp) String() string {
	if t.strict {
		return fmt.Sprintf("%s was granted token %d at %s (acquire invoked at %s)", t.who(), t.token,
			history.FormatTime(t.o.Completion.Time), history.FormatTime(t.o.Invoke.Time))
	}
	return fmt.Sprintf("the storage accepted %s's %s with token %d at %s", t.who(), t.o.Func(), t.token, history.FormatTime(t.o.Completion.Time))
}

// tokenState is the highest token so far (seen: any token at all).
type tokenState struct {
	seen bool
	last uint64
}

func tokenModel(what string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return tokenState{} },
		Step: func(state, input, _ any) (bool, any) {
			if s, ok := input.(startOp); ok {
				return true, s.state
			}
			s, in := tokenOf(state), input.(*tokenOp)
			ok := !s.seen || in.token > s.last || (!in.strict && in.token == s.last)
			in.after = tokenState{seen: true, last: in.token}
			return ok, &in.after
		},
		// The state after an operation lives in the operation (a pointer to
		// it allocates nothing): states compare by value.
		Equal: func(a, b any) bool { return tokenOf(a) == tokenOf(b) },
		Hash: func(state any) uint64 {
			s := tokenOf(state)
			if !s.seen {
				return 0
			}
			return mix(1, s.last)
		},
		DescribeOperation: func(input, _ any) string {
			if s, ok := input.(startOp); ok {
				return "before: " + describeToken(what, s.state.(tokenState))
			}
			return input.(*tokenOp).String()
		},
		DescribeState: func(state any) string { return describeToken(what, tokenOf(state)) },
	}
}

// tokenOf is the token state of a model state: a *tokenState (what steps
// make) or a tokenState (what Init and a start operation carry).
func tokenOf(state any) tokenState {
	if p, ok := state.(*tokenState); ok {
		return *p
	}
	return state.(tokenState)
}

func describeToken(what string, s tokenState) string {
	if !s.seen {
		return "no token " + what + " yet"
	}
	return fmt.Sprintf("highest token %s: %d", what, s.last)
}

// tokenSpec: tokens must rise along any legal order, so an operation with a
// lower token than x precedes it and one with a higher token follows it (equal
// tokens: the state after the batch is the same either way, or the history is
// illegal either way).
func tokenSpec(what string) searchSpec {
	return searchSpec{
		model: tokenModel(what),
		settle: func(_ any, _ []linOp, last linOp) any {
			return tokenState{seen: true, last: last.input.(*tokenOp).token}
		},
		order: func(x, y linOp) int {
			if y.input.(*tokenOp).token > x.input.(*tokenOp).token {
				return 1
			}
			return -1
		},
	}
}

// grantsByKey are the distinct grants with a token, per lock key.
func grantsByKey(h *history.Paired) map[string][]tokenOp {
	type grantID struct {
		key, holder string
		token       uint64
	}
	n := h.OpsOf(history.FAcquire) // at most one grant each
	all := make([]tokenOp, 0, n)
	seen := make(map[grantID]bool, n)
	for _, o := range h.Ops() {
		if o.Func() != history.FAcquire || o.Outcome() != history.OK || o.Completion.Token == nil {
			continue
		}
		id := grantID{o.Invoke.Key, holderOf(o.Completion), *o.Completion.Token}
		if seen[id] {
			continue // a reentrant acquire returning the holder's own token
		}
		seen[id] = true
		all = append(all, tokenOp{token: *o.Completion.Token, o: o, strict: true})
	}
	return tokenOpsByKey(all)
}

// tokenOpsByKey groups token operations by key, in order, each group
// allocated at its size (one key: all of them as they are).
func tokenOpsByKey(all []tokenOp) map[string][]tokenOp {
	if len(all) == 0 {
		return map[string][]tokenOp{}
	}
	key0 := all[0].o.Invoke.Key
	if !slices.ContainsFunc(all, func(t tokenOp) bool { return t.o.Invoke.Key != key0 }) {
		return map[string][]tokenOp{key0: all}
	}
	counts := map[string]int{}
	for i := range all {
		counts[all[i].o.Invoke.Key]++
	}
	out := make(map[string][]tokenOp, len(counts))
	for i := range all {
		k := all[i].o.Invoke.Key
		g, ok := out[k]
		if !ok {
			g = make([]tokenOp, 0, counts[k])
		}
		out[k] = append(g, all[i])
	}
	return out
}

// acceptedByKey are the storage operations accepted with a token, per key.
func (c FencingTokens) acceptedByKey(h *history.Paired) map[string][]tokenOp {
	n := h.OpsOf(history.FWrite) + h.OpsOf(history.FAppend) // at most one each
	if c.ReadsFenced {
		n += h.OpsOf(history.FRead)
	}
	all := make([]tokenOp, 0, n)
	for _, o := range h.Ops() {
		fenced := o.Func() == history.FWrite || o.Func() == history.FAppend || (c.ReadsFenced && o.Func() == history.FRead)
		if fenced && o.Outcome() == history.OK && o.Invoke.Token != nil {
			all = append(all, tokenOp{token: *o.Invoke.Token, o: o})
		}
	}
	return tokenOpsByKey(all)
}

// tokenLinOps are the search operations of token operations.
func tokenLinOps(tops []tokenOp) []linOp {
	lops := make([]linOp, len(tops))
	for i := range tops {
		t := &tops[i]
		lops[i] = linOp{call: int64(t.o.Invoke.Index), ret: int64(t.o.Completion.Index), forcing: true, client: t.o.Invoke.Process, input: t}
	}
	return lops
}

// Check judges the grants and, when the storage fences, the accepted tokens.
func (c FencingTokens) Check(events []history.Event) Verdict {
	return c.checkPaired(completed(events))
}

func (c FencingTokens) checkPaired(h *history.Paired) Verdict {
	grants := grantsByKey(h)
	if len(grants) == 0 {
		return Verdict{Result: Unknown, Reason: "no acquire was granted a fencing token: nothing to check"}
	}
	parts := []struct {
		name, what string
		byKey      map[string][]tokenOp
	}{{"grants", "granted", grants}}
	if c.StorageFenced {
		parts = append(parts, struct {
			name, what string
			byKey      map[string][]tokenOp
		}{"storage", "accepted", c.acceptedByKey(h)})
	}
	stats := map[string]float64{}
	var unknown undecided
	for _, part := range parts {
		for _, k := range sortedKeys(part.byKey) {
			tops := part.byKey[k]
			stats[part.name] += float64(len(tops))
			lops := tokenLinOps(tops)
			spec := tokenSpec(part.what)
			out := search(spec, tokenState{}, lops, c.Budget)
			stats["search-steps"] += float64(out.steps)
			switch out.result {
			case Invalid:
				return c.invalid(h.Recorded(), k, tops, spec, out, stats)
			case Unknown:
				unknown.add(fmt.Sprintf("%s on %q", part.name, k), out, c.Budget)
			}
		}
	}
	if v, ok := unknown.verdict(stats); ok {
		return v
	}
	reason := fmt.Sprintf("%s: tokens increase with every grant", history.Plural(int(stats["grants"]), "grant", ""))
	if c.StorageFenced {
		reason += fmt.Sprintf("; the storage never accepted a lower token after a higher one (%d accepted)", int(stats["storage"]))
	} else {
		reason += " (the storage was not judged: it does not fence)"
	}
	return Verdict{Result: Valid, Stats: stats, Reason: reason}
}

func (c FencingTokens) invalid(events []history.Event, key string, tops []tokenOp, spec searchSpec, out keyOutcome, stats map[string]float64) Verdict {
	a, b := tokenInversion(tops)
	var cx *Counterexample
	var short string
	switch {
	case a == nil:
		cx = &Counterexample{Explanation: []string{fmt.Sprintf("No order of the tokens on %q consistent with real time increases.", key)}}
		short = "no order of the tokens consistent with real time increases"
	case b.strict && a.token == b.token:
		short = fmt.Sprintf("%s and %s were both granted token %d", a.who(), b.who(), a.token)
		cx = &Counterexample{Explanation: []string{
			fmt.Sprintf("Two grants of %q carry the same token %d: a storage fencing with it cannot tell the holders apart.", key, a.token),
			"First:  " + a.String() + ".", "Second: " + b.String() + "."}}
	case b.strict:
		short = fmt.Sprintf("token went backwards: %d after %d", b.token, a.token)
		cx = &Counterexample{Explanation: []string{
			fmt.Sprintf("The tokens of %q went backwards: a later grant got a lower token, so a storage fencing with them would reject the new holder and accept the old one.", key),
			"First:  " + a.String() + ".", "Then:   " + b.String() + ", after the first grant returned."}}
	default:
		short = fmt.Sprintf("the storage accepted token %d after token %d", b.token, a.token)
		cx = &Counterexample{Explanation: []string{
			fmt.Sprintf("The storage accepted a stale token on %q: fencing let an old holder through.", key),
			"First:  " + a.String() + ".", "Then:   " + b.String() + "."}}
	}
	if a != nil {
		cx.Events = append(opEvents(a.o), opEvents(b.o)...)
		slices.SortFunc(cx.Events, func(x, y history.Event) int { return x.Index - y.Index })
	}
	return Verdict{Result: Invalid, Stats: stats, Counterexample: withFaults(cx, events),
		Reason:        fmt.Sprintf("fencing tokens on %q: %s", key, short),
		Visualization: visualize(spec, out.start, out.batch, c.Budget, events, nil)}
}

// tokenInversion finds the earliest pair of operations that no order can
// make increase: a precedes b in real time with a token that b does not
// exceed (does not reach, for accepted tokens), or two distinct grants with
// the same token. It sweeps the operations by invocation, keeping the highest
// token among those that returned.
func tokenInversion(tops []tokenOp) (*tokenOp, *tokenOp) {
	byCall := slices.Clone(tops)
	slices.SortFunc(byCall, func(x, y tokenOp) int { return cmp.Compare(x.o.Invoke.Index, y.o.Invoke.Index) })
	byRet := slices.Clone(tops)
	slices.SortFunc(byRet, func(x, y tokenOp) int { return cmp.Compare(x.o.Completion.Index, y.o.Completion.Index) })
	var best *tokenOp
	sameToken := map[uint64]*tokenOp{}
	r := 0
	for i := range byCall {
		b := &byCall[i]
		for r < len(byRet) && byRet[r].o.Completion.Index < b.o.Invoke.Index {
			if best == nil || byRet[r].token > best.token {
				best = &byRet[r]
			}
			r++
		}
		if best != nil && (best.token > b.token || (b.strict && best.token == b.token)) {
			return best, b
		}
		if b.strict {
			if a := sameToken[b.token]; a != nil {
				return a, b
			}
			sameToken[b.token] = b
		}
	}
	return nil, nil
}

// opEvents are the events of an operation: its invoke and its completion.
func opEvents(o op) []history.Event {
	out := []history.Event{*o.Invoke}
	if o.Completion != nil {
		out = append(out, *o.Completion)
	}
	return out
}

// holderOf identifies the acquirer of an acquire or release event: its owner,
// or its node when the recorder gave no owner.
func holderOf(e *history.Event) string {
	if e.Owner != "" {
		return e.Owner
	}
	if e.Node != "" {
		return "node " + e.Node
	}
	return fmt.Sprintf("process %d", e.Process)
}
