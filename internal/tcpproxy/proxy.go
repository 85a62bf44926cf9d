// Package tcpproxy puts a TCP proxy on one link between two live
// processes (a client and a server, a replica and its primary, two members
// of a cluster), so that live mode can cut and heal that link like the
// simulator's network partitions.
//
// A Proxy listens on a free 127.0.0.1 port and forwards every connection to
// its target. Block cuts the link in one of two ways:
//
//   - Hang: nothing passes in either direction, and nothing is lost: bytes,
//     new connections and even a close wait in the proxy until Heal (a
//     partition whose packets are held; TCP retransmits, so the peers see
//     silence, then everything at once).
//   - Reset: every connection is closed with a TCP reset and new ones are
//     refused (a partition that the peers notice at once).
//
// Delay holds each chunk of bytes of one direction or both for a while
// before it goes on (a delay fault: the bytes keep their order, each waits
// until it is that old).
//
// Only loopback targets are accepted: live mode never leaves the machine.
//
// This package is live-only: nothing simulated imports it.
package tcpproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Mode is how a blocked Proxy treats its link.
type Mode int

// The ways to cut a link.
const (
	// Open forwards everything (the state after Heal).
	Open Mode = iota
	// Hang holds every byte, connection and close until Heal.
	Hang
	// Reset closes every connection with a reset and refuses new ones.
	Reset
)

func (m Mode) String() string {
	switch m {
	case Open:
		return "open"
	case Hang:
		return "hang"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Stats counts what a Proxy carried.
type Stats struct {
	Conns   int   `json:"conns"`   // connections accepted
	Refused int   `json:"refused"` // connections reset or refused while blocked
	Bytes   int64 `json:"bytes"`   // bytes forwarded, both directions
}

// Proxy forwards connections from its own address to a target. It is safe
// for concurrent use.
type Proxy struct {
	name   string
	target string
	l      *Listener

	mu     sync.Mutex
	mode   Mode
	healed chan struct{} // closed on Heal; replaced on every Block(Hang)
	conns  map[*link]struct{}
	closed bool
	stats  Stats
	// toTarget and fromTarget delay what the dialler sends and what the
	// target sends back, until until (zero: for ever).
	toTarget, fromTarget time.Duration
	until                time.Time
}

type link struct {
	client, server *net.TCPConn
}

// New starts a Proxy named name (for errors) that forwards 127.0.0.1:<a
// free port> to target, a loopback host:port.
func New(name, target string) (*Proxy, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: target %q: %w", name, target, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("proxy %s: target %q is not a loopback address (live mode stays on 127.0.0.1)", name, target)
	}
	p := &Proxy{name: name, target: target, healed: closedChan(), conns: map[*link]struct{}{}}
	if p.l, err = Listen("proxy " + name); err != nil {
		return nil, err
	}
	p.l.Serve(p.admit)
	return p, nil
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Name is the Proxy's name.
func (p *Proxy) Name() string { return p.name }

// Addr is the address to dial instead of the target.
func (p *Proxy) Addr() string { return p.l.Addr() }

// Port is Addr's port.
func (p *Proxy) Port() int { return p.l.Port() }

// Target is the address the Proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Mode is the Proxy's current state.
func (p *Proxy) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Stats returns what the Proxy carried so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Block cuts the link: Hang holds everything until Heal, Reset resets
// every connection and refuses new ones. Block(Open) is Heal.
func (p *Proxy) Block(m Mode) {
	if m == Open {
		p.Heal()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == Open {
		p.healed = make(chan struct{})
	}
	p.mode = m
	if m == Reset {
		for l := range p.conns {
			l.reset()
		}
		// Anything waiting for a heal gives up: its connection is gone.
		close(p.healed)
		p.healed = make(chan struct{})
	}
}

// Heal restores the link: held bytes, connections and closes go through.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != Open {
		p.mode = Open
		close(p.healed)
	}
}

// Delay holds what the dialler sends toTarget, and what the target sends
// back fromTarget, before passing it on, until until (zero: until the next
// Delay); a zero duration leaves that direction as it is. Bytes read from
// then on are delayed, in order.
func (p *Proxy) Delay(toTarget, fromTarget time.Duration, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if toTarget > 0 {
		p.toTarget = toTarget
	}
	if fromTarget > 0 {
		p.fromTarget = fromTarget
	}
	p.until = until
}

// lag is the delay of the bytes read now in one direction.
func (p *Proxy) lag(toTarget bool) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.until.IsZero() && time.Now().After(p.until) {
		return 0
	}
	if toTarget {
		return p.toTarget
	}
	return p.fromTarget
}

// Close stops the Proxy and closes every connection through it.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true // admit refuses from now on
	for l := range p.conns {
		l.client.Close()
		if l.server != nil {
			l.server.Close()
		}
	}
	if p.mode != Open {
		close(p.healed) // release the waiters; their connections are closed
		p.mode = Open
	}
	p.mu.Unlock()
	p.l.Close()
}

// gate waits while the link hangs. It reports false if the connection
// must end instead (reset, or the Proxy closed).
func (p *Proxy) gate() bool {
	for {
		p.mu.Lock()
		mode, healed, closed := p.mode, p.healed, p.closed
		p.mu.Unlock()
		switch {
		case closed || mode == Reset:
			return false
		case mode == Open:
			return true
		}
		<-healed
	}
}

// admit takes a connection the Listener accepted: it is reset while the
// link is reset or the Proxy closed, else served.
func (p *Proxy) admit(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.Conns++
	if p.closed || p.mode == Reset {
		p.stats.Refused++
		resetConn(c.(*net.TCPConn))
		return
	}
	l := &link{client: c.(*net.TCPConn)}
	p.conns[l] = struct{}{}
	p.l.Go(func() { p.serve(l) })
}

func (p *Proxy) serve(l *link) {
	defer p.forget(l)
	if !p.gate() { // a hanging link holds a new connection before it is dialled through
		l.reset()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		l.reset()
		return
	}
	p.mu.Lock()
	if p.closed || p.mode == Reset {
		p.mu.Unlock()
		s.Close()
		l.reset()
		return
	}
	l.server = s.(*net.TCPConn)
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(l.server, l.client, l, true) }()
	go func() { defer wg.Done(); p.pipe(l.client, l.server, l, false) }()
	wg.Wait()
	l.client.Close()
	l.server.Close()
}

// chunk is bytes read at a time, to be written at at.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst through the gate, each chunk delayed by the
// direction's lag when it was read (toTarget: from the dialler to the
// target); a close of src is passed on (as a half-close) only when the gate
// is open too. A reader and a writer share the work, so that a delay holds
// bytes without stopping the reading of the next ones.
func (p *Proxy) pipe(dst, src *net.TCPConn, l *link, toTarget bool) {
	q := make(chan chunk, 1024)
	var eof bool // set before q is closed: src ended cleanly
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if d := time.Until(c.at); d > 0 {
				time.Sleep(d)
			}
			if !p.gate() {
				l.reset()
				continue // drain: the reader ends on the reset
			}
			if _, werr := dst.Write(c.b); werr != nil {
				l.reset()
				continue
			}
			p.mu.Lock()
			p.stats.Bytes += int64(len(c.b))
			p.mu.Unlock()
		}
		if !p.gate() || !eof {
			l.reset()
			return
		}
		_ = dst.CloseWrite()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now().Add(p.lag(toTarget))}
		}
		if err != nil {
			eof = errors.Is(err, io.EOF)
			break
		}
	}
	close(q)
	<-done
}

func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
}

// reset closes both sides of a link with a TCP reset.
func (l *link) reset() {
	resetConn(l.client)
	if l.server != nil {
		resetConn(l.server)
	}
}

func resetConn(c *net.TCPConn) {
	_ = c.SetLinger(0)
	_ = c.Close()
}
