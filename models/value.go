package models

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// value is a state of a protected resource: a number (a counter, a stock
// level) or a list (an append-only log). Lists are immutable chains of cells
// shared between values, so appending is cheap and a value is safe to keep in
// several model states.
type value struct {
	list bool
	num  int64
	last *cell // the list's last cell; nil for the empty list
}

// cell is one element of a list value, linked to the elements before it.
type cell struct {
	prev *cell
	x    int64
	n    int    // the list's length up to and including this cell
	h    uint64 // hash of the list up to and including this cell
}

// emptyListHash is the hash of the empty list.
const emptyListHash uint64 = 0x9e3779b97f4a7c15

func mix(h, x uint64) uint64 {
	h ^= x + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>29
}

func number(n int64) value { return value{num: n} }

// length is a list's length (0 for numbers).
func (v value) length() int {
	if v.last == nil {
		return 0
	}
	return v.last.n
}

func (v value) hash() uint64 {
	switch {
	case !v.list:
		return mix(1, uint64(v.num))
	case v.last == nil:
		return emptyListHash
	}
	return v.last.h
}

// eq compares values by content.
func (v value) eq(w value) bool {
	if v.list != w.list {
		return false
	}
	if !v.list {
		return v.num == w.num
	}
	a, b := v.last, w.last
	for a != b {
		if a == nil || b == nil || a.n != b.n || a.h != b.h || a.x != b.x {
			return false
		}
		a, b = a.prev, b.prev
	}
	return true
}

// valueKey identifies a value in maps (lists by length and hash: two lists
// with the same key are treated alike, which only ever keeps more).
type valueKey struct {
	list bool
	num  int64
	n    int
	h    uint64
}

func (v value) key() valueKey {
	if !v.list {
		return valueKey{num: v.num}
	}
	return valueKey{list: true, n: v.length(), h: v.hash()}
}

// appended returns the list v with x appended.
func (v value) appended(x int64) value {
	h := emptyListHash
	if v.last != nil {
		h = v.last.h
	}
	return value{list: true, last: &cell{prev: v.last, x: x, n: v.length() + 1, h: mix(h, uint64(x))}}
}

// elements returns a list's elements in order.
func (v value) elements() []int64 {
	out := make([]int64, v.length())
	for c := v.last; c != nil; c = c.prev {
		out[c.n-1] = c.x
	}
	return out
}

// maxListShown bounds the elements a description shows.
const maxListShown = 8

func (v value) String() string {
	if !v.list {
		return fmt.Sprint(v.num)
	}
	xs := v.elements()
	if len(xs) > maxListShown {
		head := fmt.Sprint(xs[:3])
		tail := fmt.Sprint(xs[len(xs)-3:])
		return fmt.Sprintf("%s ... %s (%d elements)]", strings.TrimSuffix(head, "]"), strings.TrimPrefix(tail, "["), len(xs))
	}
	return fmt.Sprint(xs)
}

// interner builds list values from a history so that equal lists share their
// cells (comparisons are then mostly pointer comparisons).
type interner struct {
	cells map[cellKey]*cell
}

type cellKey struct {
	prev *cell
	x    int64
}

func newInterner() *interner { return &interner{cells: map[cellKey]*cell{}} }

// list returns the list value of xs.
func (in *interner) list(xs []int64) value {
	var last *cell
	for _, x := range xs {
		last = in.cell(last, x)
	}
	return value{list: true, last: last}
}

// appended returns v with x appended, interned.
func (in *interner) appended(v value, x int64) value {
	return value{list: true, last: in.cell(v.last, x)}
}

func (in *interner) cell(prev *cell, x int64) *cell {
	k := cellKey{prev, x}
	if c := in.cells[k]; c != nil {
		return c
	}
	c := value{list: true, last: prev}.appended(x).last
	in.cells[k] = c
	return c
}

// values is a small set of values (no duplicates). Sets are never modified
// in place: every change returns a new slice.
type values []value

func (s values) has(v value) bool {
	return slices.ContainsFunc(s, v.eq)
}

// with returns s plus v.
func (s values) with(v value) values {
	if s.has(v) {
		return s
	}
	return append(s[:len(s):len(s)], v)
}

func (s values) hash() uint64 {
	var h uint64
	for _, v := range s {
		h ^= v.hash()
	}
	return h
}

func (s values) equal(t values) bool {
	if len(s) != len(t) {
		return false
	}
	for _, v := range s {
		if !t.has(v) {
			return false
		}
	}
	return true
}

// sorted returns the values in a stable order for descriptions.
func (s values) sorted() values {
	out := slices.Clone(s)
	slices.SortFunc(out, func(a, b value) int {
		if a.list != b.list || !a.list {
			return cmp.Compare(a.num, b.num)
		}
		if c := cmp.Compare(a.length(), b.length()); c != 0 {
			return c
		}
		return strings.Compare(a.String(), b.String())
	})
	return out
}
