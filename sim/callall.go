package sim

import (
	"fmt"
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

// multiCall is the state of a CallAll in progress.
type multiCall struct {
	ids     []uint64
	replies []*Message
	left    int
}

// CallAll sends every request at once, in order, then waits until each has its
// reply or until timeout has passed on the node's monotonic clock (0: wait
// forever). Responses are in the order of reqs. It is the fan-out a client
// makes with one goroutine per server: a pause of the node after the sends and
// before the replies are read delays the reading, not the sending.
func (p *Proc) CallAll(reqs []Request, timeout time.Duration) []Response {
	p.settle()
	n := p.node
	mc := &multiCall{ids: make([]uint64, len(reqs)), replies: make([]*Message, len(reqs)), left: len(reqs)}
	for i, r := range reqs {
		mc.ids[i] = n.w.nextMsgID()
		n.w.net.send(Message{ID: mc.ids[i], From: n.id, To: r.To, Body: r.Body})
	}
	if len(reqs) > 0 {
		tok := p.newWait()
		p.multi = mc
		if timeout > 0 {
			p.startTimer(timeout, tok)
		}
		p.block()
		p.multi = nil
		p.timer.Stop()
	}
	out := make([]Response, len(reqs))
	for i, m := range mc.replies {
		if m != nil {
			out[i].Body = m.Body
			continue
		}
		out[i].Err = fmt.Errorf("call to %s: %w after %v", n.w.nodes[reqs[i].To].name, ErrTimeout, timeout)
	}
	return out
}

// takeMultiReply hands m to the process's CallAll in progress if it awaits it,
// waking the process when the last reply is in.
func (p *Proc) takeMultiReply(m Message) bool {
	mc := p.multi
	if mc == nil || p.finished {
		return false
	}
	for i, id := range mc.ids {
		if id != m.ReplyTo {
			continue
		}
		if mc.replies[i] == nil {
			mc.replies[i] = &m
			mc.left--
			if mc.left == 0 {
				p.wake(p.waitTok)
			}
		}
		return true
	}
	return false
}
