package models

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/internal/reuse"
)

// wgl is Porcupine's linearizability search (the Wing-Gong-Lowe algorithm
// with Lowe's memo, porcupine.CheckOperations on one partition) without its
// per-call costs: no goroutine, channel, context or timer per batch, and the
// entries, list nodes, memo and bitsets of one batch are reused by the next.
// It takes the same steps in the same order as Porcupine v1.3.1's
// checkSingle (the entries are sorted by sort.Sort with Porcupine's order,
// the list, memo and backtracking are the same), so the step counts, the
// budget and the results are Porcupine's; TestWGLIsPorcupine compares the
// two on thousands of histories. The verbose search for explanations and
// visualizations (analyze) still runs Porcupine itself.
type wgl struct {
	entries wglEntries
	nodes   []wglNode
	match   []int32
	rets    []int32
	packed  []uint64 // scratch of sortReturns
	// cache is the memo: its buckets are chains in cached, by hash.
	cache  map[uint64]int32
	cached []wglCached
	calls  []wglCall
	slab   []uint64
}

type wglEntry struct {
	value  any
	id     int
	time   int64
	isCall bool
}

// wglEntries sorts like Porcupine's byTime: by time, calls before returns
// at the same time; sort.Sort (not stable) makes the same moves on it.
type wglEntries []wglEntry

func (a wglEntries) Len() int      { return len(a) }
func (a wglEntries) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a wglEntries) Less(i, j int) bool {
	if a[i].time != a[j].time {
		return a[i].time < a[j].time
	}
	return a[i].isCall && !a[j].isCall
}

// wglNode is an entry in the doubly linked list of a search, by index in
// the list's nodes (node i+1 is entry i, node 0 the head; -1: none), so that
// the list holds no pointers.
type wglNode struct {
	match      int32 // the return of a call; -1 for a return
	id         int32
	next, prev int32
}

type wglCached struct {
	linearized []uint64
	state      any
	next       int32 // the next entry of the bucket, -1 at its end
}

type wglCall struct {
	entry int32
	state any
}

// wglResult is the outcome of one search.
type wglResult int

const (
	wglOK wglResult = iota
	wglIllegal
	wglTimedOut
)

// batchOps lays out a batch as Porcupine sees it (porcupineOps): operation 0
// puts the model into start, then the batch's operations, open ones
// returning at the end of the batch.
func (w *wgl) layout(start any, ops []linOp) {
	end := int64(0)
	for _, o := range ops {
		end = max(end, o.call+1)
		if !o.open {
			end = max(end, o.ret+1)
		}
	}
	if w.layoutMerged(start, ops, end) {
		return
	}
	w.entries = w.entries[:0]
	w.entries = append(w.entries, wglEntry{value: startOp{state: start}, id: 0, time: -2, isCall: true},
		wglEntry{id: 0, time: -1})
	for k, o := range ops {
		ret := o.ret
		if o.open {
			ret = end
		}
		w.entries = append(w.entries, wglEntry{value: o.input, id: k + 1, time: o.call, isCall: true},
			wglEntry{id: k + 1, time: ret})
	}
	sort.Sort(w.entries)
}

// layoutMerged lays the batch out without sort.Sort when that gives the
// same order: when no two entries tie (the same time and both calls or both
// returns), the sorted order is unique, so any sort finds Porcupine's. The
// calls are in order already (a batch is sorted by call); the returns are
// sorted by time and merged in. It reports false, having laid out nothing,
// when the calls are out of order or two entries tie.
func (w *wgl) layoutMerged(start any, ops []linOp, end int64) bool {
	retTime := func(k int32) int64 {
		if k == 0 {
			return -1
		}
		if o := &ops[k-1]; !o.open {
			return o.ret
		}
		return end
	}
	prev := int64(-2)
	for i := range ops {
		if ops[i].call <= prev {
			return false // out of order, or a tie
		}
		prev = ops[i].call
	}
	if !w.sortReturns(len(ops)+1, retTime) {
		return false
	}
	w.entries = w.entries[:0]
	i, j := 0, 0 // next call (0: the start operation), next return
	for i <= len(ops) || j < len(w.rets) {
		callTime := int64(-2)
		if i > 0 && i <= len(ops) {
			callTime = ops[i-1].call
		}
		if i <= len(ops) && (j == len(w.rets) || callTime <= retTime(w.rets[j])) {
			if i == 0 {
				w.entries = append(w.entries, wglEntry{value: startOp{state: start}, id: 0, time: -2, isCall: true})
			} else {
				w.entries = append(w.entries, wglEntry{value: ops[i-1].input, id: i, time: callTime, isCall: true})
			}
			i++
			continue
		}
		k := w.rets[j]
		w.entries = append(w.entries, wglEntry{id: int(k), time: retTime(k)})
		j++
	}
	return true
}

// sortReturns sets rets to the operations 0..n-1 by return time (retTime),
// and reports false when two of them return at the same time. The times are
// packed with the operations into integers and sorted as such when they fit
// (no two times tie, so the order is the one by time alone).
func (w *wgl) sortReturns(n int, retTime func(k int32) int64) bool {
	w.rets = w.rets[:0]
	w.packed = w.packed[:0]
	packs := n < 1<<31
	for k := range int32(n) {
		w.rets = append(w.rets, k)
		t := retTime(k) + 1 // -1 for the start operation
		packs = packs && t >= 0 && t < 1<<31
		if packs {
			w.packed = append(w.packed, uint64(t)<<32|uint64(k))
		}
	}
	if packs {
		sorted := true // usual: the operations return in the order they were called
		for j := 1; j < len(w.packed) && sorted; j++ {
			sorted = w.packed[j-1] < w.packed[j]
		}
		if !sorted {
			slices.Sort(w.packed)
		}
		for j, p := range w.packed {
			if j > 0 && p>>32 == w.packed[j-1]>>32 {
				return false
			}
			w.rets[j] = int32(p & (1<<32 - 1))
		}
		return true
	}
	sorted := true
	for j := 1; j < len(w.rets) && sorted; j++ {
		sorted = retTime(w.rets[j-1]) < retTime(w.rets[j])
	}
	if !sorted { // (already sorted with no ties: sorting changes nothing)
		slices.SortFunc(w.rets, func(a, b int32) int { return cmp.Compare(retTime(a), retTime(b)) })
	}
	for j := 1; j < len(w.rets); j++ {
		if retTime(w.rets[j]) == retTime(w.rets[j-1]) {
			return false
		}
	}
	return true
}

// check searches the batch (start, ops) with model, whose Step counter
// counts and bounds the steps; deadline (if not zero) bounds the time.
func (w *wgl) check(model porcupine.Model, counter *stepCounter, start any, ops []linOp, deadline time.Time) wglResult {
	w.layout(start, ops)
	n := len(ops) + 1
	equal := model.Equal
	if equal == nil {
		equal = func(a, b any) bool { return a == b }
	}
	// The doubly linked list of entries, in sorted order, after a head.
	if cap(w.nodes) < len(w.entries)+1 {
		w.nodes = make([]wglNode, len(w.entries)+1)
	}
	nodes := w.nodes[:len(w.entries)+1]
	if cap(w.match) < n {
		w.match = make([]int32, n)
	}
	match := w.match[:n]
	for i, e := range w.entries {
		nodes[i+1] = wglNode{match: -1, id: int32(e.id), next: int32(i + 2), prev: int32(i)}
		if !e.isCall {
			match[e.id] = int32(i + 1)
		}
	}
	for i, e := range w.entries {
		if e.isCall {
			nodes[i+1].match = match[e.id]
		}
	}
	nodes[0] = wglNode{match: -1, id: -1, next: 1, prev: -1}
	if len(nodes) == 1 {
		nodes[0].next = -1
	}
	nodes[len(nodes)-1].next = -1

	words := (n + 63) / 64
	linearized := make([]uint64, words)
	if w.cache == nil {
		w.cache = map[uint64]int32{}
	}
	clear(w.cache)
	clear(w.cached) // let go of the states
	w.cached = w.cached[:0]
	w.slab = w.slab[:0]
	calls := w.calls[:0]
	defer func() { w.calls = calls[:0] }()

	state := model.Init()
	entry := nodes[0].next
	for iter := 0; nodes[0].next >= 0; iter++ {
		if !deadline.IsZero() && iter&255 == 0 && !time.Now().Before(deadline) {
			return wglTimedOut
		}
		e := &nodes[entry]
		if e.match >= 0 {
			ok, next := model.Step(state, w.entries[entry-1].value, nil)
			if !ok {
				if counter.exhausted.Load() {
					return wglIllegal // every later step fails too: the search is over
				}
				entry = e.next
				continue
			}
			linearized[e.id/64] |= 1 << (e.id % 64)
			key := bitsHash(linearized)
			if model.Hash != nil {
				key ^= model.Hash(next)
			}
			bucket, found := w.cache[key]
			if !found {
				bucket = -1
			}
			if w.seen(bucket, linearized, next, equal) {
				linearized[e.id/64] &^= 1 << (e.id % 64)
				entry = e.next
				continue
			}
			w.cache[key] = int32(len(w.cached))
			w.cached = append(w.cached, wglCached{linearized: w.clone(linearized), state: next, next: bucket})
			calls = append(calls, wglCall{entry: entry, state: state})
			state = next
			lift(nodes, entry)
			entry = nodes[0].next
			continue
		}
		if len(calls) == 0 {
			return wglIllegal
		}
		top := calls[len(calls)-1]
		entry, state = top.entry, top.state
		id := nodes[entry].id
		linearized[id/64] &^= 1 << (id % 64)
		calls = calls[:len(calls)-1]
		unlift(nodes, entry)
		entry = nodes[entry].next
	}
	return wglOK
}

// seen reports whether the bucket starting at entry i holds linearized
// with a state equal to state. Porcupine's buckets are visited oldest first;
// the answer is the same.
func (w *wgl) seen(i int32, linearized []uint64, state any, equal func(a, b any) bool) bool {
	for ; i >= 0; i = w.cached[i].next {
		c := &w.cached[i]
		if bitsEqual(linearized, c.linearized) && equal(state, c.state) {
			return true
		}
	}
	return false
}

// clone copies a bitset into the slab.
func (w *wgl) clone(b []uint64) []uint64 {
	if cap(w.slab)-len(w.slab) < len(b) {
		w.slab = make([]uint64, 0, max(2*cap(w.slab), 64, 16*len(b)))
	}
	at := len(w.slab)
	w.slab = append(w.slab, b...)
	return w.slab[at:len(w.slab):len(w.slab)]
}

// bitsHash is Porcupine's bitset hash.
func bitsHash(b []uint64) uint64 {
	const prime uint64 = 0xff51afd7ed558ccd
	var h uint64
	for _, v := range b {
		h ^= v
		h *= prime
	}
	return h
}

func bitsEqual(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lift takes the call at node e and its return out of the list.
func lift(nodes []wglNode, e int32) {
	n := &nodes[e]
	nodes[n.prev].next = n.next
	nodes[n.next].prev = n.prev
	m := &nodes[n.match]
	nodes[m.prev].next = m.next
	if m.next >= 0 {
		nodes[m.next].prev = m.prev
	}
}

// unlift puts the call at node e and its return back into the list.
func unlift(nodes []wglNode, e int32) {
	n := &nodes[e]
	m := &nodes[n.match]
	nodes[m.prev].next = n.match
	if m.next >= 0 {
		nodes[m.next].prev = n.match
	}
	nodes[n.prev].next = e
	nodes[n.next].prev = e
}

// wgls keeps searchers for reuse: their buffers outlive a search.
var wgls reuse.Pool[wgl]

// release clears what the searcher holds of the last search and pools it.
func (w *wgl) release() {
	clear(w.entries)
	clear(w.cached)
	w.cached = w.cached[:0]
	clear(w.calls[:cap(w.calls)])
	wgls.Put(w)
}
