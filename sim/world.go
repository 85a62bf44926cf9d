package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// DefaultWallEpoch is the wall-clock reading of every node at true time zero
// unless Config.WallEpoch says otherwise: 2026-01-01T00:00:00Z in Unix nanoseconds.
const DefaultWallEpoch = 1767225600 * time.Second

// Config is the configuration of a World. The zero value is usable: seed 0,
// DefaultLink on every link, wall clocks starting at DefaultWallEpoch.
type Config struct {
	// Seed drives every random choice in the world.
	Seed uint64
	// Link is the default behaviour of every directed link (DefaultLink when zero).
	Link Link
	// WallEpoch is every node's wall-clock reading at true time zero
	// (DefaultWallEpoch when zero).
	WallEpoch time.Duration
	// Cuts is what a cut link does with the messages on it: drop them
	// (CutDrops, the zero value: datagram semantics) or hold them until the
	// heal (CutHolds: connection semantics). See Network.SetCuts.
	Cuts CutMode
	// ConnTimeout is how long a holding cut keeps a connection's messages
	// before the connection resets (CutHolds only): DefaultConnTimeout when
	// zero, never when negative.
	ConnTimeout time.Duration
}

// World is one simulated universe: a clock, an event queue, nodes and a network.
// It is single-threaded: exactly one event or process runs at any moment.
type World struct {
	seed      uint64
	wallEpoch time.Duration
	now       time.Duration
	seq       uint64
	queue     eventQueue
	nodes     []*Node
	byName    map[string]*Node
	net       *Network
	msgID     uint64
	processed uint64
	running   *Proc
	closed    bool
	obs       *observer
	stopped   bool
	timeouts  []*timeoutError // the last ErrTimeout made for calls to each node (timeoutErr)
}

// NewWorld creates an empty world at true time zero.
func NewWorld(cfg Config) *World {
	w := &World{seed: cfg.Seed, wallEpoch: cfg.WallEpoch, byName: map[string]*Node{}}
	if w.wallEpoch == 0 {
		w.wallEpoch = DefaultWallEpoch
	}
	link := cfg.Link
	if link == (Link{}) {
		link = DefaultLink
	}
	w.net = newNetwork(w, link, cfg.Cuts, cfg.ConnTimeout)
	return w
}

// Seed is the seed the world was created with.
func (w *World) Seed() uint64 { return w.seed }

// Now is the true virtual time since the start of the run. Only the harness,
// the nemesis and the history recorder read true time; models read their node's
// clocks.
func (w *World) Now() time.Duration { return w.now }

// Rand returns the world's random stream called name (see NewRand). Ask once per
// component and keep the stream: each call starts the stream afresh.
func (w *World) Rand(name string) *rand.Rand { return NewRand(w.seed, name) }

// Network is the world's network.
func (w *World) Network() *Network { return w.net }

// Processed is the number of events the kernel has executed so far.
func (w *World) Processed() uint64 { return w.processed }

// Nodes lists the nodes in the order they were added.
func (w *World) Nodes() []*Node { return w.nodes }

// Node returns the node called name, or nil.
func (w *World) Node(name string) *Node { return w.byName[name] }

// Running is the process executing right now, or nil when the kernel itself
// (an event handler) is running.
func (w *World) Running() *Proc { return w.running }

// At schedules fn at true time t (or now, if t is in the past). World-level
// events are not gated by any node: the nemesis and the harness use them.
func (w *World) At(t time.Duration, fn func()) {
	if t < w.now {
		t = w.now
	}
	w.schedule(t, nil, fn)
}

// After schedules fn after true duration d.
func (w *World) After(d time.Duration, fn func()) { w.At(w.now+d, fn) }

func (w *World) schedule(t time.Duration, n *Node, fn func()) {
	e := w.newEvent(t, kindFunc, n)
	e.fn = fn
}

// newEvent queues an event of kind at true time t with the next sequence
// number and returns it for the caller to fill in the kind's fields at once.
// An event of a node is stamped with the node's incarnation. In a closed world
// nothing is queued (the event returned is scratch).
func (w *World) newEvent(t time.Duration, kind eventKind, n *Node) *event {
	if w.closed {
		return &event{}
	}
	w.seq++
	e := w.queue.push(t, w.seq)
	e.kind, e.node = kind, n
	if n != nil {
		e.inc = n.incarnation
	}
	return e
}

// requeue queues again, at true time t, the event in slot (deferred by a
// pause: its slot was kept), stamped with its node's current incarnation.
func (w *World) requeue(t time.Duration, slot uint32) {
	if w.closed {
		return
	}
	w.seq++
	e := w.queue.pushSlot(t, w.seq, slot)
	e.inc = e.node.incarnation
}

// Step executes the next event and reports whether there was one.
func (w *World) Step() bool { return w.stepBy(math.MaxInt64) }

// stepBy executes the next event if it is due by limit, and reports whether it
// did.
func (w *World) stepBy(limit time.Duration) bool {
	if w.queue.len() == 0 || w.closed {
		return false
	}
	at, slot, ok := w.queue.popBy(limit)
	if !ok {
		return false
	}
	if at < w.now {
		panic(fmt.Sprintf("sim: event at %v is earlier than now %v", at, w.now))
	}
	w.now = at
	w.processed++
	if w.dispatch(slot) && !w.closed {
		w.queue.release(slot)
	}
	return true
}

// dispatch runs the event in slot if its node's state lets it (a message
// delivered, a timer fired, a process woken, a function called), and reports
// whether the slot is free again: the event of a paused node keeps its slot
// until the node resumes (Node.Resume queues it again).
func (w *World) dispatch(slot uint32) bool {
	e := &w.queue.slots[slot]
	if n := e.node; n != nil {
		if n.down || n.incarnation != e.inc {
			return true
		}
		if n.paused {
			n.deferred = append(n.deferred, slot)
			return false
		}
	}
	switch e.kind {
	case kindFunc:
		e.fn()
	case kindDeliver:
		w.net.arrive(e.node, &e.msg, e.gen)
	case kindTimer:
		e.timer.fire(e.gen)
	case kindWake:
		e.proc.wake(e.tok)
	}
	return true
}

// RunUntil executes events in order until true time t is reached or the queue
// is empty, then sets the clock to t. Events scheduled exactly at t run. An
// observer (Observe) that calls Stop ends it early, the clock left at the last
// event executed.
func (w *World) RunUntil(t time.Duration) {
	w.stopped = false
	for !w.stopped && w.stepBy(t) {
		if o := w.obs; o != nil {
			if o.left--; o.left == 0 {
				o.left = o.every
				o.fn()
			}
		}
	}
	if t > w.now && !w.stopped {
		w.now = t
	}
}

// Run executes events for true duration d from now.
func (w *World) Run(d time.Duration) { w.RunUntil(w.now + d) }

// Close stops every process (unwinding its coroutine) and discards pending
// events. Call it when a run is over so that no coroutine outlives the world.
func (w *World) Close() {
	if w.closed {
		return
	}
	for _, n := range w.nodes {
		n.killProcs()
	}
	w.closed = true
	w.queue.reset()
}

func (w *World) nextMsgID() uint64 {
	w.msgID++
	return w.msgID
}
