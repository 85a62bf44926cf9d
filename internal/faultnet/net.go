// Package faultnet is the real-time stand-in for the simulator's network and
// nodes in live mode: named nodes (servers, clients, the storage) that can be
// paused and resumed, whose wall clocks carry offsets that jump, and directed
// links between them that can be cut, delayed and made to drop messages.
// A link is FIFO, as the simulator's links are by default and as a TCP
// connection is: a message never arrives before one sent earlier on the same
// link, so a message held by a delay holds every later message behind it.
//
// Every live component routes its messages through one Net: the raft
// transport of backends/raftkv/live, the clients' requests to the raft nodes
// and to the storage. Everything runs in real time, on goroutines; Close
// releases every goroutine the Net holds (paused nodes, delayed messages,
// blackholed requests), so a stopped run leaves nothing behind.
//
// This package is live-only: nothing simulated imports it.
package faultnet

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by waits that the Net's Close interrupted.
var ErrClosed = errors.New("faultnet: closed")

// ErrDropped means a message was lost on a cut link (or by a drop rule).
var ErrDropped = errors.New("faultnet: message dropped")

// ErrTimeout means a call got no answer in time: the request may or may not
// have been served.
var ErrTimeout = errors.New("faultnet: no answer in time")

// Net is the live network: nodes, their pauses and clock offsets, and the
// faults on the links between them. It is safe for concurrent use.
type Net struct {
	start time.Time
	done  chan struct{}

	mu      sync.Mutex
	closed  bool
	nodes   map[string]*node
	blocked map[[2]string]int
	// tails are, by link, closed when the latest message sent on the link
	// has arrived (absent: none on its way): the next one waits for it.
	tails map[[2]string]chan struct{}
	rules []*Rule
	stats Stats
	// holds are, by node, how long a cut of a link to or from it holds a
	// message before the connection resets (HoldCuts); heals are, by cut
	// link, closed when it heals.
	holds map[string]time.Duration
	heals map[[2]string]chan struct{}
}

type node struct {
	paused  int
	resumed chan struct{} // closed when the pause ends
	offset  time.Duration // wall-clock offset from the machine's clock
}

// Stats counts what the Net carried.
type Stats struct {
	Delivered int `json:"delivered"`
	Dropped   int `json:"dropped"`
	Delayed   int `json:"delayed"`
	// Held counts the messages a cut held until its heal (HoldCuts).
	Held int `json:"held,omitempty"`
}

// Rule delays (or drops) messages From -> To whose type name matches Match
// ("" matches any), at most Count of them (0: no limit), until Until (zero:
// no end).
type Rule struct {
	From, To string
	Match    string
	Delay    time.Duration
	Drop     bool
	Count    int
	Until    time.Time
	matched  int
}

// New returns a Net whose true time starts now.
func New() *Net {
	return &Net{start: time.Now(), done: make(chan struct{}), nodes: map[string]*node{}, blocked: map[[2]string]int{},
		tails: map[[2]string]chan struct{}{}, holds: map[string]time.Duration{}, heals: map[[2]string]chan struct{}{}}
}

// HoldCuts gives the links to and from node connection semantics, as the
// simulator's cuts have by default (sim.CutHolds): a message sent on a cut
// link, or arriving at one, waits for the heal and is then delivered, in
// the link's order, before anything sent after the heal; one that has waited
// longer than timeout is lost (the connection reset), and the messages
// behind it wait in their turn. Without it a cut drops what it catches.
func (n *Net) HoldCuts(node string, timeout time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.holds[node] = timeout
}

// holdFor is how long a cut of link k holds a message (0: it drops it).
func (n *Net) holdFor(k [2]string) time.Duration {
	return max(n.holds[k[0]], n.holds[k[1]])
}

// waitHeal holds a message of link k, sent at sent, while the link is cut
// and holds (HoldCuts): nil once it healed, ErrDropped when the message
// waited longer than the link's timeout, ErrClosed when the Net closed.
func (n *Net) waitHeal(k [2]string, sent time.Time) error {
	counted := false
	for {
		n.mu.Lock()
		if n.closed {
			n.mu.Unlock()
			return ErrClosed
		}
		hold := n.holdFor(k)
		if n.blocked[k] == 0 || hold == 0 {
			n.mu.Unlock()
			return nil
		}
		left := hold - time.Since(sent)
		if left <= 0 {
			n.stats.Dropped++
			n.stats.Delivered--
			n.mu.Unlock()
			return ErrDropped
		}
		if !counted {
			n.stats.Held++
			counted = true
		}
		ch := n.heals[k]
		if ch == nil {
			ch = make(chan struct{})
			n.heals[k] = ch
		}
		n.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		case <-n.done:
		}
		t.Stop()
	}
}

// Done is closed when the Net is closed.
func (n *Net) Done() <-chan struct{} { return n.done }

// Close ends every wait on the Net: paused nodes run again, sleeping
// messages are dropped. It is idempotent.
func (n *Net) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.closed = true
	close(n.done)
}

// Now is the true time: the machine's monotonic clock since New.
func (n *Net) Now() time.Duration { return time.Since(n.start) }

// Start is the machine time at which true time 0 was.
func (n *Net) Start() time.Time { return n.start }

func (n *Net) node(name string) *node {
	x := n.nodes[name]
	if x == nil {
		x = &node{}
		n.nodes[name] = x
	}
	return x
}

// Wall is node's wall clock in Unix nanoseconds: the machine's plus the
// node's offset.
func (n *Net) Wall(name string) time.Duration {
	n.mu.Lock()
	off := n.node(name).offset
	n.mu.Unlock()
	return time.Duration(time.Now().UnixNano()) + off
}

// JumpClock moves node's wall clock by d (negative: backwards).
func (n *Net) JumpClock(name string, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.node(name).offset += d
}

// Pause stops node: its goroutines block at their next gate, messages to and
// from it wait. Pauses nest.
func (n *Net) Pause(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	x := n.node(name)
	if x.paused == 0 {
		x.resumed = make(chan struct{})
	}
	x.paused++
}

// Resume ends one Pause of node.
func (n *Net) Resume(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	x := n.node(name)
	if x.paused == 0 {
		return
	}
	if x.paused--; x.paused == 0 {
		close(x.resumed)
	}
}

// Paused reports whether node is paused.
func (n *Net) Paused(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.node(name).paused > 0
}

// Gate blocks while node is paused. ErrClosed: the Net closed meanwhile.
func (n *Net) Gate(name string) error {
	for {
		n.mu.Lock()
		x := n.node(name)
		if x.paused == 0 || n.closed {
			closed := n.closed
			n.mu.Unlock()
			if closed {
				return ErrClosed
			}
			return nil
		}
		ch := x.resumed
		n.mu.Unlock()
		select {
		case <-ch:
		case <-n.done:
			return ErrClosed
		}
	}
}

// Sleep waits d, or until the Net closes (ErrClosed).
func (n *Net) Sleep(d time.Duration) error {
	if d <= 0 {
		return n.err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-n.done:
		return ErrClosed
	}
}

func (n *Net) err() error {
	select {
	case <-n.done:
		return ErrClosed
	default:
		return nil
	}
}

// Block cuts the directed link from -> to (cuts nest).
func (n *Net) Block(from, to string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.blocked[[2]string{from, to}]++
}

// Unblock ends one Block of from -> to.
func (n *Net) Unblock(from, to string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [2]string{from, to}
	if n.blocked[k]--; n.blocked[k] <= 0 {
		delete(n.blocked, k)
		if ch := n.heals[k]; ch != nil {
			close(ch)
			delete(n.heals, k)
		}
	}
}

// Blocked reports whether from -> to is cut.
func (n *Net) Blocked(from, to string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.blocked[[2]string{from, to}] > 0
}

// AddRule installs a delay or drop rule and returns it (see Rule.Matched).
func (n *Net) AddRule(r Rule) *Rule {
	n.mu.Lock()
	defer n.mu.Unlock()
	rp := &r
	n.rules = append(n.rules, rp)
	return rp
}

// Matched is how many messages the rule delayed or dropped.
func (n *Net) Matched(r *Rule) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return r.matched
}

// Stats returns what the Net carried so far.
func (n *Net) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// TypeName is the name a rule's Match compares with: the Go type of msg
// ("storage.WriteReq", "*raft.AppendEntriesRequest").
func TypeName(msg any) string { return fmt.Sprintf("%T", msg) }

// fate decides what happens to one message from -> to: dropped (a cut link
// or a drop rule), or delivered after a delay and after the message sent on
// the link before it (prev, nil: none on its way); mine is closed when this
// one has arrived.
func (n *Net) fate(from, to string, msg any) (delay time.Duration, prev, mine chan struct{}, drop bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [2]string{from, to}
	if n.closed || (n.blocked[k] > 0 && n.holdFor(k) == 0) {
		n.stats.Dropped++
		return 0, nil, nil, true
	}
	name := ""
	now := time.Now()
	for _, r := range n.rules {
		if r.From != from || r.To != to || (r.Count > 0 && r.matched >= r.Count) || (!r.Until.IsZero() && now.After(r.Until)) {
			continue
		}
		if r.Match != "" {
			if name == "" {
				name = TypeName(msg)
			}
			if r.Match != name {
				continue
			}
		}
		r.matched++
		if r.Drop {
			n.stats.Dropped++
			return 0, nil, nil, true
		}
		delay += r.Delay
	}
	if delay > 0 {
		n.stats.Delayed++
	}
	n.stats.Delivered++
	prev, mine = n.tails[k], make(chan struct{})
	n.tails[k] = mine
	return delay, prev, mine, false
}

// arrived marks the message mine of link k as arrived: the next message on
// the link may arrive.
func (n *Net) arrived(k [2]string, mine chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(mine)
	if n.tails[k] == mine {
		delete(n.tails, k)
	}
}

// deliver carries one message from -> to and returns once it has arrived:
// after its delay, after every message sent on the link before it, and
// while the receiver is not paused. Until release is called, the next
// message on the link waits behind it (a receiver that serves a link's
// messages in order releases it when it has served this one).
func (n *Net) deliver(from, to string, msg any) (release func(), err error) {
	sent := time.Now()
	delay, prev, mine, drop := n.fate(from, to, msg)
	if drop {
		return nil, ErrDropped
	}
	k := [2]string{from, to}
	var once sync.Once
	release = func() { once.Do(func() { n.arrived(k, mine) }) }
	if err := n.Sleep(delay); err != nil {
		release()
		return nil, err
	}
	if prev != nil {
		select {
		case <-prev:
		case <-n.done:
			release()
			return nil, ErrClosed
		}
	}
	if err := n.waitHeal(k, sent); err != nil {
		release()
		return nil, err
	}
	if err := n.Gate(to); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// Send carries one message from -> to: it returns ErrDropped if the link is
// cut (or a rule drops it), otherwise it waits out the message's delay, the
// messages sent on the link before it (FIFO) and while the receiver is
// paused (the message queues), then returns nil: the message has arrived.
func (n *Net) Send(from, to string, msg any) error {
	release, err := n.deliver(from, to, msg)
	if err != nil {
		return err
	}
	release()
	return nil
}

// Call sends req from -> to, serves it with serve at the receiver, and
// carries the reply back, within timeout. A lost request or reply, or one
// that takes longer, gives ErrTimeout: the caller cannot know whether serve
// ran. serve may still run after Call returned (a message delayed past the
// caller's patience lands later, as on a real network); it never runs after
// the Net closed. The requests of a link arrive in the order sent, and are
// served concurrently: serve may block (a raft node answers once the
// command commits).
func Call[T any](n *Net, from, to string, req any, timeout time.Duration, serve func() T) (T, error) {
	return call(n, from, to, req, timeout, false, func(Delivery) T { return serve() })
}

// Delivery is how a request of CallDelivered reached its receiver, in true
// time (Now): when it was sent, when it arrived, and whether its caller had
// already stopped waiting for the answer (it timed out). An abandoned
// request still takes effect, and its caller never learns that it did: a
// write that lands so late is one a history can only record as of unknown
// outcome.
type Delivery struct {
	Sent, Arrived time.Duration
	Abandoned     bool
}

// CallDelivered is Call to a receiver that serves the requests of a link one
// at a time, in the order sent, as a server reading one connection does (the
// storage): the next request of the link waits until serve has returned, so
// serve must not block. serve is told how the request was delivered, so that
// the receiver can keep a record of the requests that landed after their
// caller gave up on them.
func CallDelivered[T any](n *Net, from, to string, req any, timeout time.Duration, serve func(Delivery) T) (T, error) {
	return call(n, from, to, req, timeout, true, serve)
}

func call[T any](n *Net, from, to string, req any, timeout time.Duration, inOrder bool, serve func(Delivery) T) (T, error) {
	type answer struct{ v T }
	ch := make(chan answer, 1)
	var abandoned atomic.Bool
	sent := n.Now()
	go func() {
		release, err := n.deliver(from, to, req)
		if err != nil {
			return
		}
		if !inOrder {
			release()
		}
		v := serve(Delivery{Sent: sent, Arrived: n.Now(), Abandoned: abandoned.Load()})
		release()
		if n.Send(to, from, v) != nil {
			return
		}
		ch <- answer{v}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var zero T
	select {
	case a := <-ch:
		return a.v, nil
	case <-t.C:
		abandoned.Store(true)
		return zero, ErrTimeout
	case <-n.done:
		abandoned.Store(true)
		return zero, ErrClosed
	}
}
