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
	// Sent is the true time the network took the message (stamped by it).
	Sent time.Duration
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

// CutMode is what a cut link does with the messages on it (see the package
// doc's Network section).
type CutMode uint8

const (
	// CutDrops is datagram semantics, the default: a message sent on a cut
	// link, or in flight on it when it would arrive, is dropped.
	CutDrops CutMode = iota
	// CutHolds is connection semantics, as a TCP connection across an
	// iptables cut behaves: a message sent on a cut link, or in flight on it,
	// is held (in send order, per directed link) and delivered at the heal,
	// one latency later, before anything sent after the heal; unless a
	// message waits longer than the connection timeout, which resets the
	// connection and discards what it held. A message whose sender or
	// receiver crashed meanwhile is discarded too: its connection died with
	// its end.
	CutHolds
)

// String names the mode as the command line does.
func (m CutMode) String() string {
	if m == CutHolds {
		return "hold"
	}
	return "drop"
}

// DefaultConnTimeout is how long a cut may hold a connection's messages
// before the connection resets (CutHolds), when Config.ConnTimeout is zero.
//
// Left to itself, Linux gives up on unacknowledged data only after
// tcp_retries2 = 15 retransmissions, some 15 minutes. The clients and servers
// of lock services give up on a silent connection far sooner, by their own
// timeouts: a ZooKeeper client after two thirds of its session timeout
// without a read (6.7 s for a 10 s session, 40 s for Curator's default 60 s),
// Curator's connection timeout at 15 s, Jedis at its 2 s socket timeout, an
// etcd server when a gRPC keep-alive ping goes 20 s unanswered. 15 s sits in
// that range, at the long end of the cuts Jepsen and the catalog heal within
// (so that what they hold arrives late, the hazard worth reaching), while a
// cut that lasts longer loses what it held as a reset connection does. A
// model whose client drops its connection sooner says so itself.
const DefaultConnTimeout = 15 * time.Second

// Remove disables the rule.
func (r *Rule) Remove() { r.removed = true }

// linkState is what the network knows of one directed link.
type linkState struct {
	lastAt   time.Duration // the latest arrival planned in FIFO order
	override *Link         // SetLink's behaviour; nil: the default
	blocked  bool
	// hold: the current cut holds its messages (CutHolds) rather than drops
	// them; it stays set after the heal until the held messages are drained.
	hold bool
	// draining: a drain of the held messages is planned (the link has
	// healed): a message caught in flight by the cut is held until then.
	draining bool
	// epoch counts the holding cuts and the resets of the link; every
	// delivery is stamped with the epoch it was sent in, so that one caught
	// in flight by a cut is known at its arrival.
	epoch uint32
	// dead: deliveries stamped with an epoch below it belong to a connection
	// that reset, and are dropped.
	dead uint32
	// drainGen names the latest drain planned; an older one does nothing.
	drainGen uint32
	// armed: the reset of the current cut's connection is planned.
	armed bool
	// held are the messages the cut holds, in send order.
	held []heldMsg
	// heldDue is the latest time a held message was due to leave (its send
	// time plus the delay rules added to it).
	heldDue time.Duration
}

// heldMsg is a message a holding cut keeps, with the incarnations of its two
// ends when it was sent (the connection dies with either).
type heldMsg struct {
	msg            Message
	fromInc, toInc uint32
}

// Network carries messages between nodes.
type Network struct {
	w        *World
	def      Link
	table    [][]linkState // [from][to], grown as nodes are used
	blocked  int           // how many links are cut
	draining int           // how many links have a drain planned
	cuts     CutMode
	timeout  time.Duration // the connection timeout of CutHolds; < 0: none
	rules    []*Rule
	rand     pcgRand
	stats    NetStats
}

// NetStats counts messages.
type NetStats struct {
	Sent, Delivered, Dropped, Duplicated uint64
	// Held counts the messages a holding cut kept (CutHolds), Resets the
	// connections a cut reset by outlasting the connection timeout.
	Held   uint64 `json:",omitempty"`
	Resets uint64 `json:",omitempty"`
}

func newNetwork(w *World, def Link, cuts CutMode, timeout time.Duration) *Network {
	net := &Network{
		w:    w,
		def:  def,
		rand: newPCGRand(w.seed, "network"),
	}
	net.SetCuts(cuts, timeout)
	return net
}

// SetCuts chooses what the cuts made from now on do with the messages on
// their links (CutDrops or CutHolds), and the connection timeout of CutHolds:
// 0 means DefaultConnTimeout, a negative timeout never resets. A cut in
// progress keeps the mode it was made with.
func (net *Network) SetCuts(mode CutMode, timeout time.Duration) {
	if timeout == 0 {
		timeout = DefaultConnTimeout
	}
	net.cuts, net.timeout = mode, timeout
}

// Cuts is the mode of the cuts made from now on and the connection timeout
// (negative: none).
func (net *Network) Cuts() (CutMode, time.Duration) { return net.cuts, net.timeout }

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

// Block cuts the directed link from -> to until Unblock or Heal: messages
// sent on it, or in flight on it, are dropped (CutDrops) or held until the
// link heals (CutHolds), as SetCuts chose. Blocking a cut link changes
// nothing.
func (net *Network) Block(from, to *Node) { net.block(from.id, to.id, net.cuts) }

// BlockLossy cuts the directed link from -> to, dropping the messages sent on
// it or in flight on it whatever SetCuts chose: a lossy cut, as a link that
// loses packets for good (or a peer that resets its connections) does.
func (net *Network) BlockLossy(from, to *Node) { net.block(from.id, to.id, CutDrops) }

func (net *Network) block(from, to NodeID, mode CutMode) {
	st := net.state(from, to)
	if st.blocked {
		return
	}
	st.blocked = true
	net.blocked++
	st.hold = mode == CutHolds
	if !st.hold {
		return
	}
	st.epoch++
	st.armed = false
	if len(st.held) > 0 || st.lastAt > net.w.now { // unacknowledged data: held, or in flight
		net.planReset(from, to, st)
	}
}

// planReset plans the reset of the connection from -> to, cut, one
// connection timeout from now, when its oldest unacknowledged message (held,
// or in flight when the cut began) has waited that long. A connection with
// nothing to deliver never resets (TCP times out unacknowledged data only);
// the next message held arms its timeout.
func (net *Network) planReset(from, to NodeID, st *linkState) {
	if net.timeout < 0 || st.armed {
		return
	}
	st.armed = true
	epoch := st.epoch
	net.w.After(net.timeout, func() {
		st := net.state(from, to)
		if !st.blocked || st.epoch != epoch {
			return // healed, or cut again since
		}
		st.armed = false
		if len(st.held) == 0 && st.lastAt <= net.w.now {
			return // nothing was left to deliver
		}
		// The connection resets: what it held is lost, and so is what is
		// still in flight on it. What is sent from now on waits on a new
		// connection, whose first held message arms its timeout.
		net.stats.Resets++
		net.stats.Dropped += uint64(len(st.held))
		clear(st.held)
		st.held = st.held[:0]
		st.heldDue = 0
		st.lastAt = net.w.now // nothing in flight is waited for any more
		st.epoch++
		st.dead = st.epoch
	})
}

// Unblock restores the directed link from -> to; what its cut held is
// delivered one latency later.
func (net *Network) Unblock(from, to *Node) { net.unblock(from.id, to.id) }

func (net *Network) unblock(from, to NodeID) {
	st := net.state(from, to)
	if !st.blocked {
		return
	}
	st.blocked = false
	net.blocked--
	if len(st.held) > 0 || (st.hold && st.lastAt > net.w.now) { // held, or in flight
		net.planDrain(from, to, st)
		return
	}
	st.hold = false  // nothing to deliver
	if st.draining { // planned at an earlier heal, for messages that never came
		st.draining = false
		net.draining--
		st.drainGen++
	}
}

// planDrain plans the delivery of what the healed link from -> to holds: one
// latency after the heal (after the delays its rules added), and after every
// message still in flight on it (which arrives before, and is held in its
// order), so at the latest planned arrival at least. What is sent after the
// heal arrives after it: FIFO.
func (net *Network) planDrain(from, to NodeID, st *linkState) {
	l := net.link(st)
	at := max(net.w.now, st.heldDue) + time.Duration(net.rand.uniform(int64(l.LatencyMin), int64(l.LatencyMax)))
	at = max(at, st.lastAt)
	st.lastAt = at
	if !st.draining {
		st.draining = true
		net.draining++
	}
	st.drainGen++
	gen := st.drainGen
	net.w.schedule(at, net.w.nodes[to], func() { net.drain(from, to, gen) })
}

// drain delivers, in send order, what the link from -> to held, as an event
// of the receiver (a pause defers it, a crash drops it). A message whose ends
// crashed since it was sent is dropped.
func (net *Network) drain(from, to NodeID, gen uint32) {
	st := net.state(from, to)
	if st.drainGen != gen || st.blocked {
		return // a later heal planned another drain, or the link is cut again
	}
	st.draining = false
	net.draining--
	st.hold = false
	held := st.held
	st.held, st.heldDue = nil, 0
	src, dst := net.w.nodes[from], net.w.nodes[to]
	for i := range held {
		h := &held[i]
		if src.down || h.fromInc != src.incarnation || dst.down || h.toInc != dst.incarnation {
			net.stats.Dropped++
			continue
		}
		net.stats.Delivered++
		dst.deliver(&h.msg)
	}
}

// hold keeps m, sent on the holding cut link st or caught in flight by it,
// in send order (message IDs grow with sending), due to leave at due.
func (net *Network) hold(st *linkState, m *Message, due time.Duration) {
	net.stats.Held++
	h := heldMsg{msg: *m, fromInc: net.w.nodes[m.From].incarnation, toInc: net.w.nodes[m.To].incarnation}
	i := len(st.held)
	for i > 0 && st.held[i-1].msg.ID > m.ID {
		i--
	}
	st.held = append(st.held, heldMsg{})
	copy(st.held[i+1:], st.held[i:])
	st.held[i] = h
	st.heldDue = max(st.heldDue, due)
	if st.blocked {
		net.planReset(m.From, m.To, st)
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

// Heal restores every link; what the cuts held is delivered one latency
// later.
func (net *Network) Heal() {
	for from, row := range net.table {
		for to := range row {
			if row[to].blocked {
				net.unblock(NodeID(from), NodeID(to))
			}
		}
	}
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
	m.Sent = net.w.now
	st := net.state(m.From, m.To)
	if st.blocked && !st.hold {
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
	if st.blocked { // a holding cut
		net.hold(st, m, net.w.now+extra)
		if l.Duplicate > 0 && net.rand.float64() < l.Duplicate {
			net.stats.Duplicated++
			net.hold(st, m, net.w.now+extra)
		}
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
	e.gen = st.epoch
}

// arrive is the delivery of m, sent in its link's epoch, to the node to when
// it comes due: dropped if its link has been cut meanwhile by a cut that
// drops; held if by one that holds, or if that cut has healed but its held
// messages, sent before m, are not yet delivered; dropped if its connection
// reset since.
func (net *Network) arrive(to *Node, m *Message, epoch uint32) {
	if net.blocked == 0 && net.draining == 0 && net.stats.Resets == 0 { // no cut, held messages or dead connection
		net.stats.Delivered++
		to.deliver(m)
		return
	}
	st := net.state(m.From, m.To)
	switch {
	case epoch < st.dead:
		net.stats.Dropped++
		return
	case st.blocked && st.hold, st.draining && epoch != st.epoch:
		net.hold(st, m, net.w.now)
		return
	case st.blocked:
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

// Awaited reports whether a process of req's sender still waits for the
// reply to req, a request made by Proc.Call: false when the call timed out
// (its client gave up on it), its process ended or the node crashed.
func (n *Node) Awaited(req Message) bool {
	from := n.w.nodes[req.From]
	for _, p := range from.procs {
		if p.waitCall == req.ID && !p.finished {
			return true
		}
	}
	return false
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
