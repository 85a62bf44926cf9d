package sim

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime/debug"
	"time"
)

// ErrTimeout is returned by Proc.Call when no reply came within the timeout.
// The request may or may not have taken effect.
var ErrTimeout = errors.New("sim: request timed out")

// killed is the sentinel a process panics with when it is stopped (crash of its
// node, end of the run). The process's top frame recovers it.
type killed struct{}

// Stopping reports whether r, a value recovered from a panic in a process,
// is the simulator stopping the process (its node crashed, the run ended)
// rather than a panic of the program: code that recovers the panics of
// code it runs (a user's lock) must re-raise it.
func Stopping(r any) bool {
	_, ok := r.(killed)
	return ok
}

// Proc is a client process: sequential Go code running as a coroutine that only
// the kernel resumes. All its blocking calls go through the kernel.
type Proc struct {
	node *Node
	name string

	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool

	waitTok     uint64
	waitCall    uint64
	reply       Message
	gotReply    bool
	waitingRecv bool
	multi       *multiCall // a CallAll in progress
	mc          multiCall  // the state of CallAll, reused
	timer       Timer      // the timer of the process's current wait, reused
	dead        bool       // killed: every further kernel call unwinds the process
	finished    bool
	panicked    any
}

// Spawn starts a process called name on the node. body runs as a coroutine from
// the next kernel step; it returns when the program ends. A panic in body is
// re-raised by the kernel with the process name and the stack.
func (n *Node) Spawn(name string, body func(p *Proc)) *Proc {
	p := &Proc{node: n, name: name}
	p.timer = Timer{node: n, proc: p}
	seq := func(yield func(struct{}) bool) {
		p.yield = yield
		defer func() {
			r := recover()
			p.finished = true
			if r == nil {
				return
			}
			if _, ok := r.(killed); ok {
				return
			}
			p.panicked = fmt.Sprintf("sim: process %s on node %s panicked: %v\n%s", p.name, n.name, r, debug.Stack())
		}()
		body(p)
	}
	p.next, p.stop = iter.Pull(seq)
	live := n.procs[:0]
	for _, q := range n.procs {
		if !q.finished {
			live = append(live, q)
		}
	}
	clear(n.procs[len(live):])
	n.procs = append(live, p)
	n.wakeNow(p, p.newWait())
	return p
}

// Name is the process's name.
func (p *Proc) Name() string { return p.name }

// Node is the node the process runs on.
func (p *Proc) Node() *Node { return p.node }

// World is the process's world.
func (p *Proc) World() *World { return p.node.w }

// Mono reads the node's monotonic clock.
func (p *Proc) Mono() time.Duration { return p.node.Mono() }

// Wall reads the node's wall clock (Unix nanoseconds).
func (p *Proc) Wall() time.Duration { return p.node.Wall() }

// Rand is the node's random stream.
func (p *Proc) Rand() *rand.Rand { return p.node.rand }

// Finished reports whether the process's program has returned or been killed.
func (p *Proc) Finished() bool { return p.finished }

func (p *Proc) newWait() uint64 {
	p.waitTok++
	return p.waitTok
}

// wake resumes the process if it is still waiting for tok. Called from node
// events, so the node's pause and crash gating already applied.
func (p *Proc) wake(tok uint64) {
	if p.finished || p.dead || tok != p.waitTok {
		return
	}
	p.waitTok++ // a wait is woken once
	w := p.node.w
	prev := w.running
	w.running = p
	p.next()
	w.running = prev
	if p.panicked != nil {
		msg := p.panicked
		p.panicked = nil
		panic(msg)
	}
}

// block hands control back to the kernel until a wake for the current wait.
func (p *Proc) block() {
	if p.dead {
		panic(killed{})
	}
	if p.node.w.running != p {
		panic(fmt.Sprintf("sim: process %s blocked while not running (a kernel call from outside its coroutine?)", p.name))
	}
	if !p.yield(struct{}{}) {
		p.dead = true
		panic(killed{})
	}
	if p.dead {
		panic(killed{})
	}
}

// settle makes a process whose node was paused while it ran stop here, before
// it does anything visible, until the node resumes.
func (p *Proc) settle() {
	if p.dead {
		panic(killed{})
	}
	if p.node.paused {
		p.node.wakeNow(p, p.newWait())
		p.block()
	}
}

// startTimer arms the process's own timer to end wait tok after d on the
// node's monotonic clock. A process waits for one thing at a time, so one
// timer, re-armed for each wait, serves all its waits; re-arming it makes
// any earlier arming stale, which could only have woken a wait already over.
func (p *Proc) startTimer(d time.Duration, tok uint64) {
	p.timer.tok = tok
	p.node.arm(&p.timer, d)
}

// timeoutAfter arms the process's timer to end wait tok after timeout on the
// node's monotonic clock; a timeout of 0 is none (the wait may last forever).
func (p *Proc) timeoutAfter(timeout time.Duration, tok uint64) {
	if timeout > 0 {
		p.startTimer(timeout, tok)
	}
}

// Sleep blocks for d on the node's monotonic clock.
func (p *Proc) Sleep(d time.Duration) {
	p.settle()
	p.startTimer(d, p.newWait())
	p.block()
}

// Yield lets every other event due now run before the process continues.
func (p *Proc) Yield() { p.Sleep(0) }

// Send sends body to the node to without waiting.
func (p *Proc) Send(to NodeID, body any) {
	p.settle()
	p.node.Send(to, body)
}

// Call sends a request to the node to and waits for its reply, at most timeout
// on the node's monotonic clock (0: wait forever). On timeout it returns
// ErrTimeout: the request may or may not have taken effect. A late reply is
// discarded.
func (p *Proc) Call(to NodeID, req any, timeout time.Duration) (any, error) {
	p.settle()
	n := p.node
	id := n.w.nextMsgID()
	tok := p.newWait()
	p.waitCall, p.gotReply = id, false
	n.w.net.send(&Message{ID: id, From: n.id, To: to, Body: req})
	p.timeoutAfter(timeout, tok)
	p.block()
	p.waitCall = 0
	if p.gotReply {
		p.timer.Stop()
		body := p.reply.Body
		p.reply, p.gotReply = Message{}, false
		return body, nil
	}
	return nil, n.w.timeoutErr(to, timeout)
}

// Recv waits for a message that is not a reply (a notification), at most
// timeout on the node's monotonic clock (0: forever). ok is false on timeout.
func (p *Proc) Recv(timeout time.Duration) (m Message, ok bool) {
	p.settle()
	n := p.node
	if len(n.inbox) == 0 {
		tok := p.newWait()
		p.waitingRecv = true
		p.timeoutAfter(timeout, tok)
		p.block()
		p.waitingRecv = false
	}
	if len(n.inbox) == 0 {
		return Message{}, false
	}
	m = n.inbox[0]
	n.inbox = n.inbox[1:]
	return m, true
}

// Spawn starts another process on the same node (a watchdog, for example).
func (p *Proc) Spawn(name string, body func(p *Proc)) *Proc {
	p.settle()
	return p.node.Spawn(name, body)
}

// Kill stops the process: at once if it is suspended (its deferred calls run,
// and any kernel call they make unwinds), or at its next kernel call if it is
// the one running.
func (p *Proc) Kill() {
	if p.finished {
		return
	}
	p.dead = true
	if p.node.w.running == p {
		return
	}
	w := p.node.w
	prev := w.running
	w.running = p
	p.stop()
	w.running = prev
	p.finished = true
	p.panicked = nil
}

func (n *Node) killProcs() {
	procs := n.procs
	n.procs = nil
	for _, p := range procs {
		p.Kill()
	}
}
