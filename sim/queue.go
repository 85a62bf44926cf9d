package sim

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/locklab/locklab/internal/reuse"
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

// heap4 is a 4-ary min-heap of entries ordered by (at, seq). A 4-ary heap is
// half as deep as a binary one and its four children share a cache line
// (16-byte entries); the order it yields is exactly a binary heap's, since
// (at, seq) is a total order.
type heap4 []entry

func (h *heap4) push(x entry) {
	s := append(*h, x)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if !x.before(s[p]) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
	*h = s
}

// pop removes the least entry; the heap must not be empty.
func (h *heap4) pop() entry {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	// Move the hole at the root down to a leaf along the smallest children,
	// then sift the last entry up from there: the last entry usually belongs
	// near the bottom, so this saves comparing it at every level.
	i := 0
	for {
		c := 4*i + 1
		var m int
		if c+3 < n {
			m1 := c + int(lt(s[c+1], s[c]))
			m2 := c + 2 + int(lt(s[c+3], s[c+2]))
			m = m1
			if lt(s[m2], s[m1]) != 0 {
				m = m2
			}
		} else if c < n {
			m = c
			for j := c + 1; j < n; j++ {
				if s[j].before(s[m]) {
					m = j
				}
			}
		} else {
			break
		}
		s[i] = s[m]
		i = m
	}
	if n > 0 {
		for i > 0 {
			p := (i - 1) >> 2
			if !last.before(s[p]) {
				break
			}
			s[i] = s[p]
			i = p
		}
		s[i] = last
	}
	*h = s
	return top
}

// The timing wheel: wheelSize buckets of 2^wheelShift ns each (4.2 ms; the
// wheel spans 268 ms: message latencies and most timeouts). Simulated runs
// are sparse (a few dozen events pending, one every few simulated
// milliseconds), so a push lands in a bucket the wheel last touched long ago:
// few, coarse buckets (6 KB with their first entries) stay in the
// processor's cache, where 1,024 buckets of 4.1 µs missed it on most pushes
// and sent every timeout to the heap. Coarse buckets cost little: entries
// mostly arrive in due order and are appended.
const (
	wheelShift = 22
	wheelSize  = 1 << 6 // at least 64: the bitmap has a word
	wheelWords = wheelSize / 64
	bucketRoom = 4 // entries per bucket before it grows on its own
)

// bucket holds the wheel's entries of one 4.2 ms span, sorted by (at, seq),
// consumed from head.
type bucket struct {
	items []entry
	head  int
}

// eventQueue is the kernel's queue: a timing wheel for the near future with a
// 4-ary heap for the rest, over a slab of event slots reused through a free
// list. It yields entries in exactly (at, seq) order, like the binary heap it
// replaced (TestQueueOrderIsTheBinaryHeaps).
//
// The wheel holds the entries whose span number (at >> wheelShift) lies in
// [cur, cur+wheelSize), where cur is the span of the last entry popped: as
// nothing is ever scheduled before the last event run, every span of the
// window maps to one bucket. Most events (message deliveries, short timers)
// land there: a push appends to a bucket (entries arrive in seq order, so the
// bucket stays sorted with an insertion from the back only when a later event
// is due earlier), and a pop takes the head of the first non-empty bucket,
// found with a bitmap. Entries beyond the window go to the heap; a pop takes
// whichever of the two heads is smaller, so an entry never moves.
type eventQueue struct {
	over    heap4
	buckets []bucket // wheelSize, allocated on first use
	used    [wheelWords]uint64
	words   uint64 // bit w: used[w] is not zero
	cur     int64  // the span of the last entry popped
	n       int
	slots   []event
	free    []uint32
}

func (q *eventQueue) len() int { return q.n }

// push queues an event due at at with sequence number seq and returns the
// slot the caller fills in at once (before anything else is pushed). Slots
// are reused: only the fields of the event's kind (and node, inc) are
// meaningful, the others may hold what an earlier event left. at must not be
// earlier than the last entry popped.
func (q *eventQueue) push(at time.Duration, seq uint64) *event {
	if q.slots == nil {
		q.reuse()
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
	if seq > maxSeq {
		panic(fmt.Sprintf("sim: more than %d events scheduled in one world", uint64(maxSeq)))
	}
	x := entry{at: at, key: seq<<slotBits | uint64(slot)}
	q.n++
	if span := int64(at) >> wheelShift; span < q.cur+wheelSize {
		q.toWheel(x, int(span&(wheelSize-1)))
	} else {
		q.over.push(x)
	}
	return &q.slots[slot]
}

// pushSlot queues the event in slot (taken, and not queued) due at at with
// sequence number seq, and returns it: push for a slot already taken (push
// does the same in line).
func (q *eventQueue) pushSlot(at time.Duration, seq uint64, slot uint32) *event {
	if seq > maxSeq {
		panic(fmt.Sprintf("sim: more than %d events scheduled in one world", uint64(maxSeq)))
	}
	x := entry{at: at, key: seq<<slotBits | uint64(slot)}
	q.n++
	if span := int64(at) >> wheelShift; span < q.cur+wheelSize {
		q.toWheel(x, int(span&(wheelSize-1)))
	} else {
		q.over.push(x)
	}
	return &q.slots[slot]
}

// toWheel inserts x into bucket i, keeping it sorted by (at, seq): x has the
// greatest seq so far, so it goes after every entry due no later.
func (q *eventQueue) toWheel(x entry, i int) {
	if q.buckets == nil {
		q.buckets = newBuckets()
	}
	b := &q.buckets[i]
	items := append(b.items, x)
	j := len(items) - 1
	for j > b.head && items[j-1].at > x.at {
		items[j] = items[j-1]
		j--
	}
	items[j] = x
	b.items = items
	q.used[i>>6] |= 1 << (i & 63)
	q.words |= 1 << (i >> 6)
}

// first is the index of the wheel's first non-empty bucket in window order
// (from cur's bucket on, wrapping), or -1 when the wheel is empty.
func (q *eventQueue) first() int {
	start := int(q.cur & (wheelSize - 1))
	w := start >> 6
	if m := q.used[w] &^ (1<<(start&63) - 1); m != 0 {
		return w<<6 | bits.TrailingZeros64(m)
	}
	// The words after w, then from the first (w's entries before start
	// included): the first word with entries in that order.
	ws := q.words
	if after := ws &^ (1<<(w+1) - 1); after != 0 {
		ws = after
	}
	if ws == 0 {
		return -1
	}
	ww := bits.TrailingZeros64(ws)
	return ww<<6 | bits.TrailingZeros64(q.used[ww])
}

// pop removes the next entry and returns its due time and the slot of its
// event; the queue must not be empty. The slot stays taken until release, so
// the event can be read in place while it runs (a push that grows the slab
// leaves the old copy intact).
func (q *eventQueue) pop() (time.Duration, uint32) {
	at, slot, _ := q.popBy(math.MaxInt64)
	return at, slot
}

// popBy is pop if the next entry is due by limit; ok is false (and nothing
// popped) if it is due later. RunUntil uses it to find the next entry once per
// event instead of twice (peek, then pop).
func (q *eventQueue) popBy(limit time.Duration) (at time.Duration, slot uint32, ok bool) {
	if i := q.first(); i >= 0 {
		b := &q.buckets[i]
		if x := b.items[b.head]; len(q.over) == 0 || x.before(q.over[0]) {
			if x.at > limit {
				return 0, 0, false
			}
			b.head++
			if b.head == len(b.items) {
				b.items, b.head = b.items[:0], 0
				if q.used[i>>6] &^= 1 << (i & 63); q.used[i>>6] == 0 {
					q.words &^= 1 << (i >> 6)
				}
			}
			return q.popped(x)
		}
	}
	if q.over[0].at > limit {
		return 0, 0, false
	}
	return q.popped(q.over.pop())
}

// popped accounts for x, just removed.
func (q *eventQueue) popped(x entry) (time.Duration, uint32, bool) {
	q.n--
	q.cur = int64(x.at) >> wheelShift
	return x.at, uint32(x.key & (maxSlots - 1)), true
}

// release frees the slot of an event that has run.
func (q *eventQueue) release(slot uint32) { q.free = append(q.free, slot) }

// reset drops every pending event. The queue's memory (the wheel's emptied
// buckets, the slab of slots cleared, the heap and the free list) goes back
// to a pool for the next world's queue: a sweep makes one per run.
func (q *eventQueue) reset() {
	if q.buckets != nil || q.slots != nil {
		for i := range q.buckets {
			q.buckets[i].items, q.buckets[i].head = q.buckets[i].items[:0], 0
		}
		clear(q.slots)
		queuePool.Put(&queueMem{buckets: q.buckets, slots: q.slots[:0], free: q.free[:0], over: q.over[:0]})
	}
	*q = eventQueue{}
}

// queueMem is the memory of a closed world's queue.
type queueMem struct {
	buckets []bucket
	slots   []event
	free    []uint32
	over    heap4
}

// queuePool holds the memory of closed worlds' queues.
var queuePool reuse.Pool[queueMem]

// reuse gives an empty queue the memory of a closed world's, if the pool
// has one.
func (q *eventQueue) reuse() {
	m := queuePool.Get()
	q.buckets, q.slots, q.free, q.over = m.buckets, m.slots, m.free, m.over
	if q.slots == nil {
		q.slots = make([]event, 0, 64)
	}
}

// newBuckets returns an empty wheel whose buckets start with room for
// bucketRoom entries carved from one array (one allocation instead of one
// per bucket).
func newBuckets() []bucket {
	buckets := make([]bucket, wheelSize)
	room := make([]entry, wheelSize*bucketRoom)
	for i := range buckets {
		buckets[i].items = room[i*bucketRoom : i*bucketRoom : (i+1)*bucketRoom]
	}
	return buckets
}
