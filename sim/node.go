package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// NodeID identifies a node within its world (its index in World.Nodes).
type NodeID int

// Handler is a server model: a plain struct whose methods the event loop calls.
// Handlers never block and never start goroutines.
type Handler interface {
	// Start is called when the node is added and after every restart; it sets up
	// the volatile state (the durable state is whatever the model kept).
	Start(n *Node)
	// Receive is called for every message delivered to the node that is not a
	// reply awaited by one of the node's processes.
	Receive(n *Node, m Message)
}

// Crasher is implemented by handlers that want to know when their node crashes,
// to decide what survives (for example, what was persisted).
type Crasher interface {
	Crash(n *Node)
}

// NodeOptions configure a node when it is added.
type NodeOptions struct {
	// Handler is the node's server model; nil for a node that only runs processes.
	Handler Handler
	// Drift is the clock's rate error: 0.01 runs 1% fast. Default 0.
	Drift float64
	// WallOffset is the initial offset of the wall clock from true time. Default 0.
	WallOffset time.Duration
}

// Node is a machine in the simulated world: a server, a client or the storage.
type Node struct {
	w           *World
	id          NodeID
	name        string
	handler     Handler
	clock       clock
	rand        *rand.Rand
	paused      bool
	down        bool
	incarnation uint32
	deferred    []uint32 // the queue slots of the events deferred by a pause
	timers      []timerRef
	procs       []*Proc
	inbox       []Message
	pauseCount  int
	crashCount  int
}

// AddNode adds a node called name. Names must be unique; the handler's Start runs
// at once.
func (w *World) AddNode(name string, opts NodeOptions) *Node {
	if _, dup := w.byName[name]; dup {
		panic(fmt.Sprintf("sim: duplicate node name %q", name))
	}
	n := &Node{
		w:       w,
		id:      NodeID(len(w.nodes)),
		name:    name,
		handler: opts.Handler,
		clock:   clock{baseTrue: w.now, baseMono: w.now, rate: 1 + opts.Drift, offset: opts.WallOffset},
		rand:    w.Rand("node/" + name),
	}
	w.nodes = append(w.nodes, n)
	w.byName[name] = n
	if n.handler != nil {
		n.handler.Start(n)
	}
	return n
}

// ID is the node's identifier.
func (n *Node) ID() NodeID { return n.id }

// Name is the node's unique name.
func (n *Node) Name() string { return n.name }

// World is the world the node lives in.
func (n *Node) World() *World { return n.w }

// Handler is the node's server model (nil for a pure client node).
func (n *Node) Handler() Handler { return n.handler }

// Rand is the node's own random stream ("node/<name>").
func (n *Node) Rand() *rand.Rand { return n.rand }

// Mono is the node's monotonic clock reading: drift applies, jumps do not.
func (n *Node) Mono() time.Duration { return n.clock.mono(n.w.now) }

// Wall is the node's wall-clock reading in Unix nanoseconds: drift and jumps apply.
func (n *Node) Wall() time.Duration { return n.w.wallEpoch + n.Mono() + n.clock.offset }

// TrueTimeAtMono is the true time at which the node's monotonic clock will read
// m if its drift does not change (now, if it already does). The recorder uses it
// to place a client's lease deadline, measured on the client's clock, in true time.
func (n *Node) TrueTimeAtMono(m time.Duration) time.Duration { return n.clock.trueAt(n.w.now, m) }

// Paused reports whether the node is paused.
func (n *Node) Paused() bool { return n.paused }

// Down reports whether the node is crashed.
func (n *Node) Down() bool { return n.down }

// Incarnation counts the node's restarts.
func (n *Node) Incarnation() uint32 { return n.incarnation }

// wakeNow schedules the resumption of p for wait tok at the current time,
// gated by the node's state.
func (n *Node) wakeNow(p *Proc, tok uint64) {
	e := n.w.newEvent(n.w.now, kindWake, n)
	e.proc, e.tok = p, tok
}

// --- timers ---

// Timer is a one-shot timer set in the node's local monotonic time.
type Timer struct {
	node     *Node
	deadline time.Duration // on the node's monotonic clock
	fn       func()
	proc     *Proc  // a process's own timer wakes proc (for tok) instead of calling fn
	tok      uint64 // the wait proc's timer ends
	gen      uint32 // counts plans; an event of an older plan is stale
	arm      uint32 // counts armings of a reused (process) timer
	done     bool
}

// timerRef is an entry of a node's timer list: the timer as armed for the
// arm-th time. A process's timer is reused for each of its waits, and only
// its latest arming is live, at the position it was armed in.
type timerRef struct {
	t   *Timer
	arm uint32
}

func (r timerRef) live() bool { return !r.t.done && r.t.arm == r.arm }

// SetTimer runs fn once the node's monotonic clock has advanced by d. Drift
// changes re-plan the timer; a pause makes it fire late (on resume); a crash
// cancels it.
func (n *Node) SetTimer(d time.Duration, fn func()) *Timer {
	t := &Timer{node: n, fn: fn}
	n.arm(t, d)
	return t
}

// Reset re-arms t to run its function once the node's monotonic clock has
// advanced by d, exactly as SetTimer would with a new timer, whether t fired,
// was stopped or is still pending (then its earlier deadline is dropped). A
// timer re-armed every period (a Raft tick) so costs no allocation. A
// process's own timer cannot be reset.
func (t *Timer) Reset(d time.Duration) {
	if t.proc != nil {
		panic(fmt.Sprintf("sim: node %s: Reset of a process's own timer", t.node.name))
	}
	t.node.arm(t, d)
}

// arm (re)starts t to fire after d on the node's monotonic clock and appends
// it to the node's timer list.
func (n *Node) arm(t *Timer, d time.Duration) {
	if d < 0 {
		d = 0
	}
	t.deadline = n.Mono() + d
	t.done = false
	t.arm++
	n.plan(t)
	if k := len(n.timers); k > 0 && n.timers[k-1].t == t {
		// Its previous arming, last in the list, is dead now: this one takes
		// its place, which is where it would have been appended.
		n.timers[k-1].arm = t.arm
		return
	}
	if len(n.timers) >= 64 && len(n.timers)%64 == 0 {
		n.compactTimers()
	}
	n.timers = append(n.timers, timerRef{t, t.arm})
}

func (n *Node) plan(t *Timer) {
	t.gen++
	at := n.clock.trueAt(n.w.now, t.deadline)
	e := n.w.newEvent(at, kindTimer, n)
	e.timer, e.gen = t, t.gen
}

// fire runs the timer if the event of plan gen is its current one.
func (t *Timer) fire(gen uint32) {
	if t.done || t.gen != gen {
		return
	}
	t.done = true
	if t.proc != nil {
		t.proc.wake(t.tok)
		return
	}
	t.fn()
}

func (n *Node) compactTimers() {
	live := n.timers[:0]
	for _, r := range n.timers {
		if r.live() {
			live = append(live, r)
		}
	}
	clear(n.timers[len(live):])
	n.timers = live
}

// Stop cancels the timer and reports whether it had not fired yet.
func (t *Timer) Stop() bool {
	if t == nil || t.done {
		return false
	}
	t.done = true
	return true
}

// --- faults ---

// SetDrift changes the rate error of the node's clocks from now on (0.01 = 1%
// fast) and re-plans pending timers accordingly.
func (n *Node) SetDrift(drift float64) {
	if 1+drift <= 0 {
		panic(fmt.Sprintf("sim: node %s: drift %v would stop or reverse the clock", n.name, drift))
	}
	n.clock.rebase(n.w.now, 1+drift)
	n.compactTimers()
	for _, r := range n.timers {
		n.plan(r.t)
	}
}

// Drift is the node's current clock rate error.
func (n *Node) Drift() float64 { return n.clock.rate - 1 }

// JumpClock moves the node's wall clock by d (negative: backwards). The
// monotonic clock and the timers set on it are not affected.
func (n *Node) JumpClock(d time.Duration) { n.clock.offset += d }

// Pause stops the node: nothing on it runs, its timers and incoming messages
// wait until Resume. Its clocks keep running (a GC pause).
func (n *Node) Pause() {
	if n.paused || n.down {
		return
	}
	n.paused = true
	n.pauseCount++
}

// Resume ends a pause: everything that came due while the node was paused runs
// now, in the order it came due.
func (n *Node) Resume() {
	if !n.paused {
		return
	}
	n.paused = false
	for _, slot := range n.deferred {
		n.w.requeue(n.w.now, slot)
	}
	n.deferred = n.deferred[:0]
}

// Crash takes the node down: its processes are killed, its timers cancelled,
// queued and in-flight events dropped, and the handler (if it implements
// Crasher) decides what of its state survives.
func (n *Node) Crash() {
	if n.down {
		return
	}
	n.down = true
	n.paused = false
	if !n.w.closed {
		for _, slot := range n.deferred {
			n.w.queue.release(slot)
		}
	}
	n.deferred = n.deferred[:0]
	n.crashCount++
	for _, r := range n.timers {
		r.t.done = true
	}
	n.timers = nil
	n.inbox = nil
	n.killProcs()
	if c, ok := n.handler.(Crasher); ok {
		c.Crash(n)
	}
}

// Restart brings a crashed node back: a new incarnation whose handler Start runs
// again. Events scheduled before the crash never run. Processes are not
// restarted by the kernel; the handler's Start may spawn new ones.
func (n *Node) Restart() {
	if !n.down {
		return
	}
	n.down = false
	n.incarnation++
	if n.handler != nil {
		n.handler.Start(n)
	}
}

// PauseCount and CrashCount count the faults the node has suffered.
func (n *Node) PauseCount() int { return n.pauseCount }

// CrashCount counts the node's crashes.
func (n *Node) CrashCount() int { return n.crashCount }

// Program is the Handler of a client node: it starts body as the node's main
// process (named after the node) when the node starts and again after every
// restart. Messages that are not replies wait in the node's inbox for
// Proc.Recv.
type Program func(p *Proc)

// Start spawns the main process.
func (pr Program) Start(n *Node) { n.Spawn(n.name, pr) }

// Receive queues a notification for Proc.Recv.
func (pr Program) Receive(n *Node, m Message) { n.enqueue(m) }

// IDs are the identifiers of nodes, in their order: the addresses a client
// of a cluster sends to.
func IDs(nodes []*Node) []NodeID {
	out := make([]NodeID, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID()
	}
	return out
}
