package libmode

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/storage"
)

// world is the kernel of one run, inside the bubble: the simulated
// instances, the storage, every message in flight and the faults. It is
// one goroutine; the clients' goroutines reach it through the network.
//
// Before it delivers each message it waits (synctest.Wait) until every
// other goroutine of the bubble is durably blocked, so a delivery's
// consequences (the client it wakes runs until it blocks again) happen
// before the next delivery: deliveries are serialised, in the order
// (time, link, sequence number), whatever the Go scheduler does. What it
// cannot order: goroutines woken by their own timers at the same instant
// run concurrently.
type world struct {
	cfg   *Config
	start time.Time

	mu      sync.Mutex
	queue   events
	seq     uint64
	wake    chan struct{}
	servers []*server
	conns   int64
	dials   map[string]int // client>server -> dials so far
	paused  map[string]*pause
	cuts    []*cut
	stopped bool
	over    chan struct{} // closed when the run ends
	storeSq map[string]uint64

	holderPauses []*holderPause
	delays       []*delayWindow
	lanes        map[string]int64 // client name -> its lane
	triggers     []*trigger       // armed triggers of anchored faults, in the order they were armed

	cells  storage.Cells
	grants *lockapi.GrantLog
	writes *lockapi.WriteLog
	rec    *recorder

	// progress counts the kernel's steps, for the watchdog outside the bubble.
	progress atomic.Int64
	now      atomic.Int64
}

// event is one thing the kernel does at a time: a delivery or a fault.
type event struct {
	at    time.Duration
	order string // the link or the fault: canonical among events at one instant
	seq   uint64
	run   func()
	// from and to are the endpoints a delivery crosses (empty for a fault):
	// a pause or a cut between them holds or loses it.
	from, to string
	lose     func() // what a lossy cut does instead of run (nil: nothing)
	reject   func() // what a rejecting cut does instead of run (nil: lose)
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	a, b := q[i], q[j]
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order), cmp.Compare(a.seq, b.seq)) < 0
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// pause is a client's pause: its messages (both ways) and its workload's
// steps wait until it ends.
type pause struct {
	until  time.Duration
	resume chan struct{}
	// open is a pause that ends at an event (an end anchor) rather than
	// at a known time: the messages it holds wait in held until it ends.
	open bool
	held []*event
}

// cut is an active partition between clients and servers (names).
type cut struct {
	a, b   []string
	lossy  bool
	reject bool
	until  time.Duration
	healed bool
}

func (w *world) elapsed() time.Duration { return time.Since(w.start) }

// schedule adds e to the queue (w.mu held) and wakes the kernel.
func (w *world) schedule(e *event) {
	if e.to != "" {
		e.at = w.align(e.at, e.to)
	}
	heap.Push(&w.queue, e)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// latency is the link delay of message seq on link, drawn from the seed
// and the message's identity, never from a shared stream (whose order the
// scheduler would decide).
func (w *world) latency(link string, seq uint64) time.Duration {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", w.cfg.Seed, link, seq)
	j := time.Duration(0)
	if w.cfg.Jitter > 0 {
		j = time.Duration(splitmix(h.Sum64()) % uint64(w.cfg.Jitter))
	}
	return w.cfg.Latency + j
}

// laneSpan is the period of the lanes (1 µs, so that a library's timer of
// whole microseconds set in a lane ends in it): every event that wakes a client
// happens at a time whose remainder modulo laneSpan nanoseconds is the
// client's lane (its index + 1), and the workload's own sleeps end there
// too. Goroutines of two clients are then never woken by the clock at the
// same instant, so the Go scheduler cannot interleave them (a library's
// draw from crypto/rand, say): they run one after the other.
const laneSpan = 1000

// lane is the lane of a node: a client's index + 1; 0 for the others.
func (w *world) lane(node string) int64 {
	return w.lanes[node] // 0 for a node that is not a client
}

// align is the first time at or after t in node's lane.
func (w *world) align(t time.Duration, node string) time.Duration {
	l := w.lane(node)
	r := int64(t) % laneSpan
	a := int64(t) - r + l
	if a < int64(t) {
		a += laneSpan
	}
	return time.Duration(a)
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// run is the kernel's loop: until stop, wait for the bubble to settle,
// then do the next due event, or sleep until it is due.
func (w *world) run(stop <-chan struct{}) {
	for {
		synctest.Wait()
		w.progress.Add(1)
		w.now.Store(int64(w.elapsed()))
		w.mu.Lock()
		if len(w.queue) > 0 && w.queue[0].at <= w.elapsed() {
			e := heap.Pop(&w.queue).(*event)
			w.step(e)
			w.mu.Unlock()
			continue
		}
		var due <-chan time.Time
		var t *time.Timer
		if len(w.queue) > 0 {
			t = time.NewTimer(w.queue[0].at - w.elapsed())
			due = t.C
		}
		w.mu.Unlock()
		select {
		case <-stop:
			if t != nil {
				t.Stop()
			}
			return
		case <-w.wake:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// step runs e unless a pause or a cut holds it (then it is put back for
// the fault's end), loses it or rejects it (w.mu held).
func (w *world) step(e *event) {
	if e.from != "" {
		if p := w.openPause(e.from, e.to); p != nil {
			p.held = append(p.held, e)
			return
		}
		switch until, how := w.blocked(e.from, e.to); how {
		case cutHold:
			e.at = until
			w.schedule(e)
			return
		case cutReject:
			if e.reject != nil {
				e.reject()
				return
			}
			fallthrough
		case cutLose:
			if e.lose != nil {
				e.lose()
			}
			return
		}
	}
	e.run()
}

// What a fault does to a message.
const (
	cutNone = iota
	cutHold
	cutLose
	cutReject
)

// blocked says what happens now to a message from a to b: a pause of
// either end holds it (until when), a cut between them holds, loses or
// rejects it.
func (w *world) blocked(a, b string) (until time.Duration, how int) {
	now := w.elapsed()
	for _, n := range []string{a, b} {
		if p := w.paused[n]; p != nil && !p.open && p.until > now {
			until, how = max(until, p.until), cutHold
		}
	}
	for _, c := range w.cuts {
		if c.healed || c.until <= now {
			continue
		}
		if (slices.Contains(c.a, a) && slices.Contains(c.b, b)) || (slices.Contains(c.a, b) && slices.Contains(c.b, a)) {
			switch {
			case c.reject:
				return 0, cutReject
			case c.lossy:
				return 0, cutLose
			}
			until, how = max(until, c.until), cutHold
		}
	}
	return until, how
}

// openPause is the open pause of a or b, if one is on (w.mu held).
func (w *world) openPause(a, b string) *pause {
	for _, n := range []string{a, b} {
		if p := w.paused[n]; p != nil && p.open {
			return p
		}
	}
	return nil
}

// serverAt is the instance listening at a ("redis-1:6379" or "redis-1").
func (w *world) serverAt(a string) *server {
	for _, s := range w.servers {
		if s.addr == a || s.name == a {
			return s
		}
	}
	return nil
}

func (w *world) addrs() []string {
	var out []string
	for _, s := range w.servers {
		out = append(out, s.addr)
	}
	return out
}

// connect opens a connection from client to srv: the answer comes on the
// channel after a round trip (nil: connected).
func (w *world) connect(client string, srv *server) (*conn, chan error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	link := client + ">" + srv.name
	w.dials[link]++
	w.conns++
	c := &conn{w: w, key: fmt.Sprintf("%s#%d", link, w.dials[link]), client: client, srv: srv, id: w.conns,
		notify: make(chan struct{}, 1), done: make(chan struct{})}
	ready := make(chan error, 1)
	if w.stopped {
		ready <- errors.New("the run is over")
		return c, ready
	}
	at := w.elapsed() + w.latency(c.key+"/syn", 0)
	w.seq++
	w.schedule(&event{at: at, order: c.key, seq: 0, from: client, to: srv.name,
		reject: func() {
			ready <- errors.New("connection refused: a rejecting cut between " + client + " and " + srv.name)
		},
		run: func() {
			if srv.down {
				back := w.elapsed() + w.latency(c.key+"/rst", 0)
				w.schedule(&event{at: back, order: c.key, from: srv.name, to: client, run: func() {
					ready <- errors.New("connection refused: " + srv.name + " is down")
				}})
				return
			}
			c.sess = srv.open(c)
			srv.conns = append(srv.conns, c)
			back := w.elapsed() + w.latency(c.key+"/synack", 0)
			c.lastUp, c.lastDown = at, back
			w.schedule(&event{at: back, order: c.key, seq: 0, from: srv.name, to: client, run: func() { ready <- nil }})
		}})
	return c, ready
}

// sendUp carries bytes a client wrote to its instance.
func (w *world) sendUp(c *conn, b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.upSeq++
	seq := c.upSeq
	at := max(w.elapsed()+w.latency(c.key+"/up", seq)+w.delayed(c.client, c.srv.name), c.lastUp)
	c.lastUp = at
	w.schedule(&event{at: at, order: c.key + "/up", seq: seq, from: c.client, to: c.srv.name,
		lose:   func() { c.dead = true },
		reject: func() { c.dead = true; c.resetByServer() },
		run: func() {
			if c.dead {
				return
			}
			c.srv.receive(c, b)
		}})
}

// sendDown carries an instance's replies back to the client (w.mu held).
func (w *world) sendDown(c *conn, b []byte, reset bool) {
	c.downSeq++
	seq := c.downSeq
	at := max(w.elapsed()+w.latency(c.key+"/down", seq)+w.delayed(c.srv.name, c.client), c.lastDown)
	c.lastDown = at
	w.schedule(&event{at: at, order: c.key + "/down", seq: seq, from: c.srv.name, to: c.client,
		lose:   func() { c.dead = true },
		reject: func() { c.dead = true; c.resetByServer() },
		run: func() {
			if c.dead {
				return
			}
			if len(b) > 0 {
				c.deliver(b)
			}
			if reset {
				c.resetByServer()
			}
		}})
}

// callStorage sends a storage request from client and waits for the reply
// (the storage is a node of the network like the instances).
func (w *world) callStorage(client string, req any) (storage.Reply, error) {
	reply := make(chan storage.Reply, 1)
	w.mu.Lock()
	w.storeSq[client]++
	seq := w.storeSq[client]
	link := client + ">storage"
	at := w.elapsed() + w.latency(link+"/req", seq)
	w.schedule(&event{at: at, order: link + "/req", seq: seq, from: client, to: storageName, run: func() {
		r := w.serveStorage(client, req)
		back := w.elapsed() + w.latency(link+"/rep", seq)
		w.schedule(&event{at: back, order: link + "/rep", seq: seq, from: storageName, to: client, run: func() {
			reply <- r
		}})
	}})
	w.mu.Unlock()
	select {
	case r := <-reply:
		return r, nil
	case <-w.over:
		return storage.Reply{}, errRunOver
	}
}

// storageName is the storage node's name.
const storageName = "storage"

// serveStorage applies a request under the fencing rule and records it in
// the servers' record of writes (w.mu held).
func (w *world) serveStorage(client string, req any) storage.Reply {
	now := w.elapsed()
	r := w.cells.Serve(req)
	switch q := req.(type) {
	case storage.ReadReq:
		if !r.Rejected {
			w.writes.Read(storage.Resource, q.Key, client, r.Value, now)
		}
	case storage.WriteReq:
		if !r.Rejected {
			w.seq++
			w.writes.Applied(storage.Resource, storageName, q.Key, client, w.seq, q.Token, q.Value, now, true)
		}
	}
	return r
}

// gate blocks a client's workload while the client is paused.
func (w *world) gate(client string) {
	for {
		w.mu.Lock()
		p := w.paused[client]
		if p == nil || p.until <= w.elapsed() {
			w.mu.Unlock()
			return
		}
		ch := p.resume
		w.mu.Unlock()
		<-ch
	}
}

// delayWindow is an active Delay: messages between a and b sent within
// [from, until) take by more.
type delayWindow struct {
	a, b        []string
	from, until time.Duration
	by          time.Duration
	oneWay      bool // from a to b only
}

// delayed is the extra delay of a message from a to b sent now (w.mu held).
func (w *world) delayed(a, b string) time.Duration {
	now := w.elapsed()
	var d time.Duration
	for _, x := range w.delays {
		if now < x.from || now >= x.until {
			continue
		}
		if (slices.Contains(x.a, a) && slices.Contains(x.b, b)) || (!x.oneWay && slices.Contains(x.a, b) && slices.Contains(x.b, a)) {
			d = max(d, x.by)
		}
	}
	return d
}

// crash stops srv: its connections are reset (each client learns it
// after a link's latency), dials are refused until restart.
func (w *world) crash(srv *server) {
	srv.down = true
	for _, c := range srv.conns {
		if c.dead {
			continue
		}
		c.dead = true
		c.downSeq++
		at := w.elapsed() + w.latency(c.key+"/rst", c.downSeq)
		w.schedule(&event{at: at, order: c.key + "/down", seq: c.downSeq, to: c.client, run: c.resetByServer})
	}
	srv.conns = nil
}
