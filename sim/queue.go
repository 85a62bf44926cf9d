package sim

import (
	"fmt"
	"math/bits"
	"time"
)

// eventKind says what an event does when it comes due. The hot paths (message
// delivery, timers, process wake-ups) are typed kinds carried in the event's
// fields, so they cost no closure allocation; everything else is a func().
type eventKind uint8

const (
	// kindFunc calls fn.
	kindFunc eventKind = iota
	// kindDeliver delivers msg to node (unless its link is cut by then).
	kindDeliver
	// kindTimer fires timer if it is still armed with generation gen.
	kindTimer
	// kindWake resumes proc if it still waits for tok.
	kindWake
)

// event is what the kernel executes. Events that belong to a node carry the
// node and the incarnation they were scheduled in, so that the node's state
// (paused, down, restarted) gates them when they come due. Only the fields of
// the event's kind are set.
type event struct {
	node  *Node
	fn    func()
	timer *Timer
	proc  *Proc
	msg   Message
	tok   uint64
	inc   uint32
	gen   uint32
	kind  eventKind
}

// slotBits is how many bits of an entry's key hold the event's slot; the rest
// hold its sequence number.
const (
	slotBits = 24
	maxSlots = 1 << slotBits
	maxSeq   = 1<<(64-slotBits) - 1
)

// entry is one element of the queue's heap: the due time and a key whose high
// bits are the event's sequence number and whose low bits are the slot holding
// the event. Sequence numbers are unique, so ordering by (at, key) is ordering
// by (at, seq). Entries hold no pointers: moving them costs no write barrier.
type entry struct {
	at  time.Duration
	key uint64
}

func (a entry) before(b entry) bool { return lt(a, b) != 0 }

// lt is 1 if a orders before b, else 0, computed without branches as the
// borrow of the 128-bit subtraction (a.at, a.key) - (b.at, b.key): due times
// are never negative, so they compare as unsigned high words. The heap's
// comparisons are coin flips a branch predictor cannot learn.
func lt(a, b entry) uint64 {
	_, borrow := bits.Sub64(a.key, b.key, 0)
	_, borrow = bits.Sub64(uint64(a.at), uint64(b.at), borrow)
	return borrow
}

// eventQueue is a 4-ary min-heap of entries ordered by (at, seq) over a slab of
// event slots reused through a free list. A 4-ary heap is half as deep as a
// binary one and its four children share a cache line (16-byte entries), so a
// pop costs fewer cache misses; the order it yields is exactly the binary
// heap's, since (at, seq) is a total order.
type eventQueue struct {
	heap  []entry
	slots []event
	free  []uint32
}

func (q *eventQueue) len() int { return len(q.heap) }

// push queues an event due at at with sequence number seq and returns the
// slot the caller fills in at once (before anything else is pushed). Slots
// are reused: only the fields of the event's kind (and node, inc) are
// meaningful, the others may hold what an earlier event left.
func (q *eventQueue) push(at time.Duration, seq uint64) *event {
	if seq > maxSeq {
		panic(fmt.Sprintf("sim: more than %d events scheduled in one world", uint64(maxSeq)))
	}
	var slot uint32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		if len(q.slots) >= maxSlots {
			panic(fmt.Sprintf("sim: more than %d events pending at once", maxSlots))
		}
		slot = uint32(len(q.slots))
		q.slots = append(q.slots, event{})
	}
	x := entry{at: at, key: seq<<slotBits | uint64(slot)}
	h := append(q.heap, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if !x.before(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
	q.heap = h
	return &q.slots[slot]
}

// peekAt is the due time of the next event; the queue must not be empty.
func (q *eventQueue) peekAt() time.Duration { return q.heap[0].at }

// pop removes the next entry and returns its due time and the slot of its
// event. The slot stays taken until release, so the event can be read in place
// while it runs (a push that grows the slab leaves the old copy intact).
func (q *eventQueue) pop() (time.Duration, uint32) {
	h := q.heap
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	// Move the hole at the root down to a leaf along the smallest children,
	// then sift the last entry up from there: the last entry usually belongs
	// near the bottom, so this saves comparing it at every level.
	i := 0
	for {
		c := 4*i + 1
		var m int
		if c+3 < n {
			m1 := c + int(lt(h[c+1], h[c]))
			m2 := c + 2 + int(lt(h[c+3], h[c+2]))
			m = m1
			if lt(h[m2], h[m1]) != 0 {
				m = m2
			}
		} else if c < n {
			m = c
			for j := c + 1; j < n; j++ {
				if h[j].before(h[m]) {
					m = j
				}
			}
		} else {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		for i > 0 {
			p := (i - 1) >> 2
			if !last.before(h[p]) {
				break
			}
			h[i] = h[p]
			i = p
		}
		h[i] = last
	}
	q.heap = h
	return top.at, uint32(top.key & (maxSlots - 1))
}

// release frees the slot of an event that has run.
func (q *eventQueue) release(slot uint32) { q.free = append(q.free, slot) }

// reset drops every pending event.
func (q *eventQueue) reset() {
	q.heap, q.slots, q.free = nil, nil, nil
}
