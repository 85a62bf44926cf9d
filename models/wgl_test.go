package models

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// porcupineSearch is search with Porcupine itself deciding each batch (what
// search did before wgl): the reference wgl must match step for step.
func porcupineSearch(spec searchSpec, start any, ops []linOp, b Budget) keyOutcome {
	counter := &stepCounter{limit: b.stepLimit()}
	model := counter.wrap(spec.model)
	state := start
	out := keyOutcome{result: Valid}
	for _, bt := range cutBatches(sortedByCall(ops), spec.order) {
		out.batches++
		res := porcupine.CheckOperationsTimeout(model, porcupineOps(state, bt.ops), 0)
		out.steps = counter.n.Load()
		switch {
		case counter.exhausted.Load():
			return exhaustedOutcome(out, counter, "steps")
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

// sortedByCall sorts a copy of ops by call, as search does.
func sortedByCall(ops []linOp) []linOp {
	out := slices.Clone(ops)
	slices.SortStableFunc(out, func(x, y linOp) int { return cmp.Compare(x.call, y.call) })
	return out
}

// TestWGLIsPorcupine: the search takes exactly Porcupine's steps and
// reaches its results, batch by batch, on thousands of random histories of
// critical sections and of locks (with and without leases), whole and cut
// into batches, with and without a step budget that runs out.
func TestWGLIsPorcupine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	counts := map[string]int{}
	compare := func(name string, spec func(ops []linOp) searchSpec, start any, ops []linOp, events []history.Event) {
		for _, target := range []int{1, 4, 1 << 30} {
			for _, b := range []Budget{{Steps: -1}, {Steps: 1 + int64(r.IntN(60))}} {
				var got, want keyOutcome
				withBatches(target, func() {
					want = porcupineSearch(spec(ops), start, ops, b)
					got = search(spec(ops), start, append([]linOp(nil), ops...), b)
				})
				require.Equal(t, want.result, got.result, "%s, batches of %d, %v:\n%s", name, target, b, dump(events))
				require.Equal(t, want.steps, got.steps, "%s, batches of %d, %v:\n%s", name, target, b, dump(events))
				require.Equal(t, want.batches, got.batches, name)
				require.Equal(t, want.exhausted, got.exhausted, name)
				counts[fmt.Sprintf("%s %s %s", name, got.result, got.exhausted)]++
			}
		}
	}
	for i := range 500 {
		events := counterHistory(r, 1+r.IntN(4), 10+r.IntN(60))
		secs, _ := extractSections(history.PairRecorded(events).Ops(), newInterner())
		var ops []linOp
		for j := range secs {
			ops = append(ops, secs[j].linOps()...)
		}
		initial := regState{vals: values{number(0)}}
		if i%3 == 0 {
			initial = regState{any: true}
		}
		compare("sections", func(ops []linOp) searchSpec { return sectionSpec("counter", ops) }, initial, ops, events)
	}
	for i := range 500 {
		leases := i%2 == 0
		events := lockHistory(r, 1+r.IntN(4), 10+r.IntN(60), leases)
		c := LockService{Leases: leases}
		ops := c.lockOps(c.opsByKey(history.PairRecorded(events))["k"])
		compare(c.Name(), c.spec, []any{lockState{}}, ops, events)
	}
	t.Logf("outcomes: %v", counts)
	for _, k := range []string{"sections valid ", "sections invalid ", "sections unknown steps", "lease valid ", "lease invalid ",
		"mutex valid ", "mutex invalid ", "lease unknown steps"} {
		assert.Greater(t, counts[k], 50, k)
	}
}
