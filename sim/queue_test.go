package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refQueue is the kernel's queue before issue 17 (a binary heap ordered by
// (at, seq)), kept as the reference the 4-ary heap must agree with.
type refQueue struct{ items []entry }

func (q *refQueue) push(e entry) {
	q.items = append(q.items, e)
	for i := len(q.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.items[i].before(q.items[p]) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

func (q *refQueue) pop() entry {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	for i, n := 0, last; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		s := l
		if r := l + 1; r < n && q.items[r].before(q.items[l]) {
			s = r
		}
		if !q.items[s].before(q.items[i]) {
			break
		}
		q.items[i], q.items[s] = q.items[s], q.items[i]
		i = s
	}
	return top
}

// TestQueueOrderIsTheBinaryHeaps: under random interleavings of pushes and
// pops with many equal due times, the queue yields events in exactly the
// order of the reference binary heap: by due time, ties by sequence number.
func TestQueueOrderIsTheBinaryHeaps(t *testing.T) {
	// spread 0 mixes them: near events for the wheel, far ones for the heap,
	// and far ones that come into the wheel's window while still in the heap.
	for _, spread := range []int64{0, 1, 3, 50, 5000, 1 << 20, 1 << 23, 1 << 30} {
		r := rand.New(rand.NewPCG(uint64(spread), 7))
		var q eventQueue
		var ref refQueue
		var seq uint64
		now := time.Duration(0)
		for range 20000 {
			if q.len() == 0 || r.IntN(3) > 0 {
				seq++
				sp := spread
				if sp == 0 {
					sp = []int64{1, 4096, 1 << 22, 1 << 24}[r.IntN(4)]
				}
				at := now + time.Duration(r.Int64N(sp))
				q.push(at, seq).tok = seq
				ref.push(entry{at: at, key: seq})
				continue
			}
			at, slot := q.pop()
			want := ref.pop()
			require.Equal(t, want.at, at)
			require.Equal(t, want.key, q.slots[slot].tok, "ties are broken by sequence number")
			q.release(slot)
			now = at
		}
		require.Equal(t, len(ref.items), q.len())
	}
}

// BenchmarkQueue compares the 4-ary heap with the binary heap it replaced on
// the kernel's pattern: pop the next event, push one a little later, 1,000
// pending.
func BenchmarkQueue(b *testing.B) {
	const pending = 1000
	b.Run("wheel+4-ary", func(b *testing.B) {
		var q eventQueue
		for i := range pending {
			q.push(time.Duration(i), uint64(i+1))
		}
		seq := uint64(pending)
		b.ResetTimer()
		for range b.N {
			at, slot := q.pop()
			q.release(slot)
			seq++
			q.push(at+time.Millisecond+time.Duration(seq%7), seq)
		}
	})
	b.Run("4-ary", func(b *testing.B) {
		var q heap4
		for i := range pending {
			q.push(entry{at: time.Duration(i), key: uint64(i + 1)})
		}
		seq := uint64(pending)
		b.ResetTimer()
		for range b.N {
			e := q.pop()
			seq++
			q.push(entry{at: e.at + time.Millisecond + time.Duration(seq%7), key: seq})
		}
	})
	b.Run("binary", func(b *testing.B) {
		var q refQueue
		for i := range pending {
			q.push(entry{at: time.Duration(i), key: uint64(i + 1)})
		}
		seq := uint64(pending)
		b.ResetTimer()
		for range b.N {
			e := q.pop()
			seq++
			q.push(entry{at: e.at + time.Millisecond + time.Duration(seq%7), key: seq})
		}
	})
}

// TestClosedWorldsWheelsServeLaterWorlds: a world's wheel goes back to a
// pool when it closes and serves a later world; the later runs are exactly
// the first (also while another world is open).
func TestClosedWorldsWheelsServeLaterWorlds(t *testing.T) {
	want := trace(7)
	open := NewWorld(Config{Seed: 1})
	open.At(time.Millisecond, func() {})
	for range 3 {
		assert.Equal(t, want, trace(7))
	}
	assert.True(t, open.Step())
	open.Close()
}
