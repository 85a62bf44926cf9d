package sim

import (
	"fmt"
	"slices"
	"time"
)

// Request is one request of Proc.CallAll.
type Request struct {
	To   NodeID
	Body any
}

// Response is the outcome of one request of Proc.CallAll: the reply's body,
// or Err wrapping ErrTimeout when no reply came in time (the request may or may
// not have taken effect).
type Response struct {
	Body any
	Err  error
}

// multiCall is the state of a CallAll in progress. Each process keeps one and
// reuses its slices, so a CallAll allocates only its result.
type multiCall struct {
	ids    []uint64
	bodies []any // the replies' bodies
	got    []bool
	left   int
}

// CallAll sends every request at once, in order, then waits until each has its
// reply or until timeout has passed on the node's monotonic clock (0: wait
// forever). Responses are in the order of reqs. It is the fan-out a client
// makes with one goroutine per server: a pause of the node after the sends and
// before the replies are read delays the reading, not the sending.
func (p *Proc) CallAll(reqs []Request, timeout time.Duration) []Response {
	return p.CallAllInto(reqs, timeout, make([]Response, len(reqs)))
}

// CallAllInto is CallAll writing the responses into out (len(out) must be
// len(reqs)) and returning it: a caller that fans out often reuses one slice.
func (p *Proc) CallAllInto(reqs []Request, timeout time.Duration, out []Response) []Response {
	if len(out) != len(reqs) {
		panic(fmt.Sprintf("sim: CallAllInto: %d responses for %d requests", len(out), len(reqs)))
	}
	p.settle()
	n := p.node
	mc := &p.mc
	mc.ids = slices.Grow(mc.ids[:0], len(reqs))[:len(reqs)]
	mc.bodies = slices.Grow(mc.bodies[:0], len(reqs))[:len(reqs)] // nil: dropped after the last CallAll
	mc.got = append(mc.got[:0], make([]bool, len(reqs))...)
	mc.left = len(reqs)
	for i, r := range reqs {
		mc.ids[i] = n.w.nextMsgID()
		n.w.net.send(&Message{ID: mc.ids[i], From: n.id, To: r.To, Body: r.Body})
	}
	if len(reqs) > 0 {
		tok := p.newWait()
		p.multi = mc
		p.timeoutAfter(timeout, tok)
		p.block()
		p.multi = nil
		p.timer.Stop()
	}
	for i := range reqs {
		if mc.got[i] {
			out[i] = Response{Body: mc.bodies[i]}
			mc.bodies[i] = nil
			continue
		}
		out[i] = Response{Err: n.w.timeoutErr(reqs[i].To, timeout)}
	}
	return out
}

// timeoutError is ErrTimeout for a call to a node: "call to NODE: sim:
// request timed out after TIMEOUT", formatted only when read.
type timeoutError struct {
	to    string
	after time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("call to %s: %v after %v", e.to, ErrTimeout, e.after)
}

func (e *timeoutError) Unwrap() error { return ErrTimeout }

// timeoutErr is the error of a call to node to that timed out after d. The
// errors are immutable, so the world keeps the last one made for each node
// and hands it out again while the timeout is the same: a timeout costs no
// allocation.
func (w *World) timeoutErr(to NodeID, d time.Duration) error {
	if int(to) >= len(w.timeouts) {
		w.timeouts = append(w.timeouts, make([]*timeoutError, int(to)+1-len(w.timeouts))...)
	}
	e := w.timeouts[to]
	if e == nil || e.after != d {
		e = &timeoutError{to: w.nodes[to].name, after: d}
		w.timeouts[to] = e
	}
	return e
}

// takeMultiReply hands m to the process's CallAll in progress if it awaits it,
// waking the process when the last reply is in.
func (p *Proc) takeMultiReply(m *Message) bool {
	mc := p.multi
	if mc == nil || p.finished {
		return false
	}
	for i, id := range mc.ids {
		if id != m.ReplyTo {
			continue
		}
		if !mc.got[i] {
			mc.bodies[i], mc.got[i] = m.Body, true
			mc.left--
			if mc.left == 0 {
				p.wake(p.waitTok)
			}
		}
		return true
	}
	return false
}
