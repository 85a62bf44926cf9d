package sim

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
)

// Owner is the goroutine of the process that made a client a user's code
// calls (the go-redis, clientv3 and go-zookeeper shaped clients of the
// backends), and the calls that came from any other goroutine. A process is
// a coroutine with a goroutine of its own; a goroutine the user's code
// started is not run by the kernel, so a call from it must not touch the
// simulator: the client refuses it (Mine is false) and notes it (Note), and
// its process reports what was noted (Strays), where the run can be read.
// T is what a client notes of such a call.
type Owner[T any] struct {
	id uint64

	mu     sync.Mutex // guards strays: a stray call comes from another goroutine
	strays []T
}

// NewOwner returns the Owner of the calling goroutine: call it from the
// client's process.
func NewOwner[T any]() *Owner[T] { return &Owner[T]{id: goroutineID()} }

// Mine reports whether the calling goroutine is the owner's.
func (o *Owner[T]) Mine() bool { return goroutineID() == o.id }

// Note notes a call from another goroutine (safe from any goroutine).
func (o *Owner[T]) Note(call T) {
	o.mu.Lock()
	o.strays = append(o.strays, call)
	o.mu.Unlock()
}

// Strays returns, and forgets, the calls noted since it was last called.
func (o *Owner[T]) Strays() []T {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.strays
	o.strays = nil
	return s
}

// goroutineID is the id of the calling goroutine, read from its stack
// header "goroutine N [...": only compared, never shown.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
