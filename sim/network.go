package sim

import "time"

// Message is what travels between nodes. Body is any Go value; the receiver
// must not mutate it if the sender keeps a reference (models send fresh values).
type Message struct {
	// ID is unique in the world; replies name the request they answer in ReplyTo.
	ID      uint64
	ReplyTo uint64
	From    NodeID
	To      NodeID
	Body    any
}

// Link is the behaviour of one directed link. Durations are true time.
type Link struct {
	// LatencyMin and LatencyMax bound the one-way latency, drawn uniformly.
	LatencyMin, LatencyMax time.Duration
	// Loss is the probability that a message is dropped.
	Loss float64
	// Duplicate is the probability that a message is delivered twice.
	Duplicate float64
	// Reorder is the probability that a message is held back by up to
	// ReorderDelay extra, overtaking the FIFO order of the link.
	Reorder      float64
	ReorderDelay time.Duration
}

// DefaultLink is a quiet local network: 0.5–1.5 ms one way, FIFO, no loss.
var DefaultLink = Link{LatencyMin: 500 * time.Microsecond, LatencyMax: 1500 * time.Microsecond}

// Rule delays or drops the messages it matches (per-message delay injection).
// Rules are consulted in the order they were added; every matching rule applies.
type Rule struct {
	// From and To restrict the rule to one sender or receiver; nil matches any.
	From, To *Node
	// Match further restricts the rule to some messages; nil matches all.
	Match func(m Message) bool
	// Delay is added to the latency of a matched message.
	Delay time.Duration
	// Drop discards a matched message.
	Drop bool
	// Count is how many messages the rule applies to before it expires; 0 = no limit.
	Count int
	// Until is the true time at which the rule expires; 0 = never.
	Until time.Duration

	used    int
	removed bool
}

// Remove disables the rule.
func (r *Rule) Remove() { r.removed = true }

// linkState is what the network knows of one directed link.
type linkState struct {
	lastAt   time.Duration // the latest arrival planned in FIFO order
	override *Link         // SetLink's behaviour; nil: the default
	blocked  bool
}

// Network carries messages between nodes.
type Network struct {
	w       *World
	def     Link
	table   [][]linkState // [from][to], grown as nodes are used
	blocked int           // how many links are cut
	rules   []*Rule
	rand    pcgRand
	stats   NetStats
}

// NetStats counts messages.
type NetStats struct {
	Sent, Delivered, Dropped, Duplicated uint64
}

func newNetwork(w *World, def Link) *Network {
	return &Network{
		w:    w,
		def:  def,
		rand: newPCGRand(w.seed, "network"),
	}
}

// Stats returns the message counters.
func (net *Network) Stats() NetStats { return net.stats }

// SetLink overrides the behaviour of the directed link from -> to.
func (net *Network) SetLink(from, to *Node, l Link) { net.state(from.id, to.id).override = &l }

// state is the directed link from -> to.
func (net *Network) state(from, to NodeID) *linkState {
	if int(from) >= len(net.table) {
		net.table = append(net.table, make([][]linkState, int(from)+1-len(net.table))...)
	}
	row := net.table[from]
	if int(to) >= len(row) {
		row = append(row, make([]linkState, int(to)+1-len(row))...)
		net.table[from] = row
	}
	return &row[to]
}

// SetDefaultLink changes the behaviour of every link without an override.
func (net *Network) SetDefaultLink(l Link) { net.def = l }

// Block cuts the directed link from -> to: messages sent on it, or in flight
// on it, are dropped until Unblock.
func (net *Network) Block(from, to *Node) {
	if st := net.state(from.id, to.id); !st.blocked {
		st.blocked = true
		net.blocked++
	}
}

// Unblock restores the directed link from -> to.
func (net *Network) Unblock(from, to *Node) {
	if st := net.state(from.id, to.id); st.blocked {
		st.blocked = false
		net.blocked--
	}
}

// Blocked reports whether the directed link from -> to is cut.
func (net *Network) Blocked(from, to *Node) bool { return net.isBlocked(from.id, to.id) }

func (net *Network) isBlocked(from, to NodeID) bool {
	return net.blocked > 0 && int(from) < len(net.table) && int(to) < len(net.table[from]) && net.table[from][to].blocked
}

// Partition cuts every link between nodes of different groups, in both
// directions. Nodes not named in any group keep their links.
func (net *Network) Partition(groups ...[]*Node) {
	for i, g := range groups {
		for j, h := range groups {
			if i == j {
				continue
			}
			for _, a := range g {
				for _, b := range h {
					net.Block(a, b)
				}
			}
		}
	}
}

// Heal restores every link.
func (net *Network) Heal() {
	for _, row := range net.table {
		for i := range row {
			row[i].blocked = false
		}
	}
	net.blocked = 0
}

// AddRule installs a delay or drop rule and returns it (so it can be removed).
func (net *Network) AddRule(r Rule) *Rule {
	rr := r
	net.rules = append(net.rules, &rr)
	return &rr
}

func (net *Network) link(st *linkState) *Link {
	if st.override != nil {
		return st.override
	}
	return &net.def
}

// send puts m on the wire from its sender. m is copied: the caller's may
// live on its stack.
func (net *Network) send(m *Message) {
	net.stats.Sent++
	st := net.state(m.From, m.To)
	if st.blocked {
		net.stats.Dropped++
		return
	}
	var extra time.Duration
	if len(net.rules) > 0 {
		var drop bool
		if extra, drop = net.applyRules(m); drop {
			net.stats.Dropped++
			return
		}
	}
	l := net.link(st)
	if l.Loss > 0 && net.rand.float64() < l.Loss {
		net.stats.Dropped++
		return
	}
	net.deliverAfter(st, l, m, extra)
	if l.Duplicate > 0 && net.rand.float64() < l.Duplicate {
		net.stats.Duplicated++
		net.deliverAfter(st, l, m, extra)
	}
}

// applyRules applies the rules to m, in order: the delay they add up to, or
// drop when one of them drops it. Rules that can never apply again are
// pruned once they are seen.
func (net *Network) applyRules(m *Message) (extra time.Duration, drop bool) {
	from, to := net.w.nodes[m.From], net.w.nodes[m.To]
	dead := false
	for _, r := range net.rules {
		if !net.live(r) {
			dead = true
			continue
		}
		if (r.From != nil && r.From != from) || (r.To != nil && r.To != to) || (r.Match != nil && !r.Match(*m)) {
			continue
		}
		r.used++
		if r.Drop {
			drop = true
			break
		}
		extra += r.Delay
	}
	if dead {
		net.pruneRules()
	}
	if drop {
		return 0, true
	}
	return extra, false
}

// live reports whether r can still apply: not removed, not used up, not
// expired.
func (net *Network) live(r *Rule) bool {
	return !r.removed && (r.Count == 0 || r.used < r.Count) && (r.Until == 0 || net.w.now < r.Until)
}

// pruneRules drops the rules that can never apply again (removed, used up,
// expired), keeping the others in order.
func (net *Network) pruneRules() {
	live := net.rules[:0]
	for _, r := range net.rules {
		if net.live(r) {
			live = append(live, r)
		}
	}
	clear(net.rules[len(live):])
	net.rules = live
}

func (net *Network) deliverAfter(st *linkState, l *Link, m *Message, extra time.Duration) {
	at := net.w.now + time.Duration(net.rand.uniform(int64(l.LatencyMin), int64(l.LatencyMax))) + extra
	reordered := l.Reorder > 0 && net.rand.float64() < l.Reorder
	if reordered {
		at += time.Duration(net.rand.uniform(0, int64(l.ReorderDelay)))
	} else if last := st.lastAt; at < last {
		at = last // FIFO: never overtake an earlier message on the same link
	}
	if !reordered {
		st.lastAt = at
	}
	e := net.w.newEvent(at, kindDeliver, net.w.nodes[m.To])
	e.msg = *m
}

// arrive is the delivery of m to the node to when it comes due: dropped if its
// link has been cut meanwhile.
func (net *Network) arrive(to *Node, m *Message) {
	if net.isBlocked(m.From, m.To) {
		net.stats.Dropped++
		return
	}
	net.stats.Delivered++
	to.deliver(m)
}

// Send sends body from n to the node to. It returns the message's ID.
func (n *Node) Send(to NodeID, body any) uint64 {
	id := n.w.nextMsgID()
	n.w.net.send(&Message{ID: id, From: n.id, To: to, Body: body})
	return id
}

// Reply answers the request req with body.
func (n *Node) Reply(req Message, body any) {
	n.w.net.send(&Message{ID: n.w.nextMsgID(), ReplyTo: req.ID, From: n.id, To: req.From, Body: body})
}

// deliver hands a message that arrived to the process awaiting it, the handler,
// or the node's inbox. m is the event's, valid while it runs.
func (n *Node) deliver(m *Message) {
	if m.ReplyTo != 0 {
		for _, p := range n.procs {
			if p.waitCall == m.ReplyTo && !p.finished {
				p.waitCall = 0
				p.reply = *m
				p.gotReply = true
				p.wake(p.waitTok)
				return
			}
			if p.takeMultiReply(m) {
				return
			}
		}
		return // a late reply nobody waits for any more
	}
	if n.handler != nil {
		n.handler.Receive(n, *m)
		return
	}
	n.enqueue(*m)
}

// enqueue puts a notification in the node's inbox and wakes a process waiting
// in Recv.
func (n *Node) enqueue(m Message) {
	n.inbox = append(n.inbox, m)
	for _, p := range n.procs {
		if p.waitingRecv && !p.finished {
			p.waitingRecv = false
			p.wake(p.waitTok)
			return
		}
	}
}
