// Package reuse keeps the memory of one run for the next: a small free list
// of values (a history's storage, a check's search memory) that a sweep hands
// from run to run.
//
// Unlike sync.Pool, a value put back is found by the next Get whichever
// processor the goroutine runs on then, and survives garbage collections: a
// sweep that runs world after world on one goroutine, which the scheduler
// moves between processors, would otherwise allocate the whole memory again
// every few runs. The list keeps at most one value per processor plus one
// (so parallel sweep workers each find theirs); what is put back beyond that
// is left to the garbage collector.
package reuse

import (
	"runtime"
	"sync"
)

// Pool is a free list of *T. The zero value is empty and ready to use.
type Pool[T any] struct {
	mu   sync.Mutex
	free []*T
}

// Get returns a value put back earlier, or a new zero value when there is
// none.
func (p *Pool[T]) Get() *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if n == 0 {
		return new(T)
	}
	x := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	return x
}

// Put hands x to a later Get; the caller must not use x afterwards.
func (p *Pool[T]) Put(x *T) {
	if x == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) > runtime.GOMAXPROCS(0) {
		return
	}
	p.free = append(p.free, x)
}

// Len is the number of values kept for later Gets.
func (p *Pool[T]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// Room is s emptied, with room for n values: s itself when it has the room,
// otherwise a new slice. Memory kept from an earlier run is used this way.
func Room[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}
