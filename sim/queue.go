package sim

import "time"

// event is one entry of the kernel's queue. Events that belong to a node carry
// the node and the incarnation they were scheduled in, so that the node's state
// (paused, down, restarted) gates them when they come due.
type event struct {
	at   time.Duration
	seq  uint64
	node *Node
	inc  uint32
	fn   func()
}

// eventQueue is a binary min-heap ordered by (at, seq). It is hand-rolled over a
// slice of values to avoid container/heap's interface boxing on the hot path.
type eventQueue struct {
	items []event
}

func (q *eventQueue) len() int { return len(q.items) }

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(e event) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

func (q *eventQueue) peek() *event { return &q.items[0] }

func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items[last] = event{}
	q.items = q.items[:last]
	i, n := 0, last
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		smallest := l
		if r := l + 1; r < n && q.less(r, l) {
			smallest = r
		}
		if !q.less(smallest, i) {
			break
		}
		q.items[i], q.items[smallest] = q.items[smallest], q.items[i]
		i = smallest
	}
	return top
}
