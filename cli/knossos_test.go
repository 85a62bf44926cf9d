package cli

import (
	"math"
	"strings"

	"github.com/locklab/locklab/history"
)

// knossosMutex judges a Jepsen lock history read by history.ReadJepsen as
// Knossos's mutex model does, so that the tests can say which verdict
// Knossos gives, computed rather than claimed. The model is one bit, locked
// or free: :acquire is legal only when free, :release only when locked,
// whoever asks (it knows no owners). The search is Knossos's: the history's
// order is the order in time (an operation precedes another when its
// completion comes before the other's invocation in the history), an
// operation that failed never happened, and one of unknown outcome (:info,
// or no completion) may take effect at any point after its invocation, or
// never. It reports whether some order of the operations is legal: a plain
// search, small histories only.
func knossosMutex(events []history.Event) bool {
	type kop struct {
		acquire   bool
		call, ret int // places in the history; ret MaxInt: unknown outcome
	}
	var ops []kop
	open := map[int]int{} // process -> its operation in ops
	for i, e := range events {
		if e.F != history.FAcquire && e.F != history.FRelease {
			continue
		}
		switch e.Type {
		case history.Invoke:
			open[e.Process] = len(ops)
			ops = append(ops, kop{acquire: e.F == history.FAcquire, call: i, ret: math.MaxInt})
		case history.OK:
			ops[open[e.Process]].ret = i
			delete(open, e.Process)
		case history.Fail:
			ops[open[e.Process]].call = -1 // never happened
			delete(open, e.Process)
		case history.Info:
			delete(open, e.Process)
		}
	}
	done := make([]bool, len(ops))
	seen := map[string]bool{}
	var search func(locked bool) bool
	search = func(locked bool) bool {
		var key strings.Builder
		key.WriteByte(map[bool]byte{true: 'L', false: 'F'}[locked])
		// The earliest completion of the operations left that must happen.
		first, left := math.MaxInt, false
		for i, o := range ops {
			if o.call >= 0 && !done[i] {
				key.WriteByte('0')
				if o.ret != math.MaxInt {
					first, left = min(first, o.ret), true
				}
			} else {
				key.WriteByte('1')
			}
		}
		if !left {
			return true // what is left may never happen
		}
		if seen[key.String()] {
			return false
		}
		seen[key.String()] = true
		for i, o := range ops {
			// Next may be any operation called before the first completion
			// of those left.
			if o.call < 0 || done[i] || o.call > first || o.acquire == locked {
				continue
			}
			done[i] = true
			ok := search(o.acquire)
			done[i] = false
			if ok {
				return true
			}
		}
		return false
	}
	return search(false)
}
